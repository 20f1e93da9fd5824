/* corr_stats.c — the correlator's results (see corr_private.h): sets of
 * histograms keyed by hop, flow, rate bucket, transaction and switch, each
 * with the tallies of its samples' error bounds; the bound of one sample
 * from the hosts' sync journals; the samples file; the sets in print
 * order.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptp/bound.h"
#include "files/calib.h"
#include "base/hist.h"
#include "base/xalloc.h"
#include "corr/corr_private.h"
#include "files/samples.h"

/* A result's identity. sw points into the topology, which outlives us:
 * its address is as good a key as its name. */
struct corr_stat_key {
	uint16_t from, to;
	uint32_t flow;
	int32_t bucket, kind;
	const char *sw;
};

static void corr_stat_key(struct corr_stat_key *k, uint16_t from,
			  uint16_t to, uint32_t flow, int bucket, int kind,
			  const char *sw)
{
	memset(k, 0, sizeof(*k));
	k->from = from;
	k->to = to;
	k->flow = flow;
	k->bucket = bucket;
	k->kind = kind;
	k->sw = sw;
}

void corr_stats_init(struct corr_stats_set *s)
{
	/* Fixed sizes: cannot fail. */
	hmap_create(&s->idx, sizeof(struct corr_stat_key), sizeof(size_t), 32,
		    false);
}

struct corr_stat *corr_stat(struct corr_stats_set *set, uint16_t from,
			    uint16_t to, uint32_t flow, int bucket,
			    int kind, const char *sw)
{
	struct corr_stat_key k;
	size_t *idx;
	void *v;

	corr_stat_key(&k, from, to, flow, bucket, kind, sw);
	if (hmap_add(set->idx, &k, &v) == 0)
		return &set->v[*(size_t *)v];
	idx = v;
	*idx = set->n;
	if (set->n == set->cap) {
		set->cap = set->cap ? set->cap * 2 : 16;
		set->v = xrealloc(set->v, set->cap * sizeof(*set->v));
	}
	struct corr_stat *s = &set->v[set->n];
	*s = (struct corr_stat){
		.from = from, .to = to, .flow = flow, .bucket = bucket,
		.kind = kind, .sw = sw,
	};
	if (!set->bare) {
		s->h = hist_create();
		s->out = hist_create();
	}
	set->n++;
	return s;
}

struct corr_stat *corr_stat_find(const struct corr_stats_set *set,
				 uint16_t from, uint16_t to, uint32_t flow,
				 int bucket, int kind, const char *sw)
{
	struct corr_stat_key k;
	const size_t *idx;

	corr_stat_key(&k, from, to, flow, bucket, kind, sw);
	idx = hmap_find(set->idx, &k);
	return idx ? &set->v[*idx] : NULL;
}

size_t corr_stats_drop_flow(struct corr_stats_set *set, uint32_t flow)
{
	struct corr_stat_key k;
	size_t i = 0, dropped = 0;

	while (i < set->n) {
		struct corr_stat *s = &set->v[i];
		size_t *idx;

		if (s->flow != flow) {
			i++;
			continue;
		}
		corr_stat_key(&k, s->from, s->to, s->flow, s->bucket, s->kind,
			      s->sw);
		hmap_del(set->idx, &k);
		hist_destroy(s->h);
		hist_destroy(s->out);
		if (set->ext_free)
			set->ext_free(s->ext);
		dropped++;
		/* The last result into the hole, its index with it. */
		if (i != --set->n) {
			*s = set->v[set->n];
			corr_stat_key(&k, s->from, s->to, s->flow, s->bucket,
				      s->kind, s->sw);
			idx = hmap_find(set->idx, &k);
			*idx = i;
		}
	}
	return dropped;
}

/* One sample v (sync: enum corr_sync; bound: -1 unknown): out-of-sync
 * samples to s->out, the others to s->h with their bound tallied (and
 * those in holdover counted in s->holdover besides). */
static void corr_stat_add(struct corr_stat *s, int64_t v, int sync,
			  int64_t bound)
{
	if (sync == SYNC_OUT) {
		hist_add(s->out, v);
		return;
	}
	hist_add(s->h, v);
	if (sync == SYNC_HOLD)
		s->holdover++;
	if (bound >= 0) {
		s->bound_known++;
		s->bound_sum += (double)bound;
		if (bound > s->bound_max)
			s->bound_max = bound;
	} else {
		s->bound_unknown++;
	}
}

static bool corr_bounded(int sync)
{
	return sync == SYNC_IN || sync == SYNC_HOLD;
}

const char *const corr_term_names[CORR_TERMS] = {
	"clock", "holdover", "stamp", "resolution",
};

/* A hop sample's standing from its two ends' (corr_obs_bound()): out of
 * sync when either end was; else bounded when both were (in holdover when
 * either was, in sync when both were), else SYNC_NONE (a host without a
 * journal), in *sync. Returns the bound on its error: the sum of both
 * ends' and of the stamps' term (when known) when bounded and both ends
 * have one, else -1 (unknown). */
int64_t corr_hop_bound(const struct corr_obs *tx, const struct corr_obs *rx,
		       int64_t stamp_ns, int *sync, struct corr_terms *t)
{
	int64_t bound = -1;

	for (int k = 0; k < CORR_TERMS; k++)
		t->v[k] = -1;
	*sync = SYNC_NONE;
	if (tx->sync == SYNC_OUT || rx->sync == SYNC_OUT)
		*sync = SYNC_OUT;
	else if (corr_bounded(tx->sync) && corr_bounded(rx->sync))
		*sync = tx->sync == SYNC_HOLD || rx->sync == SYNC_HOLD ?
			SYNC_HOLD : SYNC_IN;
	if (!corr_bounded(*sync) || tx->bound < 0 || rx->bound < 0)
		return -1;
	bound = tx->bound - tx->cut + rx->bound - rx->cut;
	t->v[CORR_TERM_HOLDOVER] = (int64_t)tx->hold + rx->hold;
	t->v[CORR_TERM_RESOLUTION] = (int64_t)tx->res + rx->res;
	t->v[CORR_TERM_CLOCK] = bound - t->v[CORR_TERM_HOLDOVER] -
				t->v[CORR_TERM_RESOLUTION];
	if (stamp_ns >= 0) {
		t->v[CORR_TERM_STAMP] = stamp_ns;
		bound += stamp_ns;
	}
	return bound;
}

void corr_stat_take(struct corr_stat *s, const struct corr_sample *x)
{
	const struct corr_terms *t = x->terms;

	corr_stat_add(s, x->v, x->sync, x->bound);
	if (!t || x->sync == SYNC_OUT || x->bound < 0)
		return;
	for (int k = 0; k < CORR_TERMS; k++)
		if (t->v[k] >= 0)
			s->term_sum[k] += (double)t->v[k];
	if (t->v[CORR_TERM_STAMP] < 0)
		s->stamp_unknown++;
}

/* App to wire: per sender, session and message type, with the tag taken
 * and the coarsest resolution met (the result's ext). */
static void corr_stats_app(struct corr *c, const struct corr_sample *x)
{
	struct corr_stat *s = corr_stat(&c->app, x->from, x->to, x->flow,
					NO_BUCKET, x->kind, NULL);
	struct corr_app_info *a = s->ext;

	if (!a) {
		a = s->ext = xcalloc(1, sizeof(*a));
		*a = *x->app;
	}
	if (x->app->resolution_ns > a->resolution_ns)
		*a = *x->app;
	corr_stat_take(s, x);
}

/* The results printed at the end: every sample in its figure's result
 * (all flows), its rate bucket's (by rate) and, reading files, its
 * flow's. A follower makes no per-flow results here: it meets a new flow
 * with every new connection, for days (the live view keeps a bounded
 * number of them for the metrics). */
static void corr_stats_sample(struct corr *c, const struct corr_sample *x)
{
	struct corr_stats_set *set = x->set == CORR_SET_HOPS ? &c->hops :
				     x->set == CORR_SET_TXNS ? &c->txns :
				     &c->switches;

	if (x->set == CORR_SET_APP) {
		corr_stats_app(c, x);
		return;
	}

	corr_stat_take(corr_stat(set, x->from, x->to, ALL_FLOWS, NO_BUCKET,
				 x->kind, x->sw), x);
	if (x->set == CORR_SET_HOPS && !c->cfg.follow)
		corr_stat_take(corr_stat(set, x->from, x->to, x->flow,
					 NO_BUCKET, -1, NULL), x);
	if (x->bucket != NO_BUCKET)
		corr_stat_take(corr_stat(set, x->from, x->to, ALL_FLOWS,
					 x->bucket, x->kind, x->sw), x);
}

const struct corr_sink corr_stats_sink = { .sample = corr_stats_sample };

const struct calib_term *corr_calib(const struct corr_host *h, int dir,
				    bool hw)
{
	const struct calib_term *t;

	if (!h->cal || (dir != DIR_OUT && dir != DIR_IN))
		return NULL;
	t = &h->cal->t[dir == DIR_OUT ? CALIB_TX : CALIB_RX]
		      [hw ? CALIB_HW : CALIB_SW];
	return t->set ? t : NULL;
}

static enum samples_sync corr_samples_sync(int sync)
{
	switch (sync) {
	case SYNC_IN: return SAMPLES_SYNC_IN;
	case SYNC_OUT: return SAMPLES_SYNC_OUT;
	case SYNC_HOLD: return SAMPLES_SYNC_HOLDOVER;
	default: return SAMPLES_SYNC_NONE;
	}
}

int corr_sync_of(int state)
{
	switch (state) {
	case BOUND_IN_SYNC: return SYNC_IN;
	case BOUND_OUT_OF_SYNC: return SYNC_OUT;
	case BOUND_HOLDOVER: return SYNC_HOLD;
	default: return SYNC_NONE;
	}
}

const char *corr_sync_name(int sync)
{
	return samples_sync_name(corr_samples_sync(sync));
}

/* A clock phc2sys keeps: its offset from its reference at the stamp, and
 * the share of the bound that taking it off leaves out (bound_offset_at()).
 * Offsets past 2 s are not taken: nothing kept in sync is that far. */
static bool corr_obs_clock(const struct corr_host *h,
			   const struct corr_iface *ifc, struct corr_obs *o)
{
	int64_t off, part;

	if (bound_offset_at(h->bound, ifc->clock, o->ts + ifc->journal_ns,
			    &off, &part) ||
	    off > INT32_MAX || off < -INT32_MAX || part > o->bound ||
	    part < -INT32_MAX)
		return false;
	o->clk = (int32_t)off;
	o->cut = (int32_t)part;
	return true;
}

/* Where the host's clock stood at the observation's stamp, from its sync
 * journal: o->sync and o->bound (-1: unknown, as without a journal). */
bool corr_obs_bound(const struct corr_host *h, const struct corr_iface *ifc,
		    struct corr_obs *o)
{
	int64_t b, fresh;

	o->bound = -1;
	o->hold = 0;
	o->res = 0;
	o->clk = 0;
	o->cut = 0;
	o->hw = ifc->hw;
	if (h->bound) {
		enum bound_state st = bound_at_split(h->bound, ifc->clock,
						     o->ts + ifc->journal_ns,
						     &b, &fresh);
		o->sync = corr_sync_of(st);
		if (corr_bounded(o->sync) && b >= 0) {
			int64_t res = ifc->resolution_ns - 1;

			/* What holdover grew, and the resolution (a stamp cut
			 * to it is up to that much early): terms of the
			 * bound, kept apart for the output. */
			o->hold = fresh >= 0 && b - fresh < INT32_MAX ?
				  (int32_t)(b - fresh) : 0;
			o->res = res < UINT16_MAX ? (uint16_t)res : UINT16_MAX;
			b += res;
		}
		o->bound = b;
		/* A clock phc2sys keeps: on its reference's time by the
		 * offset phc2sys read, which its bound held. */
		if (o->sync == SYNC_IN && b >= 0)
			return corr_obs_clock(h, ifc, o);
	}
	return false;
}

/* The samples file (files/samples.h, cfg.samples): a line a sample. */
static void corr_samples_sample(struct corr *c, const struct corr_sample *x)
{
	struct samples_rec r = {
		.run = c->cfg.samples_run,
		.kind = x->set == CORR_SET_HOPS ? "hop" :
			x->set == CORR_SET_SWITCHES ? "switch" :
			x->set == CORR_SET_APP ? "app_to_wire" :
			corr_txn_names[x->kind],
		.from = c->hosts[x->from]->name, .to = c->hosts[x->to]->name,
		.time_ns = x->ts, .latency_ns = x->v, .bound_ns = x->bound,
		.sync = corr_samples_sync(x->sync),
		.rate = x->bucket == NO_BUCKET ? 0.0 : c->cfg.rates[x->bucket],
		.sw = x->set == CORR_SET_APP ? corr_app_type_name(c, x->kind) :
		      x->sw ? x->sw : "-",
	};

	for (int k = 0; k < CORR_TERMS; k++)
		r.term_ns[k] = x->terms ? x->terms->v[k] : -1;

	/* A write error shows at the close (wholefile), which fails the
	 * command and keeps the file from its final name. */
	(void)samples_write(c->cfg.samples, &r);
}

const struct corr_sink corr_samples_sink = { .sample = corr_samples_sample };

static int corr_stat_order(const void *x, const void *y)
{
	const struct corr_stat *a = x, *b = y;

	if (a->from != b->from)
		return a->from < b->from ? -1 : 1;
	if (a->to != b->to)
		return a->to < b->to ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->bucket != b->bucket)
		return a->bucket < b->bucket ? -1 : 1;
	if (a->flow != b->flow)
		return a->flow == ALL_FLOWS ? -1 : b->flow == ALL_FLOWS ? 1 :
		       a->flow < b->flow ? -1 : 1;
	return 0;
}

/* The results in a stable order, for printing (a copy: printing leaves
 * the correlator as it was). An empty set (no trades, no switch) has no
 * array yet: nothing to copy from. */
struct corr_stat *corr_sorted(const struct corr_stats_set *set)
{
	struct corr_stat *v = xcalloc(set->n ? set->n : 1, sizeof(*v));

	if (!set->n)
		return v;
	memcpy(v, set->v, set->n * sizeof(*v));
	qsort(v, set->n, sizeof(*v), corr_stat_order);
	return v;
}

/* How far below the true sample any printed percentile may be. */
int64_t corr_hist_error(const struct corr *c)
{
	const struct corr_stats_set *sets[] = {
		&c->hops, &c->txns, &c->switches, &c->app,
	};
	int64_t e = 0;

	for (unsigned k = 0; k < sizeof(sets) / sizeof(sets[0]); k++)
		for (size_t i = 0; i < sets[k]->n; i++) {
			if (!sets[k]->v[i].h)
				continue;
			if (hist_error_ns(sets[k]->v[i].h) > e)
				e = hist_error_ns(sets[k]->v[i].h);
			if (hist_error_ns(sets[k]->v[i].out) > e)
				e = hist_error_ns(sets[k]->v[i].out);
		}
	return e;
}

void corr_stats_free(struct corr_stats_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		hist_destroy(s->v[i].h);
		hist_destroy(s->v[i].out);
		if (s->ext_free)
			s->ext_free(s->v[i].ext);
	}
	free(s->v);
	hmap_destroy(s->idx);
}
