/* sim_tap.c — sim's optical taps: for a tapped host, every frame on its
 * fibres at its true wire instant, stamped by the tap's own clock, into
 * tap-HOST.pcapng; and truth.json's "reference", what the host's stamps
 * are against the tap's.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "base/heap.h"
#include "base/print.h"
#include "base/rng.h"
#include "base/summary.h"
#include "base/xalloc.h"
#include "files/pcapng.h"
#include "sim/sim_private.h"
#include "stamp/ts.h"

/* The tap of host id: a perfect or imperfect clock of its own (its own
 * draws, so the hosts' files are the same with or without it), on UTC,
 * capturing from the start. */
void sim_tap_init(struct sim *s, int id)
{
	const struct sim_config *c = s->c;
	struct host *t = &s->tap[id];
	const struct sim_clock *k = &c->tap_clock;

	s->tapcfg.clock = *k;
	s->tapcfg.tai = false;
	s->tapcfg.format = SIM_FMT_PCAPNG;
	t->id = id;
	t->cfg = &s->tapcfg;
	t->tap = true;
	rng_seed(&t->rng, c->seed, 20 + (uint64_t)id);
	t->phase = rng_unit(&t->rng) * 2 * M_PI;
	t->res_ns = 1;
	t->min_err_ns = (int64_t)floor(k->offset_ns - fabs(k->wander_ns) -
				       4 * k->noise_ns) - 2;
}

/* tap-HOST.pcapng: one interface per fibre, with a description that is
 * not a tapless source (the file is a foreign capture, as a DAG's). */
int sim_tap_open(struct sim *s, struct host *t)
{
	const char *name = sim_hosts[t->id];
	char host[32], tx[32], rx[32], desc[64];
	struct pcapng_section sec = {
		.hostname = host, .hardware = "tapless sim tap",
		.os = "tapless sim", .userappl = SIM_USERAPPL,
	};
	struct pcapng_iface ifc = {
		.linktype = FRAME_LINK_ETHERNET, .snaplen = 0,
		.src = { false, -1, TS_SCALE_UTC, "" },
	};
	int err;

	snprintf(host, sizeof(host), "tap-%s", name);
	snprintf(tx, sizeof(tx), "tap-%s-tx", name);
	snprintf(rx, sizeof(rx), "tap-%s-rx", name);
	snprintf(desc, sizeof(desc), "sim tap, %.15g ns clock",
		 (double)t->cfg->clock.quantum_ps / PS_PER_NS);
	snprintf(t->file, sizeof(t->file), "tap-%s.pcapng", name);
	t->path = sim_path_join(s->c->out_dir, t->file);
	t->tmp = xmalloc(strlen(t->path) + 6);
	sprintf(t->tmp, "%s.part", t->path);
	if (unlink(t->tmp) && errno != ENOENT)
		return sim_sys(s, -errno, "%s", t->tmp);
	err = pcapng_open(&t->ng, t->path, &sec);
	if (err)
		return sim_sys(s, err, "%s", t->tmp);
	ifc.name = tx;
	err = pcapng_add_iface_desc(t->ng, &ifc, desc, &t->ifid);
	if (!err) {
		ifc.name = rx;
		err = pcapng_add_iface_desc(t->ng, &ifc, desc, &t->ifid_in);
	}
	if (err)
		return sim_sys(s, err, "%s", t->tmp);
	return 0;
}

/* The tap of host hi: the frame at its wire instant, by the tap's clock;
 * and, when the host captured it too (at t_ps, stamped stamp), the
 * difference of the two stamps on one timescale. */
void sim_tap_emit(struct sim *s, int hi, enum pcapng_dir dir, int64_t t_ps,
		  int64_t wire_ps, int64_t stamp, const uint8_t *frame,
		  uint32_t len, bool captured)
{
	struct host *h = &s->h[hi], *tp = &s->tap[hi];
	struct tapref *ref = &s->ref[hi];
	struct rec *r = sim_rec_new(s, sim_host_stamp(tp, wire_ps, sim_start_ns(s)),
				    wire_ps, dir, frame, len, false);

	heap_push(tp->q, &r);
	/* The reference is over the frames in both files. */
	if (!captured)
		return;
	sim_dist_add(s, &ref->d[dir == PCAPNG_DIR_OUT ? REF_TX : REF_RX],
		     stamp - r->stamp - h->tai_ns);
	if (!ref->any || t_ps < ref->first_ps)
		ref->first_ps = t_ps;
	ref->any = true;
}

/* Summary of what host h's tap saw against its capture: one of REF_TX,
 * REF_RX, or both (-1). */
static void ref_summary(struct sim *s, int h, int which, struct summary *out)
{
	const struct dist *d[REF_DISTS];
	unsigned n = 0;

	for (int i = 0; i < REF_DISTS; i++)
		if (which < 0 || which == i)
			d[n++] = &s->ref[h].d[i];
	sim_dists_summary(s, d, n, out);
}

/* "reference": for each tapped host, host stamp - tap stamp over the
 * frames in both files, and the line a fit of it should find. */
void sim_print_reference(struct printer *p, struct sim *s)
{
	print_object_begin(p, "reference");
	for (int h = 0; h < SIM_HOSTS; h++) {
		const struct host *x = &s->h[h], *t = &s->tap[h];
		static const char *const names[REF_DISTS] = { "tx", "rx" };
		struct summary sum;

		if (!t->tap)
			continue;
		/* An untapped host has no tap config: no &t->cfg->clock. */
		const struct sim_clock *k = &x->cfg->clock, *tk = &t->cfg->clock;
		print_object_begin(p, sim_hosts[h]);
		print_str(p, "file", NULL, t->file);
		print_uint(p, "frames", NULL, t->packets);
		print_object_begin(p, "model");
		print_double(p, "offset_ns", NULL, k->offset_ns);
		print_double(p, "rate_ppb", NULL, k->rate_ppb);
		print_double(p, "wander_ns", NULL, k->wander_ns);
		print_double(p, "period_s", NULL, k->period_s);
		print_double(p, "noise_ns", NULL, k->noise_ns);
		print_double(p, "quantum_ns", NULL, (double)k->quantum_ps / PS_PER_NS);
		print_str(p, "host_timescale", NULL, x->cfg->tai ? "tai" : "utc");
		print_double(p, "tap_offset_ns", NULL, tk->offset_ns);
		print_double(p, "tap_rate_ppb", NULL, tk->rate_ppb);
		print_double(p, "tap_wander_ns", NULL, tk->wander_ns);
		print_double(p, "tap_noise_ns", NULL, tk->noise_ns);
		print_double(p, "tap_quantum_ns", NULL, (double)tk->quantum_ps / PS_PER_NS);
		print_object_end(p);
		for (int d = 0; d < REF_DISTS; d++) {
			ref_summary(s, h, d, &sum);
			summary_print(p, names[d], &sum);
		}
		ref_summary(s, h, -1, &sum);
		summary_print(p, "all", &sum);
		print_object_begin(p, "fit");
		if (s->ref[h].any)
			print_double(p, "offset_ns", NULL,
				     round((sim_host_det_sync_ns(x, s->ref[h].first_ps) -
					    sim_host_det_sync_ns(t, s->ref[h].first_ps)) * 1000) / 1000);
		else
			print_null(p, "offset_ns", NULL);
		print_double(p, "rate_ppb", NULL, k->rate_ppb - tk->rate_ppb);
		if (s->ref[h].any)
			print_int(p, "first_ns", NULL,
				  sim_start_ns(s) + sim_floordiv(s->ref[h].first_ps, PS_PER_NS));
		else
			print_null(p, "first_ns", NULL);
		print_object_end(p);
		print_object_end(p);
	}
	print_object_end(p);
}
