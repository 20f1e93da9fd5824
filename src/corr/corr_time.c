/* corr_time.c — timescales (see corr_private.h): what each capture
 * interface's stamps are on (TAI or UTC, said by the file, by the user or
 * assumed), how they are brought to the common timescale, and how they are
 * looked up in the journals, which keep UTC.
 */
#include <stdio.h>
#include <string.h>

#include "base/nstime.h"
#include "files/capset.h"
#include "stamp/ts.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"

/* TAI - UTC (base/nstime.h) is assumed for journal lookups of TAI stamps
 * when nobody told us the offset (a second off in the lookup matters
 * little; a warning says it was assumed). */
#define CORR_TAI_UTC_GUESS TAI_UTC_S
#define CORR_IFACE_FREE (~0u)	/* a slot a closed file's interface left */

const char *corr_scale_name(int scale)
{
	return scale == TS_SCALE_TAI ? "tai" : scale == TS_SCALE_UTC ? "utc" :
	       "unknown";
}

struct corr_iface *corr_iface_find(struct corr_host *h, unsigned file,
				   unsigned id)
{
	if (h->last_if && h->last_if->file == file && h->last_if->id == id)
		return h->last_if;
	for (unsigned i = 0; i < h->nifs; i++)
		if (h->ifs[i].file == file && h->ifs[i].id == id)
			return h->last_if = &h->ifs[i];
	return NULL;
}

struct corr_iface *corr_iface(struct corr *c, struct corr_host *h,
			      unsigned file, unsigned id, int tap_scale)
{
	const struct cap_reader *r;
	const struct cap_iface *ci;
	struct corr_iface *f = corr_iface_find(h, file, id);
	int scale;

	if (f)
		return f;
	for (unsigned i = 0; i < h->nifs && !f; i++)
		if (h->ifs[i].file == CORR_IFACE_FREE)
			f = &h->ifs[i];
	if (!f) {
		if (h->nifs == h->cap_ifs) {
			h->cap_ifs = h->cap_ifs ? h->cap_ifs * 2 : 8;
			h->ifs = xrealloc(h->ifs, h->cap_ifs * sizeof(*h->ifs));
		}
		f = &h->ifs[h->nifs++];
	}
	memset(f, 0, sizeof(*f));
	f->file = file;
	f->id = id;
	r = capset_reader(h->cs, file);
	ci = r ? cap_iface(r, id) : NULL;
	f->linktype = ci ? ci->linktype : 0;
	f->resolution_ns = ci && ci->resolution_ns > 1 ? ci->resolution_ns : 1;
	f->sender = ci && ci->sender;
	f->hw = ci && ci->src_known && ci->src.hw;
	if (ci && ci->name[0])
		snprintf(f->name, sizeof(f->name), "%s", ci->name);
	else
		snprintf(f->name, sizeof(f->name), "if%u", id);
	snprintf(f->clock, sizeof(f->clock), "sys");
	if (ci && ci->src_known && ci->src.hw && ci->src.phc >= 0)
		snprintf(f->clock, sizeof(f->clock), "phc%d", ci->src.phc);
	if (h->forced_scale >= 0) {
		scale = h->forced_scale;
	} else if (tap_scale == TS_SCALE_UTC || tap_scale == TS_SCALE_TAI) {
		/* The tap's stamp says (an Arista 7280's header). */
		scale = tap_scale;
	} else if (ci && ci->src_known && (ci->src.timescale == TS_SCALE_UTC ||
					   ci->src.timescale == TS_SCALE_TAI)) {
		scale = ci->src.timescale;
	} else if (ci && ci->src_known && ci->src.timescale == TS_SCALE_PHC) {
		/* Raw PHC time: under ptp4l that is TAI. */
		scale = TS_SCALE_TAI;
		f->assumed = true;
	} else {
		/* Another tool's capture: system time, most likely. */
		scale = TS_SCALE_UTC;
		f->assumed = true;
	}
	f->scale = scale;
	if (!c->target_scale)
		c->target_scale = c->utc_known || c->cfg.utc_target ?
				  TS_SCALE_UTC : scale;
	f->usable = true;
	if (scale == c->target_scale) {
		f->delta_ns = 0;
	} else if (c->utc_known) {
		/* Only TAI → UTC arises: the target is UTC when the offset
		 * is known. */
		f->delta_ns = -(int64_t)c->utc_offset * NS_PER_S;
	} else if (c->cfg.utc_target) {
		/* Records must all be on UTC, whatever each host's files
		 * say: the usual offset, said once. */
		f->delta_ns = -(int64_t)CORR_TAI_UTC_GUESS * NS_PER_S;
		if (!c->tai_guessed)
			corr_warn(c, "stamps are TAI and no UTC offset is known: "
				  "brought to UTC with TAI - UTC = %d s assumed "
				  "(--utc-offset or --sync to set it)",
				  CORR_TAI_UTC_GUESS);
		c->tai_guessed = true;
	} else {
		f->usable = false;
		corr_warn(c, "%s: %s, interface %u: stamps are %s but earlier "
			  "ones were %s, and no UTC offset is known (give "
			  "--utc-offset or a sync journal that records it): "
			  "its packets are not compared", h->name,
			  r ? cap_path(r) : "?", id, corr_scale_name(scale),
			  corr_scale_name(c->target_scale));
	}
	/* Journals keep UTC; common-timescale stamps on TAI are looked up
	 * with the offset (guessed, and said so, when nobody gave it). */
	if (c->target_scale == TS_SCALE_TAI)
		f->journal_ns = -(int64_t)(c->utc_known ? c->utc_offset :
					   CORR_TAI_UTC_GUESS) * NS_PER_S;
	if (f->assumed && h->forced_scale < 0)
		corr_warn(c, "%s: %s, interface %u does not say which timescale "
			  "its stamps are on: taken as %s (--timescale %s=... "
			  "to set it)", h->name, r ? cap_path(r) : "?", id,
			  corr_scale_name(scale), h->name);
	return h->last_if = f;
}

void corr_iface_retire(struct corr_host *h, unsigned file)
{
	for (unsigned i = 0; i < h->nifs; i++)
		if (h->ifs[i].file < file)
			h->ifs[i].file = CORR_IFACE_FREE;
	h->last_if = NULL;
}

/* Journals read with the guessed offset: said once, after the run. */
void corr_time_warn(struct corr *c)
{
	for (unsigned i = 0; i < c->nhosts; i++)
		if (c->hosts[i]->bound && c->target_scale == TS_SCALE_TAI &&
		    !c->utc_known) {
			corr_warn(c, "stamps are TAI and no UTC offset is known: "
				  "sync journals (UTC) were read with TAI - UTC "
				  "= %d s assumed (--utc-offset to set it)",
				  CORR_TAI_UTC_GUESS);
			break;
		}
}
