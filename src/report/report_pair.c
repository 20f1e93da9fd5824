/* report_pair.c — every switch and hop sample beside the truth of its own
 * frame (report_private.h): the measurement error per sample and how often
 * the error bound the sample came with holds it.
 *
 * A sample names no frame: its line (tapless-correlate(8), SAMPLES FILE)
 * has the sending frame's stamp (time_ns: the venue's TX stamp of the frame
 * carrying the message's first byte) and nothing else. That stamp is the
 * link. The venue's own capture of the run (rate-R/switch/VENUE/) holds the
 * frame with that stamp, and so its identity: flow, TCP sequence number and
 * payload length (report_md_key()); the emulator's captures hold the same
 * frame, by the same identity, with its ingress and egress stamps. So
 *
 *   sample time_ns -> venue frame stamped time_ns -> (flow, seq, length)
 *     -> the emulator's frame with that identity -> its residence.
 *
 * The samples' timescale is the correlator's common one: UTC when it knew
 * the UTC offset, else that of the captures. A venue capture holds frames
 * on two: its hardware stamps on the PHC's (TAI under PTP), its software
 * ones on the system clock's (UTC). Each side is read on its own, in its
 * own order (merged, the two would be TAI - UTC apart: pairing them
 * would hold 37 s of frames; read apart, the file is read twice, once per
 * side, in the memory of two seconds each), and a side on TAI
 * beside samples on UTC is recognised by TAI - UTC between its first
 * market data frame and the first sample, and its stamps taken to UTC.
 *
 * Nothing is matched by nearness in time: a sample whose stamp is no venue
 * frame's, or whose frame the emulator did not see whole, is counted and
 * left out. A frame whose identity comes twice (a TCP retransmission) is
 * ambiguous and left out too.
 *
 * The three are read together, each about in time order (the samples in the
 * order the correlator found them, which is that of their receive stamps):
 * venue frames and truth frames are read up to PAIR_AHEAD past the sample
 * at hand and forgotten PAIR_BEHIND after the latest sample, so memory is
 * bounded by two seconds of traffic, not the run.
 */
#include "report/report_private.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/hmap.h"
#include "base/nstime.h"
#include "base/xalloc.h"
#include "files/capset.h"
#include "files/samples.h"
#include "files/topo.h"
#include "stamp/ts.h"

/* A frame's egress is due its residence after its ingress (the report
 * takes no residence over 1 s), and samples come in the order of their
 * receive stamps, not their send stamps. */
#define PAIR_AHEAD_NS 1000000000LL
#define PAIR_BEHIND_NS 1000000000LL

/* A frame the venue sent: by its stamp. */
struct pair_vframe {
	uint64_t key;
	bool ambiguous;		/* two frames, one stamp */
};

/* A frame the emulator forwarded: by its identity. */
struct pair_tframe {
	int64_t in_ns, res_ns, topo_ns;
	bool have_topo;
	bool ambiguous;		/* the identity twice */
};

/* What to forget, in the order it came. */
struct pair_fifo {
	struct pair_old { int64_t ts; uint64_t key; } *v;
	size_t head, n, cap;
};

static void fifo_push(struct pair_fifo *f, int64_t ts, uint64_t key)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 1024;
		struct pair_old *v = xcalloc(cap, sizeof(*v));

		for (size_t i = 0; i < f->n; i++)
			v[i] = f->v[(f->head + i) % f->cap];
		free(f->v);
		f->v = v;
		f->cap = cap;
		f->head = 0;
	}
	f->v[(f->head + f->n++) % f->cap] = (struct pair_old){ ts, key };
}

/* The sides of the venue's capture: interfaces stamped on the system
 * clock (or not saying), and those stamped on a PHC. */
enum { SIDE_SYS, SIDE_PHC, SIDES };

struct pair {
	struct report *r;
	struct report_rate *rt;
	struct capset *venue[SIDES];	/* the capture, once per side */
	struct capset_packet vp[SIDES];	/* each side's next packet */
	bool vlive[SIDES];
	struct report_truth_rd *truth;
	struct hmap *vmap, *tmap;
	struct pair_fifo vold, told;
	int64_t latest;			/* the latest sample's stamp */
	bool scaled;			/* deltas decided */
	int64_t delta[SIDES];		/* venue stamp - sample stamp */
	int64_t tdelta;			/* truth stamp - sample stamp */
};

/* The side of a packet's interface. */
static int pair_side(const struct cap_reader *c, uint32_t iface)
{
	const struct cap_iface *ci = cap_iface(c, iface);

	if (!ci || !ci->src_known)
		return SIDE_SYS;
	return ci->src.timescale == TS_SCALE_TAI ||
	       ci->src.timescale == TS_SCALE_PHC ||
	       (ci->src.timescale != TS_SCALE_UTC && ci->src.hw) ?
	       SIDE_PHC : SIDE_SYS;
}

/* Side k's next packet: the next of the capture on an interface of k.
 * An error is said once, by the first side. */
static void pair_venue_read(struct pair *p, int k)
{
	int rc;

	while ((rc = capset_next(p->venue[k], &p->vp[k])) == 1) {
		const struct cap_reader *c = capset_reader(p->venue[k], p->vp[k].file);

		if (c && pair_side(c, p->vp[k].pkt.iface) == k)
			break;
	}
	p->vlive[k] = rc == 1;
	if (rc < 0 && k == SIDE_SYS)
		report_notef(p->r, true, "%s", capset_error(p->venue[k]));
}

/* Side k's next packet is a frame the venue sent from md_source. */
static bool pair_venue_md(struct pair *p, int k, uint64_t *key)
{
	const struct cap_reader *c = capset_reader(p->venue[k], p->vp[k].file);

	return p->vp[k].pkt.dir != PCAPNG_DIR_IN && c &&
	       report_md_key(p->r, c, &p->vp[k].pkt, key);
}

/* At the first sample at t: the venue's and the emulator's stamps are on
 * the samples' timescale, or on TAI beside samples on UTC: the first of
 * each is then TAI - UTC later than the first sample, not about as late
 * (it is sent, and goes through the switch, about when it is sampled). */
static void pair_scale(struct pair *p, int64_t t)
{
	int64_t tpos = report_truth_pos(p->truth);
	uint64_t key;

	bool venue_tai = false;

	p->scaled = true;
	for (int k = 0; k < SIDES; k++) {
		while (p->vlive[k] && !pair_venue_md(p, k, &key))
			pair_venue_read(p, k);
		if (p->vlive[k] && p->vp[k].pkt.ts_ns - t > TAI_UTC_NS / 2)
			p->delta[k] = TAI_UTC_NS;
		venue_tai |= p->delta[k] != 0;
	}
	if (tpos != INT64_MAX && tpos - t > TAI_UTC_NS / 2)
		p->tdelta = TAI_UTC_NS;
	if (venue_tai || p->tdelta)
		report_notef(p->r, false, "rate %s: %s on TAI, the samples on UTC: "
			     "taken %d s back to pair them", p->rt->label,
			     venue_tai && p->tdelta ? "the venue's hardware stamps and "
			     "the emulator's captures are" : venue_tai ?
			     "the venue's hardware stamps are" :
			     "the emulator's captures are", TAI_UTC_S);
}

/* The venue's frames up to until, into the map of frames by stamp. */
static void pair_venue_until(struct pair *p, int k, int64_t until)
{
	while (p->vlive[k] && p->vp[k].pkt.ts_ns - p->delta[k] <= until) {
		int64_t ts = p->vp[k].pkt.ts_ns - p->delta[k];
		struct pair_vframe *v;
		uint64_t key;
		void *val;

		if (pair_venue_md(p, k, &key)) {
			if (hmap_add(p->vmap, &ts, &val) == 1) {
				v = val;
				v->key = key;
				fifo_push(&p->vold, ts, 0);
			} else {
				v = val;
				/* The same frame twice (a tap's copy and the
				 * sender's) is one frame. */
				if (v->key != key)
					v->ambiguous = true;
			}
		}
		pair_venue_read(p, k);
	}
}

/* The emulator's frames up to until, into the map by identity. */
static void pair_truth_until(struct pair *p, int64_t until)
{
	struct report_tframe f;

	while (report_truth_pos(p->truth) - p->tdelta <= until &&
	       report_truth_next(p->truth, &f)) {
		struct pair_tframe *t;
		void *val;

		f.in_ns -= p->tdelta;
		if (hmap_add(p->tmap, &f.key, &val) == 1) {
			t = val;
			t->in_ns = f.in_ns;
			t->res_ns = f.res_ns;
			t->topo_ns = f.topo_ns;
			t->have_topo = f.have_topo;
			fifo_push(&p->told, f.in_ns, f.key);
		} else {
			t = val;
			t->ambiguous = true;
		}
	}
}

/* Forget what is PAIR_BEHIND older than the latest sample. */
static void pair_forget(struct pair *p)
{
	int64_t old = p->latest - PAIR_BEHIND_NS;

	while (p->vold.n && p->vold.v[p->vold.head].ts < old) {
		hmap_del(p->vmap, &p->vold.v[p->vold.head].ts);
		p->vold.head = (p->vold.head + 1) % p->vold.cap;
		p->vold.n--;
	}
	while (p->told.n && p->told.v[p->told.head].ts < old) {
		struct pair_old *o = &p->told.v[p->told.head];
		struct pair_tframe *t = hmap_find(p->tmap, &o->key);

		/* An identity seen twice stays until its first goes. */
		if (t && t->in_ns == o->ts)
			hmap_del(p->tmap, &o->key);
		p->told.head = (p->told.head + 1) % p->told.cap;
		p->told.n--;
	}
}

static void pair_add(struct report_err *e, const struct samples_rec *s,
		     int64_t truth)
{
	int64_t err;

	if (__builtin_sub_overflow(s->latency_ns, truth, &err))
		return;
	e->paired++;
	if (s->sync == SAMPLES_SYNC_OUT) {
		e->out++;
		return;
	}
	hist_add(e->err, err);
	if (s->sync == SAMPLES_SYNC_HOLDOVER)
		e->holdover++;
	if ((s->sync != SAMPLES_SYNC_IN && s->sync != SAMPLES_SYNC_HOLDOVER) ||
	    s->bound_ns < 0)
		return;
	e->bounded++;
	hist_add(e->bound, s->bound_ns);
	report_terms_add(&e->terms, s->term_ns);
	if (err <= s->bound_ns && err >= -s->bound_ns)
		e->inside++;
}

/* One sample of the switch or hop series. */
static void pair_sample(struct pair *p, int series, const struct samples_rec *s)
{
	struct report_pairing *pr = &p->rt->pair;
	const struct pair_vframe *v;
	const struct pair_tframe *t;

	pr->looked++;
	if (!p->scaled)
		pair_scale(p, s->time_ns);
	if (s->time_ns > p->latest)
		p->latest = s->time_ns;
	/* Both stamps come at or after the sample's: read up to a second
	 * past it, and forget what is a second behind the latest. */
	for (int k = 0; k < SIDES; k++)
		pair_venue_until(p, k, s->time_ns + PAIR_AHEAD_NS);
	pair_truth_until(p, s->time_ns + PAIR_AHEAD_NS);
	pair_forget(p);
	v = hmap_find(p->vmap, &s->time_ns);
	if (!v) {
		pr->no_frame++;
		return;
	}
	t = v->ambiguous ? NULL : hmap_find(p->tmap, &v->key);
	if (v->ambiguous || (t && t->ambiguous)) {
		pr->ambiguous++;
		return;
	}
	if (!t) {
		pr->no_truth++;
		return;
	}
	if (series == S_SWITCH && t->have_topo)
		pair_add(&pr->e[E_SWITCH], s, t->topo_ns);
	else if (series == S_HOP && pr->have_prop)
		pair_add(&pr->e[E_HOP], s, t->res_ns + llround(pr->prop_ns));
}

/* The cables of the path venue -> algo, from the rate's topology file:
 * the hop's truth is the residence plus them. */
static void pair_prop(struct report *r, struct report_rate *rt)
{
	struct report_pairing *pr = &rt->pair;
	char path[PATH_MAX + 32], err[TOPO_ERRBUF];
	struct topo_path tp;
	struct topo *t;

	snprintf(path, sizeof(path), "%s/rate-%ld/topology", r->dir, rt->rate);
	if (topo_load(&t, path, err)) {
		snprintf(pr->why_hop, sizeof(pr->why_hop), "no cables to add to "
			 "the residence (%s)", err);
		return;
	}
	if (topo_path(t, r->venue, r->algo, &tp) || !tp.sw) {
		snprintf(pr->why_hop, sizeof(pr->why_hop), "%s names no path "
			 "%s -> %s through a switch", path, r->venue, r->algo);
	} else {
		pr->have_prop = true;
		pr->prop_ns = tp.prop_ns;
	}
	topo_destroy(t);
}

void report_pair_load(struct report *r, struct report_rate *rt)
{
	struct report_pairing *pr = &rt->pair;
	struct pair p = { .r = r, .rt = rt, .latest = INT64_MIN };
	char dir[PATH_MAX + 64], err[CAP_ERRBUF], *line = NULL;
	const char *paths[1] = { dir };
	size_t cap = 0;
	FILE *f = NULL;

	for (int k = 0; k < E_COUNT; k++) {
		pr->e[k].err = hist_create();
		pr->e[k].bound = hist_create();
	}
	p.truth = report_truth_open(r, rt);
	if (!p.truth) {
		snprintf(pr->why, sizeof(pr->why), "no truth: %s", rt->truth.why);
		goto out;
	}
	if (!rt->have_samples) {
		snprintf(pr->why, sizeof(pr->why), "no samples");
		goto out;
	}
	snprintf(dir, sizeof(dir), "%s/rate-%ld/switch/%s", r->dir, rt->rate,
		 r->venue);
	for (int k = 0; k < SIDES; k++) {
		if (capset_open(&p.venue[k], paths, 1, err)) {
			snprintf(pr->why, sizeof(pr->why), "the samples' stamps "
				 "cannot be tied to frames without the venue's "
				 "capture: %s", err);
			goto out;
		}
	}
	f = fopen(rt->path, "r");
	if (!f) {
		snprintf(pr->why, sizeof(pr->why), "%s: %s", rt->path,
			 strerror(errno));
		goto out;
	}
	pair_prop(r, rt);
	hmap_create(&p.vmap, sizeof(int64_t), sizeof(struct pair_vframe), 4096,
		    false);
	hmap_create(&p.tmap, sizeof(uint64_t), sizeof(struct pair_tframe), 4096,
		    false);
	for (int k = 0; k < SIDES; k++)
		pair_venue_read(&p, k);
	while (getline(&line, &cap, f) >= 0) {
		struct samples_rec s;
		int k;

		if (samples_parse(line, &s))
			continue;
		k = report_series_of(r, &s);
		if (k == S_SWITCH || k == S_HOP)
			pair_sample(&p, k, &s);
	}
	pr->have = pr->e[E_SWITCH].paired || pr->e[E_HOP].paired;
	if (!pr->have)
		snprintf(pr->why, sizeof(pr->why), "none of %llu switch and hop "
			 "samples could be tied to a frame the emulator forwarded "
			 "(%llu with no venue frame of their stamp, %llu with no "
			 "emulator frame, %llu ambiguous)", pr->looked,
			 pr->no_frame, pr->no_truth, pr->ambiguous);
	else if (pr->no_frame + pr->no_truth + pr->ambiguous)
		report_notef(r, false, "rate %s: of %llu switch and hop samples, "
			     "%llu have no venue frame with their stamp, %llu no "
			     "frame in the emulator's truth, %llu an ambiguous one "
			     "(a retransmission): left out of the error and its "
			     "coverage", rt->label, pr->looked, pr->no_frame,
			     pr->no_truth, pr->ambiguous);
out:
	/* Without truth the rate's note says so already. */
	if (!pr->have && *pr->why && p.truth)
		report_notef(r, false, "rate %s: no per-sample error: %s",
			     rt->label, pr->why);
	if (f)
		fclose(f);
	free(line);
	for (int k = 0; k < SIDES; k++)
		if (p.venue[k])
			capset_close(p.venue[k]);
	report_truth_close(p.truth, rt, r);
	if (p.vmap)
		hmap_destroy(p.vmap);
	if (p.tmap)
		hmap_destroy(p.tmap);
	free(p.vold.v);
	free(p.told.v);
}
