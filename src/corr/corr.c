/* corr.c — see corr.h. The correlator's life (configuration, hosts,
 * journals, the end) and its run loop; the rest is in the files named
 * below, their shared insides in corr_private.h.
 *
 * The pieces, in the order a packet meets them:
 * - hosts: each a capset (its files merged in time order) whose next
 *   packet waits, stamp already on the common timescale (corr_time.c);
 *   the host with the earliest one goes next.
 * - streams: per (host, direction, flow) a fixstream (corr_flow.c); its
 *   messages come back through corr_on_msg() with the stamps of their
 *   first/last bytes.
 * - transactions: per host, the triggers (market data, fills, orders) of
 *   the FTTC rules, kept in small rings per symbol and a table of orders
 *   (corr_txn.c).
 * - matching: messages waiting for their peers at other hosts, in a ring
 *   of entries in creation order (so expiry is from the head) indexed by
 *   two hash chains (flow + sequence; FIX session keys) (corr_match.c).
 * - samples: each hop, switch and transaction figure found goes to the
 *   run's sinks (corr_emit(), corr_private.h): the results printed at the
 *   end, histograms per hop, per flow, per transaction and per switch
 *   (corr_stats.c, printed by corr_print.c); the samples file; export's
 *   callback; following, the live view (corr_live.c).
 */
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/bound.h"
#include "files/calib.h"
#include "files/capset.h"
#include "fix/fix.h"
#include "fix/fixstream.h"
#include "files/frame.h"
#include "files/topo.h"
#include "stamp/ts.h"
#include "base/nstime.h"
#include "base/ratelist.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"
#include "corr/corr_traffic.h"

#define CORR_JUMP_NS 1000000000LL	/* a step back this big is a jump */

void corr_warn(struct corr *c, const char *fmt, ...)
{
	char buf[768];
	va_list ap;

	if (c->nwarn == CORR_MAX_WARNINGS) {
		c->warn_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	c->warn[c->nwarn++] = xstrdup(buf);
}

/* ---- configuration and hosts ---- */

void corr_config_init(struct corr_config *cfg)
{
	struct ratelist fttc;

	memset(cfg, 0, sizeof(*cfg));
	cfg->window_ns = 1000000000LL;
	cfg->hold_ns = 200000000LL;
	ratelist_fttc(&fttc);
	cfg->nrates = fttc.n;
	memcpy(cfg->rates, fttc.rate, fttc.n * sizeof(fttc.rate[0]));
	cfg->sync_max_age_ns = 3000000000LL;
	cfg->max_pending = 1u << 18;
	cfg->flow_series = CORR_FLOW_SERIES;
}

_Static_assert(CORR_TRAFFIC_HOSTS >= CORR_MAX_HOSTS,
	       "the traffic check has room for every host");

int corr_create(struct corr **out, const struct corr_config *cfg)
{
	struct corr *c;
	uint32_t cap = 1024;

	*out = NULL;
	if (cfg->window_ns <= 0 || cfg->max_pending < 16 || !cfg->nrates)
		return -EINVAL;
	c = xcalloc(1, sizeof(*c));
	c->cfg = *cfg;
	c->utc_known = cfg->utc_offset_known;
	c->utc_offset = cfg->utc_offset_s;
	corr_flow_maps_init(c);
	c->scratch = xmalloc(sizeof(*c->scratch));
	c->ring_cap = cfg->max_pending;
	c->ring = xcalloc(c->ring_cap, sizeof(*c->ring));
	/* Most entries live microseconds (matched as soon as the peer's
	 * copy comes); a table a sixteenth the ring's size keeps chains short
	 * and fits in cache, where a bigger one would miss on every look. */
	while (cap < c->ring_cap / 16)
		cap *= 2;
	c->nbuckets = cap;
	c->bucket1 = xcalloc(cap, sizeof(uint32_t));
	c->bucket2 = xcalloc(cap, sizeof(uint32_t));
	corr_stats_init(&c->hops);
	corr_stats_init(&c->txns);
	corr_stats_init(&c->switches);
	corr_stats_init(&c->app);
	c->app.ext_free = free;
	/* The samples' takers, in the order they see each one. */
	if (cfg->samples)
		c->sinks[c->nsinks++] = &corr_samples_sink;
	if (cfg->on_txn)
		c->sinks[c->nsinks++] = &corr_txn_cb_sink;
	c->sinks[c->nsinks++] = &corr_stats_sink;
	if (cfg->follow)
		c->sinks[c->nsinks++] = &corr_live_sink;
	for (unsigned i = 0; i < c->nsinks; i++)
		if (c->sinks[i]->open)
			c->sinks[i]->open(c);
	if (!c->cfg.traffic_window_ns)
		c->cfg.traffic_window_ns = 1000000000LL;
	/* A sample comes as late as its message waited for its peers, or
	 * a hole in its stream held it. */
	c->traffic = corr_traffic_create(c->cfg.traffic_window_ns,
					 cfg->window_ns + cfg->hold_ns);
	if (!c->cfg.interval_ns)
		c->cfg.interval_ns = 1000000000LL;
	if (!c->cfg.stall_ns)
		c->cfg.stall_ns = 2000000000LL;
	*out = c;
	return 0;
}

void corr_emit_session(struct corr *c, struct corr_stream *s,
		       const struct corr_fields *f, int64_t ts)
{
	for (unsigned i = 0; i < c->nsinks; i++)
		if (c->sinks[i]->session)
			c->sinks[i]->session(c, s, f, ts);
}

void corr_emit_flow_idle(struct corr *c, uint32_t flow)
{
	for (unsigned i = 0; i < c->nsinks; i++)
		if (c->sinks[i]->flow_idle)
			c->sinks[i]->flow_idle(c, flow);
}

static struct corr_host *corr_host_by_name(const struct corr *c,
					   const char *name)
{
	for (unsigned i = 0; i < c->nhosts; i++)
		if (!strcmp(c->hosts[i]->name, name))
			return c->hosts[i];
	return NULL;
}

/* The host name the files record (cap_host()), the first file's that
 * records one; "" when none does. A directory written by one capd names
 * one host; files of several hosts in one directory are not one host's
 * captures whatever they are called. */
static const char *corr_files_host(const struct capset *cs)
{
	for (unsigned k = 0; k < capset_files(cs); k++) {
		const struct cap_reader *r = capset_reader(cs, k);

		if (r && *cap_host(r))
			return cap_host(r);
	}
	return "";
}

static int corr_host_name_ok(const struct corr *c, const char *name,
			     bool from_files, char err[CORR_ERRBUF])
{
	if (corr_host_by_name(c, name)) {
		/* Two directories called eth1, or two files recording the
		 * same name (capd run without -H on one machine). */
		snprintf(err, CORR_ERRBUF, "host '%s' given twice%s: name each "
			 "host with NAME=DIR", name, from_files ?
			 " (the name its files record)" : "");
		return -EEXIST;
	}
	if (!*name || strlen(name) >= sizeof(((struct corr_host *)0)->name)) {
		snprintf(err, CORR_ERRBUF, "host name '%s' is empty or too long",
			 name);
		return -EINVAL;
	}
	return 0;
}

/* Frames a tap stamp format left out (no stamp of it, or a bad one), and
 * stamps its device flagged: said, with the first frame left out. */
static void corr_warn_tap(struct corr *c, const struct corr_host *h)
{
	struct cap_stats st;

	capset_stats(h->cs, &st);
	if (st.tap == TAPFMT_NONE) {
		if (capset_warning(h->cs)[0])	/* a format half seen */
			corr_warn(c, "%s: %s", h->name, capset_warning(h->cs));
		return;
	}
	if (st.tap_missing || st.tap_bad)
		corr_warn(c, "%s: %llu frames without a %s stamp and %llu with a "
			  "bad one left out (first: %s)", h->name,
			  (unsigned long long)st.tap_missing, tapfmt_name(st.tap),
			  (unsigned long long)st.tap_bad, capset_warning(h->cs));
	if (st.tap_degraded)
		corr_warn(c, "%s: %llu %s stamps flagged degraded by their "
			  "device", h->name, (unsigned long long)st.tap_degraded,
			  tapfmt_name(st.tap));
}

/* The tap stamp format named for host name, taken; TAPFMT_AUTO else. */
static enum tapfmt_kind corr_tapfmt_of(struct corr *c, const char *name)
{
	for (unsigned i = 0; i < c->ntapfmt; i++)
		if (!strcmp(c->tapfmt[i].host, name)) {
			c->tapfmt[i].used = true;
			return c->tapfmt[i].kind;
		}
	return TAPFMT_AUTO;
}

int corr_set_tapfmt(struct corr *c, const char *host, const char *format,
		    char err[CORR_ERRBUF])
{
	enum tapfmt_kind kind;

	if (tapfmt_parse(format, &kind)) {
		snprintf(err, CORR_ERRBUF, "%s: unknown tap stamp format '%s' "
			 "(one of: %s)", host, format, tapfmt_names());
		return -EINVAL;
	}
	for (unsigned i = 0; i < c->ntapfmt; i++)
		if (!strcmp(c->tapfmt[i].host, host)) {
			snprintf(err, CORR_ERRBUF, "two tap stamp formats for "
				 "'%s'", host);
			return -EEXIST;
		}
	if (c->ntapfmt == CORR_MAX_HOSTS || strlen(host) >= sizeof(c->tapfmt[0].host)) {
		snprintf(err, CORR_ERRBUF, "tap stamp format for '%s': too many, "
			 "or the name is too long", host);
		return -E2BIG;
	}
	snprintf(c->tapfmt[c->ntapfmt].host, sizeof(c->tapfmt[0].host), "%s", host);
	c->tapfmt[c->ntapfmt++].kind = kind;
	return 0;
}

const char *corr_tapfmt_unused(const struct corr *c)
{
	for (unsigned i = 0; i < c->ntapfmt; i++)
		if (!c->tapfmt[i].used)
			return c->tapfmt[i].host;
	return NULL;
}

static int corr_host_add(struct corr *c, const char *name, bool named,
			 const char *const *paths, unsigned npaths,
			 char err[CORR_ERRBUF])
{
	struct corr_host *h;
	char cerr[CAP_ERRBUF];
	int ret;

	/* A name given is checked before anything is opened. */
	if (named && (ret = corr_host_name_ok(c, name, false, err)))
		return ret;
	if (c->nhosts == CORR_MAX_HOSTS) {
		snprintf(err, CORR_ERRBUF, "more than %d hosts", CORR_MAX_HOSTS);
		return -E2BIG;
	}
	if (c->cfg.follow && npaths != 1) {
		snprintf(err, CORR_ERRBUF, "%s: following takes one directory "
			 "(or file) per host", name);
		return -EINVAL;
	}
	h = xcalloc(1, sizeof(*h));
	ret = c->cfg.follow ?
	      capset_follow(&h->cs, paths[0], c->cfg.from_oldest, cerr) :
	      capset_open_tap(&h->cs, paths, npaths, corr_tapfmt_of(c, name),
			      cerr);	/* unnamed: by its path's name */
	if (ret) {
		snprintf(err, CORR_ERRBUF, "%.63s: %s", name, cerr);
		free(h);
		return ret;
	}
	if (!named) {
		const char *rec = corr_files_host(h->cs);
		bool from_files = *rec && strlen(rec) < sizeof(h->name);

		if (from_files)
			name = rec;
		ret = corr_host_name_ok(c, name, from_files, err);
		if (ret) {
			capset_close(h->cs);
			free(h);
			return ret;
		}
	}
	snprintf(h->name, sizeof(h->name), "%s", name);
	h->idx = c->nhosts;
	{
		const char *ta, *tb;

		h->tap = c->cfg.topo && topo_tap(c->cfg.topo, name, &ta, &tb);
	}
	h->forced_scale = -1;
	h->bucket = NO_BUCKET;
	h->orders = xcalloc(CORR_ORDERS, sizeof(*h->orders));
	c->hosts[c->nhosts++] = h;
	return 0;
}

int corr_add_host(struct corr *c, const char *name, const char *const *paths,
		  unsigned npaths, char err[CORR_ERRBUF])
{
	return corr_host_add(c, name, true, paths, npaths, err);
}

int corr_add_host_found(struct corr *c, const char *fallback,
			const char *const *paths, unsigned npaths,
			char err[CORR_ERRBUF])
{
	return corr_host_add(c, fallback, false, paths, npaths, err);
}

int corr_set_journal(struct corr *c, const char *host, const char *path,
		     char err[CORR_ERRBUF])
{
	struct corr_host *h = corr_host_by_name(c, host);
	char jerr[JOURNAL_ERRBUF];
	int ret, off;

	if (!h) {
		snprintf(err, CORR_ERRBUF,
			 "sync journal for '%s', which is not an input host",
			 host);
		return -ENOENT;
	}
	if (h->bound) {
		snprintf(err, CORR_ERRBUF, "two sync journals for '%s'", host);
		return -EEXIST;
	}
	ret = bound_open(&h->bound, path, c->cfg.sync_max_age_ns, jerr);
	if (ret) {
		snprintf(err, CORR_ERRBUF, "%s", jerr);
		return ret;
	}
	h->journal = xstrdup(path);
	if (bound_bad_lines(h->bound))
		corr_warn(c, "%s: %u bad lines in the sync journal skipped, "
			  "the first: %s", host, bound_bad_lines(h->bound),
			  bound_error(h->bound));
	if (!bound_samples(h->bound))
		corr_warn(c, "%s: sync journal %s has no samples: every sample "
			  "of this host counts as out of sync", host, path);
	if (!c->utc_known && !bound_utc_offset(h->bound, &off)) {
		c->utc_known = true;
		c->utc_offset = off;
	}
	return 0;
}

int corr_set_calibration(struct corr *c, const char *host, const char *path,
			 char err[CORR_ERRBUF])
{
	struct corr_host *h = corr_host_by_name(c, host);
	char cerr[CALIB_ERRBUF];
	struct calib *cal;
	int ret;

	if (!h) {
		snprintf(err, CORR_ERRBUF, "stamp calibration for '%s', which "
			 "is not an input host", host);
		return -ENOENT;
	}
	if (h->cal) {
		snprintf(err, CORR_ERRBUF, "two stamp calibrations for '%s'",
			 host);
		return -EEXIST;
	}
	cal = xcalloc(1, sizeof(*cal));
	ret = calib_read(cal, path, cerr);
	if (ret) {
		snprintf(err, CORR_ERRBUF, "%s", cerr);
		free(cal);
		return ret;
	}
	/* A file measured on another host is most likely the wrong file. */
	if (cal->host[0] && strcmp(cal->host, host))
		corr_warn(c, "%s: stamp calibration %s was measured on '%s'",
			  host, path, cal->host);
	h->cal = cal;
	h->cal_path = xstrdup(path);
	return 0;
}

int corr_set_timescale(struct corr *c, const char *host, int timescale)
{
	struct corr_host *h = corr_host_by_name(c, host);

	if (!h)
		return -ENOENT;
	if (timescale != TS_SCALE_UTC && timescale != TS_SCALE_TAI)
		return -EINVAL;
	h->forced_scale = timescale;
	return 0;
}

void corr_fetch(struct corr *c, struct corr_host *h)
{
	for (;;) {
		int rc = capset_next(h->cs, &h->next);

		if (rc != 1) {
			h->have_next = false;
			h->live.ended = rc != -EAGAIN;
			return;
		}
		/* Following, one file at a time: the ones before are done,
		 * and so are their interfaces. */
		if (c->cfg.follow && h->next.file != h->live.cur_file) {
			corr_iface_retire(h, h->next.file);
			h->live.cur_file = h->next.file;
		}
		h->next_if = corr_iface(c, h, h->next.file, h->next.pkt.iface,
					h->next.pkt.timescale);
		if (!h->next_if->usable) {
			h->skipped_scale++;
			continue;
		}
		h->next_ts = h->next.pkt.ts_ns + h->next_if->delta_ns;
		h->merge_ts = h->next_ts;
		h->have_next = true;
		return;
	}
}

/* ---- one message, one packet ---- */

/* h with n more bytes hashed in: field after field, each one's length
 * counted (hmap_hash() of the field), so "AB","C" is not "A","BC". */
static uint64_t corr_hash_more(uint64_t h, const void *p, size_t n)
{
	uint64_t w[2] = { h, hmap_hash(p, n) };

	return hmap_hash(w, sizeof(w));
}

/* A message as a record, for cfg.on_record. */
static void corr_record(struct corr *c, const struct corr_stream *s,
			const struct fixstream_msg *m,
			const struct corr_fields *f, const struct corr_obs *o,
			uint32_t seq)
{
	const struct corr_host *h = s->h;
	struct corr_record r;

	r.host = h->idx;
	r.iface = s->ifc->name;
	r.dir = s->dir;
	r.flow = &s->key;
	r.seq = seq;
	for (int k = 0; k < CORR_REC_FIELDS; k++) {
		r.field[k] = f->v[k];
		r.field_len[k] = f->len[k];
	}
	r.ts = m->ts_first;
	r.ts_last = m->ts_last;
	r.wire = m->wire_first;
	r.wire_last = m->wire_last;
	r.hw = s->ifc->hw;
	r.sender = s->ifc->sender;
	r.sync = o->sync;
	r.bound_ns = o->bound;
	r.file = capset_path(h->cs, CORR_REF_FILE(m->ref_first));
	r.offset = m->ref_first & CORR_REF_OFFSET;
	r.at_file = capset_path(h->cs, h->next.file);
	r.at_offset = h->next.pkt.offset;
	c->cfg.on_record(c->cfg.rec_arg, &r);
}

uint32_t corr_msg_seq(const struct corr_stream *s,
		      const struct fixstream_msg *m)
{
	return s->proto == IPPROTO_TCP ? m->seq :
	       (uint32_t)hmap_hash(m->fix->buf, m->fix->len);
}

void corr_on_msg(void *arg, const struct fixstream_msg *m)
{
	struct fixstream_msg k = *m;
	struct corr_fields f;

	corr_fields(m->fix, &f);
	k.seq = corr_msg_seq(arg, m);
	corr_msg(arg, &k, &f);
}

void corr_msg(struct corr_stream *s, const struct fixstream_msg *m,
	      const struct corr_fields *fp)
{
	struct corr *c = s->c;
	struct corr_host *h = s->h;
	const struct corr_fields f = *fp;
	struct corr_obs o;
	int64_t ts = c->cfg.last_byte ? m->ts_last : m->ts_first;
	uint32_t seq = m->seq;
	uint64_t k2 = 0;

	h->messages++;
	if (!c->flows[s->flow].announced) {
		struct corr_flow *fl = &c->flows[s->flow];

		fl->announced = true;
		if (f.v[F_49] && f.v[F_56])
			snprintf(fl->session, sizeof(fl->session), "%.*s->%.*s",
				 (int)(f.len[F_49] < 64 ? f.len[F_49] : 64),
				 f.v[F_49],
				 (int)(f.len[F_56] < 64 ? f.len[F_56] : 64),
				 f.v[F_56]);
		corr_emit_session(c, s, &f, ts);
	}
	if (corr_is(&f, F_35, "X")) {
		corr_md_seen(c, h, ts);
		s->carried |= 1u << TXN_TICK_TO_TRADE;
	} else if (corr_is(&f, F_35, "8") && corr_is(&f, F_39, "2")) {
		s->carried |= 1u << TXN_FILL_TO_SELL;
	}
	if (s->dir != DIR_UNKNOWN)
		corr_txn(c, h, s->dir, ts, m->fix, &f);
	else
		h->dir_unknown++;

	memset(&o, 0, sizeof(o));
	o.ts = ts;
	o.host = (uint16_t)h->idx;
	o.dir = s->dir;
	o.flow = s->flow;
	o.wire = c->cfg.last_byte ? m->wire_last : m->wire_first;
	o.bucket = h->bucket;
	if (corr_obs_bound(h, s->ifc, &o))
		h->clock_corrected++;
	/* A stamp its tap flagged degraded (MetaWatch, Ixia in holdover)
	 * has no error anyone knows: its samples claim no bound. */
	if (m->ref_first & CORR_REF_DEGRADED) {
		h->degraded_msgs++;
		o.bound = -1;
		o.clk = o.cut = o.hold = 0;
	}
	if (s->dir == DIR_OUT)
		corr_app(c, s, &f, &o);
	if (c->cfg.on_record)
		corr_record(c, s, m, &f, &o, seq);
	if (c->cfg.no_match)
		return;
	/* Session keys only where a flow is in one capture alone (see
	 * corr_entry_new()): most messages never need them. */
	uint64_t fh = c->flows[s->flow].hosts;
	if (!(fh & (fh - 1)) && f.v[F_49] && f.v[F_56] && f.v[F_34] &&
	    f.v[F_35]) {
		uint64_t x = 0;

		for (int k = F_35; k <= F_34; k++)
			x = corr_hash_more(x + (uint64_t)k, f.v[k], f.len[k]);
		k2 = x;
	}
	corr_match(c, &o, seq, k2);
}

static uint8_t corr_direction(struct corr *c, struct corr_host *h,
			      const struct cap_packet *pkt,
			      const struct frame_flow *f)
{
	if (pkt->dir == PCAPNG_DIR_IN || pkt->dir == PCAPNG_DIR_OUT) {
		h->dir_flags = true;
		return pkt->dir == PCAPNG_DIR_IN ? DIR_IN : DIR_OUT;
	}
	if (c->cfg.topo) {
		bool src = topo_owns(c->cfg.topo, h->name, f->family, f->src);
		bool dst = topo_owns(c->cfg.topo, h->name, f->family, f->dst);

		if (src != dst) {
			h->dir_addr = true;
			return src ? DIR_OUT : DIR_IN;
		}
	}
	return DIR_UNKNOWN;
}

struct corr_stream *corr_packet_host(struct corr *c, struct corr_host *h,
				     const struct corr_stream_make *mk,
				     struct frame_info *fi, bool *made,
				     bool *skip)
{
	const struct cap_packet *pkt = &h->next.pkt;
	struct corr_stream *s;
	int64_t ts = h->next_ts;
	int ret;

	*made = *skip = false;
	h->packets++;
	if (ts < h->max_ts - CORR_JUMP_NS)
		h->clock_jumps++;
	if (ts > h->max_ts)
		h->max_ts = ts;
	int64_t utc = ts + h->next_if->journal_ns;
	if (h->packets == 1 || utc < h->utc_first)
		h->utc_first = utc;
	if (h->packets == 1 || utc > h->utc_last)
		h->utc_last = utc;
	ret = frame_parse(pkt->data, pkt->caplen, h->next_if->linktype, fi);
	if (ret == -EPROTONOSUPPORT) {
		h->non_ip++;
		return NULL;
	}
	if (ret) {
		h->bad_frames++;
		return NULL;
	}
	if (!fi->payload_wire && !(fi->tcp_flags & FRAME_TCP_SYN)) {
		h->no_payload++;
		return NULL;
	}
	s = corr_stream_get(c, h, &fi->flow,
			    corr_direction(c, h, pkt, &fi->flow), mk, made);
	/* The sending program's stamp is taken in the driver (or by the
	 * NIC), the packet socket's before the frame reaches the driver:
	 * once a flow's sender stamps its frames, the packet socket's copies
	 * of them are left out (the first frames, before the sender's copy
	 * of one came, keep the packet socket's stamp). */
	if (s->dir == DIR_OUT) {
		if (h->next_if->sender) {
			s->sender_seen = true;
			h->sender_frames++;
		}
		else if (s->sender_seen) {
			h->tap_tx_skipped++;
			*skip = true;
		}
	}
	return s;
}

void corr_packet_head(struct corr_stream *s, const struct corr_iface *ifc,
		      int64_t ts, uint8_t tcp_flags)
{
	s->ifc = ifc;
	s->last_ts = ts;
	if (tcp_flags & (FRAME_TCP_FIN | FRAME_TCP_RST))
		s->ended = true;
	else if (tcp_flags & FRAME_TCP_SYN)
		s->ended = false;
}

void corr_packet_feed(struct corr_host *h, struct corr_stream *s,
		      const struct frame_info *fi)
{
	const struct cap_packet *pkt = &h->next.pkt;

	fixstream_segment(s->fs, fi->seq, fi->tcp_flags, fi->payload,
			  fi->payload_len, fi->payload_wire, h->next_ts,
			  pkt->origlen,
			  (uint64_t)h->next.file << CORR_REF_SHIFT |
			  (pkt->offset & CORR_REF_OFFSET) |
			  (pkt->degraded ? CORR_REF_DEGRADED : 0));
}

void corr_packet(struct corr *c, struct corr_host *h)
{
	const struct corr_stream_make mk = {
		c->stream_map, c->scratch, corr_on_msg, corr_txn_lost
	};
	struct frame_info fi;
	bool made, skip;
	struct corr_stream *s = corr_packet_host(c, h, &mk, &fi, &made, &skip);

	if (!s)
		return;
	if (made)
		corr_stream_add(c, s);
	if (skip)
		return;
	corr_packet_head(s, h->next_if, h->next_ts, fi.tcp_flags);
	corr_packet_feed(h, s, &fi);
	/* Orders waiting for their triggers' streams (corr_txn.c). */
	if (s->dir == DIR_IN || h->npend)
		corr_txn_holes(c, s);
}

/* Link events tapless-capd wrote into a host's captures (a link down or
 * removed, tapless-pcapng(5)): gaps after them are not quiet links. */
static void corr_warn_links(struct corr *c, const struct corr_host *h)
{
	struct cap_stats st;
	uint64_t down, up;
	int64_t first;

	capset_stats(h->cs, &st);
	down = st.link_down;
	up = st.link_up;
	first = st.first_link_down_ns;
	if (down)
		corr_warn(c, "%s: link down %llu times, up %llu times (first "
			  "down at %lld.%09lld): gaps in its capture there are "
			  "link events, not quiet links", h->name,
			  (unsigned long long)down, (unsigned long long)up,
			  (long long)(first / 1000000000),
			  (long long)(first % 1000000000));
}

/* A journal that does not cover the capture makes its samples out of
 * sync, quietly but for the counts: say so, with both ranges, so a wrong
 * journal (another day's, another host's) is seen at once. */
static void corr_warn_journal(struct corr *c, const struct corr_host *h)
{
	char jf[NSTIME_ISO_BUF], jl[NSTIME_ISO_BUF];
	char cf[NSTIME_ISO_BUF], cl[NSTIME_ISO_BUF];
	int64_t first, last;

	if (!h->bound || !h->packets || bound_span(h->bound, &first, &last))
		return;	/* no samples: corr_set_journal() said so */
	if (h->utc_first >= first &&
	    h->utc_last <= last + c->cfg.sync_max_age_ns)
		return;
	corr_warn(c, "%s: sync journal %s covers %s to %s, the capture %s to "
		  "%s: samples outside the journal count as out of sync",
		  h->name, h->journal, nstime_iso(first, jf),
		  nstime_iso(last, jl), nstime_iso(h->utc_first, cf),
		  nstime_iso(h->utc_last, cl));
}

static int corr_host_cmp(const struct corr_host *a, const struct corr_host *b)
{
	return a->merge_ts < b->merge_ts ? -1 : a->merge_ts > b->merge_ts;
}

/* A host's next packet, and that packet through: on its own thread's
 * records, or read here. */
static void corr_next(struct corr *c, struct corr_host *h)
{
	if (h->thr)
		corr_thr_head(c, h);
	else
		corr_fetch(c, h);
}

static void corr_take(struct corr *c, struct corr_host *h)
{
	if (h->thr)
		corr_thr_apply(c, h);
	else
		corr_packet(c, h);
}

int corr_run(struct corr *c, char err[CORR_ERRBUF])
{
	struct corr_host *heap[CORR_MAX_HOSTS];
	unsigned n = 0;

	if (!c->nhosts) {
		snprintf(err, CORR_ERRBUF, "no inputs");
		return -EINVAL;
	}
	corr_thr_start(c);
	for (unsigned i = 0; i < c->nhosts; i++) {
		corr_next(c, c->hosts[i]);
		if (c->hosts[i]->have_next)
			heap[n++] = c->hosts[i];
	}
	/* A few hosts: a sorted array, re-placing the one that moved. */
	for (;;) {
		struct corr_host *h;
		unsigned best = 0;

		if (!n || c->aborted)
			break;
		for (unsigned i = 1; i < n; i++)
			if (corr_host_cmp(heap[i], heap[best]) < 0)
				best = i;
		h = heap[best];
		corr_take(c, h);
		corr_next(c, h);
		if (!h->have_next)
			heap[best] = heap[--n];
	}
	corr_thr_stop(c);
	corr_finish(c);
	return 0;
}

/* A stream's reassembly counters into its host's totals. */
void corr_stream_fold(struct corr_stream *s)
{
	const struct fixstream_stats *fs = fixstream_stats(s->fs);
	struct corr_stream_stats *t = &s->h->st;

	t->segments += fs->segments;
	t->bytes += fs->bytes;
	t->messages += fs->messages;
	t->retransmits += fs->retransmits;
	t->out_of_order += fs->out_of_order;
	t->lost_bytes += fs->lost_bytes;
	t->skipped_bytes += fs->skipped_bytes;
	t->midstream_bytes += fs->midstream_bytes;
	t->bad_checksum += fs->bad_checksum;
	t->bad_framing += fs->bad_framing;
	t->truncated += fs->truncated;
}

void corr_finish(struct corr *c)
{
	for (size_t i = 0; i < c->nstreams; i++) {
		fixstream_finish(c->streams[i]->fs);
		corr_txn_holes(c, c->streams[i]);
	}
	for (unsigned i = 0; i < c->nhosts; i++)
		corr_txn_flush(c, c->hosts[i]);
	corr_match_drain(c);
	corr_traffic_flush(c->traffic);
	for (size_t i = 0; i < c->nstreams; i++)
		corr_stream_fold(c->streams[i]);
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		if (capset_damaged(h->cs))
			corr_warn(c, "%s: %s", h->name, capset_error(h->cs));
		corr_warn_tap(c, h);
		corr_warn_links(c, h);
		corr_warn_journal(c, h);
		if (!h->packets)
			corr_warn(c, "%s: no packets", h->name);
		else if (!h->messages && h->non_ip == h->packets)
			corr_warn(c, "%s: none of its %llu packets is IP (link "
				  "type %u; e.g. 802.11 or another non-Ethernet "
				  "capture): nothing here to correlate", h->name,
				  (unsigned long long)h->packets,
				  h->nifs ? h->ifs[0].linktype : 0u);
		else if (!h->messages)
			corr_warn(c, "%s: no FIX messages in %llu packets%s",
				  h->name, (unsigned long long)h->packets,
				  h->non_ip ? " (some not IP)" : "");
		else if (c->nhosts > 1 && h->only_here == h->messages)
			corr_warn(c, "%s: none of its %llu FIX messages was seen "
				  "by another host", h->name,
				  (unsigned long long)h->messages);
		if (h->clock_jumps)
			corr_warn(c, "%s: stamps went back by more than 1 s %llu "
				  "times (a clock step?)", h->name,
				  (unsigned long long)h->clock_jumps);
		if (h->st.bad_checksum || h->st.bad_framing)
			corr_warn(c, "%s: %llu FIX messages with a bad checksum "
				  "and %llu badly framed were skipped", h->name,
				  (unsigned long long)h->st.bad_checksum,
				  (unsigned long long)h->st.bad_framing);
	}
	corr_time_warn(c);
	if (c->warn_dropped) {
		/* The last slot says how many did not fit. */
		free(c->warn[CORR_MAX_WARNINGS - 1]);
		c->nwarn--;
		corr_warn(c, "... and %u more warnings", c->warn_dropped + 1);
	}
	if (c->window_overflow)
		corr_warn(c, "%llu messages left the matching window early "
			  "(more than %u waiting): raise --max-pending or "
			  "lower --window",
			  (unsigned long long)c->window_overflow,
			  c->cfg.max_pending);
}

const char *corr_host_name(const struct corr *c, unsigned i)
{
	return i < c->nhosts ? c->hosts[i]->name : NULL;
}

void corr_abort(struct corr *c)
{
	c->aborted = true;
}

bool corr_measured(const struct corr *c)
{
	return c->measured;
}

uint64_t corr_direction_unknown(const struct corr *c)
{
	return c->dir_unknown_pairs;
}

unsigned corr_warnings(const struct corr *c)
{
	return c->nwarn;
}

const char *corr_warning(const struct corr *c, unsigned i)
{
	return i < c->nwarn ? c->warn[i] : NULL;
}

void corr_destroy(struct corr *c)
{
	if (!c)
		return;
	for (unsigned i = 0; i < c->nhosts; i++) {
		struct corr_host *h = c->hosts[i];

		capset_close(h->cs);
		bound_destroy(h->bound);
		free(h->journal);
		free(h->cal);
		free(h->cal_path);
		free(h->ifs);
		if (h->syms) {
			struct hmap_iter it;
			void *v;

			for (hmap_iter_init(h->syms, &it);
			     (v = hmap_iter_next(h->syms, &it)); ) {
				struct corr_sym *y;

				memcpy(&y, v, sizeof(y));
				free(y->md.ts);
				free(y->fill.ts);
				free(y);
			}
			hmap_destroy(h->syms);
		}
		free(h->scratch);
		free(h->orders);
		free(h->pend);
		free(h->losses);
		free(h);
	}
	for (size_t i = 0; i < c->nstreams; i++) {
		fixstream_destroy(c->streams[i]->fs);
		free(c->streams[i]);
	}
	free(c->streams);
	free(c->flows);
	hmap_destroy(c->flow_map);
	hmap_destroy(c->stream_map);
	free(c->scratch);
	free(c->ring);
	free(c->bucket1);
	free(c->bucket2);
	corr_stats_free(&c->hops);
	corr_stats_free(&c->txns);
	corr_stats_free(&c->switches);
	corr_stats_free(&c->app);
	for (unsigned i = 0; i < c->nsinks; i++)
		if (c->sinks[i]->close)
			c->sinks[i]->close(c);
	corr_traffic_destroy(c->traffic);
	for (unsigned i = 0; i < c->nwarn; i++)
		free(c->warn[i]);
	free(c);
}
