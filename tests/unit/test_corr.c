/* test_corr.c — the correlator's pieces, driven through its internals
 * (corr/corr_private.h) with in-memory input: result sets (a known set's
 * percentiles, mean and SD; the empty set; the print order), the error
 * bound of one sample (from a sync journal) and of a hop (from both ends),
 * matching across hosts (pairs, direction taken from the peer, duplicates,
 * the window, unmatched at the end), the FTTC transactions from FIX
 * messages and the market data rate bucket. Whole captures are the replay
 * tier's (tests/replay/test_correlate.sh). */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hist.h"
#include "base/metrics.h"
#include "base/print.h"
#include "base/summary.h"
#include "corr/corr_private.h"
#include "fix/fix.h"
#include "ptp/bound.h"
#include "unit.h"

/* A correlator with n hosts h0, h1, ... and no captures: set up as
 * corr_add_host() does, less the capset (corr_destroy() takes NULL). */
static struct corr *corr_with_hosts(unsigned n, const struct corr_config *cfg)
{
	struct corr_config def;
	struct corr *c;

	if (!cfg) {
		corr_config_init(&def);
		cfg = &def;
	}
	ck_assert_int_eq(corr_create(&c, cfg), 0);
	for (unsigned i = 0; i < n; i++) {
		struct corr_host *h = calloc(1, sizeof(*h));

		ck_assert_ptr_nonnull(h);
		snprintf(h->name, sizeof(h->name), "h%u", i);
		h->idx = i;
		h->forced_scale = -1;
		h->bucket = NO_BUCKET;
		h->orders = calloc(CORR_ORDERS, sizeof(*h->orders));
		ck_assert_ptr_nonnull(h->orders);
		c->hosts[c->nhosts++] = h;
	}
	return c;
}

static struct summary summary_of_hist(const struct hist *h)
{
	struct summary s;

	hist_summary(h, &s);
	return s;
}

/* ---- result sets ---- */

/* A sample of v into result s, as the results' sink takes it. */
static void stat_add(struct corr_stat *s, int64_t v, int sync, int64_t bound,
		     const struct corr_terms *t)
{
	struct corr_sample x = {
		.from = s->from, .to = s->to, .flow = s->flow,
		.bucket = s->bucket, .kind = s->kind, .sw = s->sw, .v = v,
		.sync = sync, .bound = bound, .terms = t,
	};

	corr_stat_take(s, &x);
}

START_TEST(stats_known_set)
{
	struct corr_stats_set set;
	struct corr_stat *s;
	struct summary sm;

	memset(&set, 0, sizeof(set));
	corr_stats_init(&set);
	s = corr_stat(&set, 0, 1, ALL_FLOWS, NO_BUCKET, -1, NULL);
	/* 1..100 shuffled, each in sync with bound v % 7 (0..6), except
	 * every tenth without a bound. */
	for (int i = 0; i < 100; i++) {
		int64_t v = (i * 37) % 100 + 1;

		stat_add(s, v, SYNC_IN, v % 10 ? v % 7 : -1, NULL);
	}
	/* Out of sync: kept apart, bounds not tallied. */
	stat_add(s, 5000, SYNC_OUT, 1000, NULL);
	stat_add(s, 7000, SYNC_OUT, -1, NULL);
	sm = summary_of_hist(s->h);
	ck_assert_uint_eq(sm.n, 100);
	ck_assert_int_eq(sm.min, 1);
	ck_assert_int_eq(sm.max, 100);
	ck_assert_int_eq(sm.p50, 50);
	ck_assert_int_eq(sm.p90, 90);
	ck_assert_int_eq(sm.p99, 99);
	ck_assert_int_eq(sm.p999, 100);
	ck_assert(fabs(sm.mean - 50.5) < 1e-9);
	/* Sample SD of 1..100: sqrt(100 * 101 / 12). */
	ck_assert(fabs(sm.sd - sqrt(100.0 * 101.0 / 12.0)) < 1e-9);
	ck_assert_uint_eq(hist_count(s->out), 2);
	sm = summary_of_hist(s->out);
	ck_assert(fabs(sm.mean - 6000) < 1e-9);
	ck_assert_uint_eq(s->bound_known, 90);
	ck_assert_uint_eq(s->bound_unknown, 10);
	ck_assert_int_eq(s->bound_max, 6);
	/* The same key finds the same result; another key another. */
	ck_assert_ptr_eq(corr_stat(&set, 0, 1, ALL_FLOWS, NO_BUCKET, -1, NULL), s);
	ck_assert_ptr_ne(corr_stat(&set, 0, 1, 3, NO_BUCKET, -1, NULL), s);
	ck_assert_ptr_ne(corr_stat(&set, 0, 1, ALL_FLOWS, 2, -1, NULL), s);
	ck_assert_uint_eq(set.n, 3);
	corr_stats_free(&set);
}
END_TEST

START_TEST(stats_bound_sum)
{
	struct corr_stats_set set;
	struct corr_stat *s;

	memset(&set, 0, sizeof(set));
	corr_stats_init(&set);
	s = corr_stat(&set, 2, 0, ALL_FLOWS, NO_BUCKET, -1, NULL);
	stat_add(s, 100, SYNC_IN, 10, NULL);
	stat_add(s, 200, SYNC_IN, 30, NULL);
	/* No journal: counted, no bound. */
	stat_add(s, 300, SYNC_NONE, -1, NULL);
	ck_assert_uint_eq(hist_count(s->h), 3);
	ck_assert_uint_eq(s->bound_known, 2);
	ck_assert_uint_eq(s->bound_unknown, 1);
	ck_assert_int_eq(s->bound_max, 30);
	ck_assert(fabs(s->bound_sum - 40) < 1e-9);
	ck_assert_uint_eq(s->holdover, 0);
	/* Holdover: in the figures with its (wider) bound, and counted. */
	stat_add(s, 400, SYNC_HOLD, 90, NULL);
	stat_add(s, 500, SYNC_OUT, 95, NULL);
	ck_assert_uint_eq(hist_count(s->h), 4);
	ck_assert_uint_eq(hist_count(s->out), 1);
	ck_assert_uint_eq(s->holdover, 1);
	ck_assert_uint_eq(s->bound_known, 3);
	ck_assert_int_eq(s->bound_max, 90);
	ck_assert(fabs(s->bound_sum - 130) < 1e-9);
	corr_stats_free(&set);
}
END_TEST

START_TEST(stats_empty)
{
	struct corr *c = corr_with_hosts(0, NULL);
	struct corr_stat *v;
	struct summary sm;

	/* No trades, no switch: sets with nothing in them. */
	ck_assert_uint_eq(c->txns.n, 0);
	v = corr_sorted(&c->txns);
	ck_assert_ptr_nonnull(v);
	free(v);
	ck_assert_int_eq(corr_hist_error(c), 0);
	ck_assert(!corr_measured(c));
	/* A result with no samples summarises to zeros. */
	sm = summary_of_hist(corr_stat(&c->hops, 0, 1, ALL_FLOWS, NO_BUCKET,
				       -1, NULL)->h);
	ck_assert_uint_eq(sm.n, 0);
	ck_assert_int_eq(sm.p50, 0);
	ck_assert(sm.mean == 0 && sm.sd == 0);
	corr_destroy(c);
}
END_TEST

START_TEST(stats_order)
{
	struct corr_stats_set set;
	struct corr_stat *v;
	static const struct { uint16_t from, to; uint32_t flow; int bucket, kind; } in[] = {
		{ 1, 0, ALL_FLOWS, NO_BUCKET, -1 },
		{ 0, 1, 7, NO_BUCKET, -1 },
		{ 0, 1, ALL_FLOWS, 2, -1 },
		{ 0, 1, 3, NO_BUCKET, -1 },
		{ 0, 1, ALL_FLOWS, NO_BUCKET, -1 },
		{ 0, 0, ALL_FLOWS, NO_BUCKET, TXN_FILL_TO_SELL },
		{ 0, 0, ALL_FLOWS, NO_BUCKET, TXN_TICK_TO_TRADE },
	};
	/* from, to, kind, bucket, then all flows before each flow. */
	static const int want[] = { 6, 5, 4, 3, 1, 2, 0 };

	memset(&set, 0, sizeof(set));
	corr_stats_init(&set);
	for (unsigned i = 0; i < sizeof(in) / sizeof(in[0]); i++)
		stat_add(corr_stat(&set, in[i].from, in[i].to, in[i].flow,
				   in[i].bucket, in[i].kind, NULL),
			 (int64_t)i, SYNC_NONE, -1, NULL);
	v = corr_sorted(&set);
	for (unsigned i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		struct summary sm = summary_of_hist(v[i].h);

		ck_assert_msg(sm.min == want[i], "position %u: entry %lld, "
			      "want %d", i, (long long)sm.min, want[i]);
	}
	/* A copy: the set itself keeps its order. */
	ck_assert_uint_eq(set.v[0].from, 1);
	free(v);
	corr_stats_free(&set);
}
END_TEST

/* ---- error bounds ---- */

START_TEST(hop_bound_combination)
{
	static const struct {
		int tx_sync, rx_sync;
		int64_t tx_bound, rx_bound;
		int sync;
		int64_t bound;
	} t[] = {
		{ SYNC_IN, SYNC_IN, 5, 7, SYNC_IN, 12 },
		{ SYNC_IN, SYNC_IN, 0, 0, SYNC_IN, 0 },
		/* An end in sync without a bound: the sum is unknown. */
		{ SYNC_IN, SYNC_IN, -1, 7, SYNC_IN, -1 },
		{ SYNC_IN, SYNC_IN, 5, -1, SYNC_IN, -1 },
		/* Either end out of sync: the sample is. */
		{ SYNC_OUT, SYNC_IN, 5, 7, SYNC_OUT, -1 },
		{ SYNC_IN, SYNC_OUT, 5, 7, SYNC_OUT, -1 },
		{ SYNC_OUT, SYNC_NONE, 5, -1, SYNC_OUT, -1 },
		/* An end without a journal: neither in nor out. */
		{ SYNC_IN, SYNC_NONE, 5, -1, SYNC_NONE, -1 },
		{ SYNC_NONE, SYNC_IN, -1, 7, SYNC_NONE, -1 },
		{ SYNC_NONE, SYNC_NONE, -1, -1, SYNC_NONE, -1 },
		/* Holdover at either end, the other bounded: holdover,
		 * the bounds summed. */
		{ SYNC_HOLD, SYNC_IN, 500, 7, SYNC_HOLD, 507 },
		{ SYNC_IN, SYNC_HOLD, 5, 700, SYNC_HOLD, 705 },
		{ SYNC_HOLD, SYNC_HOLD, 500, 700, SYNC_HOLD, 1200 },
		{ SYNC_HOLD, SYNC_IN, -1, 7, SYNC_HOLD, -1 },
		/* Out of sync beats holdover; no journal leaves it none. */
		{ SYNC_HOLD, SYNC_OUT, 500, -1, SYNC_OUT, -1 },
		{ SYNC_OUT, SYNC_HOLD, -1, 700, SYNC_OUT, -1 },
		{ SYNC_HOLD, SYNC_NONE, 500, -1, SYNC_NONE, -1 },
		{ SYNC_NONE, SYNC_HOLD, -1, 700, SYNC_NONE, -1 },
	};

	for (unsigned i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct corr_obs tx = { .sync = (uint8_t)t[i].tx_sync,
				       .bound = t[i].tx_bound };
		struct corr_obs rx = { .sync = (uint8_t)t[i].rx_sync,
				       .bound = t[i].rx_bound };
		struct corr_terms terms;
		int sync = -1;
		int64_t b = corr_hop_bound(&tx, &rx, -1, &sync, &terms);

		ck_assert_msg(sync == t[i].sync && b == t[i].bound,
			      "case %u: sync %d bound %lld, want %d %lld", i,
			      sync, (long long)b, t[i].sync,
			      (long long)t[i].bound);
	}
}
END_TEST

/* The bound's terms add up to it: each end's clock, what holdover grew,
 * the stamps' term when known (else left out, and said: -1), the
 * resolution; none when the bound is unknown. */
START_TEST(hop_bound_terms)
{
	struct corr_obs tx = { .sync = SYNC_HOLD, .bound = 1000 + 300 + 7,
			       .hold = 300, .res = 7 };
	struct corr_obs rx = { .sync = SYNC_IN, .bound = 50 + 0, .res = 0 };
	struct corr_terms t;
	int sync;
	int64_t b = corr_hop_bound(&tx, &rx, 240, &sync, &t);

	ck_assert_int_eq(sync, SYNC_HOLD);
	ck_assert_int_eq(b, 1307 + 50 + 240);
	ck_assert_int_eq(t.v[CORR_TERM_CLOCK], 1000 + 50);
	ck_assert_int_eq(t.v[CORR_TERM_HOLDOVER], 300);
	ck_assert_int_eq(t.v[CORR_TERM_STAMP], 240);
	ck_assert_int_eq(t.v[CORR_TERM_RESOLUTION], 7);
	ck_assert_int_eq(t.v[0] + t.v[1] + t.v[2] + t.v[3], b);
	/* No stamp term: the bound without it, the term unknown. */
	b = corr_hop_bound(&tx, &rx, -1, &sync, &t);
	ck_assert_int_eq(b, 1307 + 50);
	ck_assert_int_eq(t.v[CORR_TERM_STAMP], -1);
	ck_assert_int_eq(t.v[CORR_TERM_CLOCK], 1050);
	/* Out of sync: no bound, no terms, whatever the stamps. */
	rx.sync = SYNC_OUT;
	b = corr_hop_bound(&tx, &rx, 240, &sync, &t);
	ck_assert_int_eq(b, -1);
	for (int k = 0; k < CORR_TERMS; k++)
		ck_assert_int_eq(t.v[k], -1);
}
END_TEST

/* Tallies: each term's sum over the bounded samples, the stamp term's
 * absence counted; out-of-sync samples add nothing. */
START_TEST(stat_terms_tally)
{
	struct corr_stats_set set;
	struct corr_stat *s;
	struct corr_terms a = { { 100, 0, 40, 1 } }, b = { { 300, 20, -1, 1 } };

	memset(&set, 0, sizeof(set));
	corr_stats_init(&set);
	s = corr_stat(&set, 0, 1, ALL_FLOWS, NO_BUCKET, -1, NULL);
	stat_add(s, 10, SYNC_IN, 141, &a);
	stat_add(s, 10, SYNC_HOLD, 321, &b);
	stat_add(s, 10, SYNC_OUT, 999, &a);
	ck_assert_uint_eq(s->bound_known, 2);
	ck_assert(s->term_sum[CORR_TERM_CLOCK] == 400.0);
	ck_assert(s->term_sum[CORR_TERM_HOLDOVER] == 20.0);
	ck_assert(s->term_sum[CORR_TERM_STAMP] == 40.0);
	ck_assert_uint_eq(s->stamp_unknown, 1);
	corr_stats_free(&set);
}
END_TEST

#define T0 1763900000000000000LL
#define S 1000000000LL

static char dir[64];

static void tmp_setup(void)
{
	unit_tmpdir(dir, "corr");
}

static void tmp_teardown(void)
{
	unit_rmdir(dir);
}

START_TEST(obs_bound_from_journal)
{
	struct corr *c = corr_with_hosts(2, NULL);
	struct corr_iface ifc = { .resolution_ns = 1, .clock = "phc0" };
	struct corr_obs o;
	char path[128], err[JOURNAL_ERRBUF];
	struct corr_host *h = c->hosts[0];

	/* In sync (bound 33 ns) for two seconds, then out of sync. */
	snprintf(path, sizeof(path), "%s/h0.journal", dir);
	unit_write_file(path,
		"# tapless-journal 1 host h0\n"
		"# time_ns sample clock state offset_ns delay_ns freq_ppb gm steps servo sync bound_ns\n"
		"1763900000000000000 sample phc0 SLAVE 16 500 -0.959 001b21.fffe.7a5e01 1 s2 1 33\n"
		"1763900001000000000 sample phc0 SLAVE 15 500 -0.910 001b21.fffe.7a5e01 1 s2 1 33\n"
		"1763900002000000000 sample phc0 UNCALIBRATED 900 500 -0.910 001b21.fffe.7a5e01 1 s2 0 -\n");
	ck_assert_int_eq(bound_open(&h->bound, path, 3 * S, err), 0);

	memset(&o, 0, sizeof(o));
	o.ts = T0 + S / 2;
	corr_obs_bound(h, &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_IN);
	ck_assert_int_eq(o.bound, 33);
	/* Microsecond stamps: up to 999 ns early, and the bound says so. */
	ifc.resolution_ns = 1000;
	corr_obs_bound(h, &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_IN);
	ck_assert_int_eq(o.bound, 33 + 999);
	memset(&o, 0, sizeof(o));
	o.ts = T0 + 2 * S + S / 2;
	corr_obs_bound(h, &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_OUT);
	/* Stamps on TAI are looked up in the journal's UTC. */
	ifc.resolution_ns = 1;
	ifc.journal_ns = -37 * S;
	memset(&o, 0, sizeof(o));
	o.ts = T0 + 37 * S + S / 2;
	corr_obs_bound(h, &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_IN);
	ck_assert_int_eq(o.bound, 33);
	/* Holdover (drift 2000 ppb from the rules event): the journal's
	 * bound grown on to the stamp, plus the resolution term. */
	bound_destroy(c->hosts[1]->bound);
	snprintf(path, sizeof(path), "%s/h1.journal", dir);
	unit_write_file(path,
		"# tapless-journal 2 host h1\n"
		"1763899999000000000 event phc0 rules drift_ppb=2000\n"
		"1763900000000000000 sample phc0 SLAVE 16 500 -0.959 001b21.fffe.7a5e01 1 s2 1 40\n"
		"1763900001000000000 sample phc0 SLAVE - - -0.959 001b21.fffe.7a5e01 1 s2 h 2040\n");
	ck_assert_int_eq(bound_open(&c->hosts[1]->bound, path, 3 * S, err), 0);
	ifc.journal_ns = 0;
	ifc.resolution_ns = 1000;
	memset(&o, 0, sizeof(o));
	o.ts = T0 + S / 2;
	corr_obs_bound(c->hosts[1], &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_IN);
	ck_assert_int_eq(o.bound, 40 + 999);
	memset(&o, 0, sizeof(o));
	o.ts = T0 + S + S / 4;
	corr_obs_bound(c->hosts[1], &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_HOLD);
	/* A quarter second at 2000 ppb: 500 ns more. */
	ck_assert_int_eq(o.bound, 2040 + (S / 4) * 2000 / S + 999);
	o.ts = T0 + S + 4 * S;
	corr_obs_bound(c->hosts[1], &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_OUT);
	ck_assert_int_eq(o.bound, -1);
	bound_destroy(c->hosts[1]->bound);
	c->hosts[1]->bound = NULL;
	/* No journal: neither in nor out of sync, no bound. */
	memset(&o, 0, sizeof(o));
	o.ts = T0 + S / 2;
	corr_obs_bound(c->hosts[1], &ifc, &o);
	ck_assert_int_eq(o.sync, SYNC_NONE);
	ck_assert_int_eq(o.bound, -1);
	corr_destroy(c);
}
END_TEST

/* ---- matching ---- */

static struct corr_obs obs(unsigned host, uint8_t dir_, int64_t ts)
{
	struct corr_obs o = {
		.ts = ts, .bound = -1, .host = (uint16_t)host, .dir = dir_,
		.flow = 0, .bucket = NO_BUCKET,
	};

	return o;
}

static const struct corr_stat *hop(const struct corr *c, unsigned from,
				   unsigned to)
{
	for (size_t i = 0; i < c->hops.n; i++)
		if (c->hops.v[i].from == from && c->hops.v[i].to == to &&
		    c->hops.v[i].flow == ALL_FLOWS &&
		    c->hops.v[i].bucket == NO_BUCKET)
			return &c->hops.v[i];
	return NULL;
}

START_TEST(match_hosts)
{
	struct corr *c = corr_with_hosts(3, NULL);
	struct corr_obs o;
	const struct corr_stat *s;
	struct summary sm;

	/* One message: sent at h0, received at h1 and at h2. */
	o = obs(0, DIR_OUT, T0);
	o.sync = SYNC_IN;
	o.bound = 5;
	corr_match(c, &o, 1000, 0);
	ck_assert(!corr_measured(c));
	o = obs(1, DIR_IN, T0 + 700);
	o.sync = SYNC_IN;
	o.bound = 7;
	corr_match(c, &o, 1000, 0);
	ck_assert(corr_measured(c));
	/* The same message again at h1 (a resend, a second capture). */
	o = obs(1, DIR_IN, T0 + 800);
	corr_match(c, &o, 1000, 0);
	ck_assert_uint_eq(c->hosts[1]->duplicates, 1);
	o = obs(2, DIR_IN, T0 + 900);
	corr_match(c, &o, 1000, 0);
	s = hop(c, 0, 1);
	ck_assert_ptr_nonnull(s);
	sm = summary_of_hist(s->h);
	ck_assert_uint_eq(sm.n, 1);
	ck_assert_int_eq(sm.p50, 700);
	ck_assert_int_eq(s->bound_max, 12);
	ck_assert_uint_eq(s->bound_known, 1);
	/* h2 has no journal: counted, bound unknown. */
	s = hop(c, 0, 2);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(hist_count(s->h), 1);
	ck_assert_uint_eq(s->bound_unknown, 1);
	/* Two receivers make no sample with each other. */
	ck_assert_ptr_null(hop(c, 1, 2));
	ck_assert_ptr_null(hop(c, 1, 0));
	/* Per flow as well as for all flows. */
	ck_assert_uint_eq(c->hops.n, 4);

	/* Another message, seen at h0 only: unmatched once the input ends. */
	o = obs(0, DIR_OUT, T0 + 1000);
	corr_match(c, &o, 2000, 0);
	ck_assert_uint_eq(c->hosts[0]->only_here, 0);
	corr_match_drain(c);
	ck_assert_uint_eq(c->hosts[0]->only_here, 1);
	ck_assert_uint_eq(c->ring_count, 0);
	corr_destroy(c);
}
END_TEST

START_TEST(match_direction_and_window)
{
	struct corr_config cfg;
	struct corr *c;
	struct corr_obs o;
	struct summary sm;

	corr_config_init(&cfg);
	cfg.window_ns = 1000000;
	c = corr_with_hosts(2, &cfg);
	/* A capture without directions takes the role its peer leaves. */
	o = obs(0, DIR_UNKNOWN, T0);
	corr_match(c, &o, 1, 0);
	o = obs(1, DIR_OUT, T0 - 400);
	corr_match(c, &o, 1, 0);
	sm = summary_of_hist(hop(c, 1, 0)->h);
	ck_assert_uint_eq(sm.n, 1);
	ck_assert_int_eq(sm.p50, 400);
	/* Neither says: no sample, and counted. */
	o = obs(0, DIR_UNKNOWN, T0 + 10);
	corr_match(c, &o, 2, 0);
	o = obs(1, DIR_UNKNOWN, T0 + 20);
	corr_match(c, &o, 2, 0);
	ck_assert_uint_eq(corr_direction_unknown(c), 1);
	/* The peer comes after the window: too late, both unmatched. */
	o = obs(0, DIR_OUT, T0 + 100);
	corr_match(c, &o, 3, 0);
	o = obs(1, DIR_IN, T0 + 100 + cfg.window_ns + 1);
	corr_match(c, &o, 3, 0);
	ck_assert_uint_eq(c->hosts[0]->only_here, 1);
	ck_assert_ptr_null(hop(c, 0, 1));
	corr_match_drain(c);
	ck_assert_uint_eq(c->hosts[1]->only_here, 1);
	corr_destroy(c);
}
END_TEST

/* ---- following: per-flow results ---- */

#define CAP 5		/* per-flow results held */
#define NFLOWS 12	/* flows fed: more than CAP */
#define ROUNDS 3	/* messages per flow */

/* The live view's per-flow results (a follower's batch results have
 * none). */
static size_t flow_results(const struct corr *c)
{
	size_t n = 0;

	for (size_t i = 0; i < c->hops.n; i++)
		ck_assert_uint_eq(c->hops.v[i].flow, ALL_FLOWS);
	for (size_t i = 0; i < c->live_hops.n; i++)
		n += c->live_hops.v[i].flow != ALL_FLOWS;
	return n;
}

/* The live part of hop from -> to's result for flow. */
static const struct corr_live_stat *live_of(const struct corr *c,
					    unsigned from, unsigned to,
					    uint32_t flow)
{
	const struct corr_stat *s = corr_stat_find(&c->live_hops, (uint16_t)from,
						   (uint16_t)to, flow,
						   NO_BUCKET, -1, NULL);

	ck_assert_ptr_nonnull(s);
	return s->ext;
}

/* One message of flow id at round r: out at h0, in at h1 500 ns later. */
static void flow_message(struct corr *c, uint32_t id, unsigned r)
{
	struct corr_obs o = obs(0, DIR_OUT, T0 + r * S + id * 1000);

	o.flow = id;
	corr_match(c, &o, 1000 * r + 1, 0);
	o = obs(1, DIR_IN, T0 + r * S + id * 1000 + 500);
	o.flow = id;
	corr_match(c, &o, 1000 * r + 1, 0);
}

/* The value of the first line of text starting with prefix, or NAN. */
static double value_after(const char *text, const char *prefix)
{
	const char *p = strstr(text, prefix);

	return p ? strtod(p + strlen(prefix), NULL) : NAN;
}

/* Lines of text holding all of a and b. */
static unsigned lines_with(const char *text, const char *a, const char *b)
{
	unsigned n = 0;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *e = strchr(l, '\n');
		size_t len = e ? (size_t)(e - l) : strlen(l);
		char line[1024];

		snprintf(line, sizeof(line), "%.*s", (int)len, l);
		n += strstr(line, a) && strstr(line, b);
	}
	return n;
}

/* Following, more flows than --flow-series, each matched ROUNDS times
 * between two hosts: CAP of them have their own result (metric series),
 * the others count in the hop's "all" only and in flows_over_limit,
 * once each however many samples they bring; metrics and the interval
 * line say so. The flows that hold the results going idle
 * (corr_flow_expire()) free their room for the others, which are not
 * counted again. */
START_TEST(live_flow_series_capped)
{
	struct corr_config cfg;
	struct corr_stream *st[NFLOWS];
	struct corr *c;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	corr_config_init(&cfg);
	cfg.follow = true;
	cfg.flow_series = CAP;
	c = corr_with_hosts(2, &cfg);
	for (unsigned i = 0; i < NFLOWS; i++) {
		struct frame_flow ff = {
			.family = AF_INET, .proto = IPPROTO_TCP,
			.sport = (uint16_t)(40000 + i), .dport = 9001,
		};

		inet_pton(AF_INET, "198.18.0.1", ff.src);
		inet_pton(AF_INET, "198.18.0.2", ff.dst);
		st[i] = corr_stream(c, c->hosts[0], &ff, DIR_OUT);
		st[i]->last_ts = T0 + i;
	}
	ck_assert_uint_eq(c->nflows, NFLOWS);
	for (unsigned r = 0; r < ROUNDS; r++)
		for (unsigned i = 0; i < NFLOWS; i++) {
			flow_message(c, st[i]->flow, r);
			ck_assert_uint_le(flow_results(c), CAP);
		}
	ck_assert_uint_eq(flow_results(c), CAP);
	ck_assert_uint_eq(c->flow_series, CAP);
	ck_assert_uint_eq(c->flows_over_limit, NFLOWS - CAP);
	/* Every sample is in the hop's "all"; the flows' own hold CAP's. */
	ck_assert_uint_eq(hist_count(hop(c, 0, 1)->h), ROUNDS * NFLOWS);
	for (size_t i = 0; i < c->live_hops.n; i++)
		if (c->live_hops.v[i].flow != ALL_FLOWS)
			ck_assert_uint_eq(((const struct corr_live_stat *)
					   c->live_hops.v[i].ext)->n, ROUNDS);
	ck_assert_uint_eq(live_of(c, 0, 1, ALL_FLOWS)->n, ROUNDS * NFLOWS);

	f = open_memstream(&text, &len);
	ck_assert_int_eq(corr_metrics(c, f, METRICS_OPENMETRICS), 0);
	fclose(f);
	ck_assert_uint_eq(lines_with(text, "tapless_hop_latency_seconds_count{",
				     "flow=\"tcp "), CAP);
	ck_assert_double_eq(value_after(text, "\ntapless_flows_over_limit_total "),
			    NFLOWS - CAP);
	ck_assert_double_eq(value_after(text, "\ntapless_flow_series "), CAP);
	free(text);
	f = open_memstream(&text, &len);
	corr_print_interval(c, f, PRINT_JSON);
	fclose(f);
	ck_assert_uint_eq(lines_with(text, "\"type\":\"flows\"", "\"series\":"), 1);
	ck_assert_double_eq(value_after(text, "\"flows_over_limit\":"),
			    NFLOWS - CAP);
	ck_assert_double_eq(value_after(text, "\"series_limit\":"), CAP);
	free(text);

	/* The first CAP flows (those with results) go idle: their results
	 * go, the room is the others'; they are not counted again. */
	corr_flow_expire(c, T0 + CAP);
	ck_assert_uint_eq(c->nstreams, NFLOWS - CAP);
	ck_assert_uint_eq(flow_results(c), 0);
	ck_assert_uint_eq(c->flow_series, 0);
	for (unsigned i = CAP; i < NFLOWS; i++)
		flow_message(c, st[i]->flow, ROUNDS);
	ck_assert_uint_eq(flow_results(c), CAP);
	ck_assert_uint_eq(c->flow_series, CAP);
	ck_assert_uint_eq(c->flows_over_limit, NFLOWS - CAP);
	ck_assert_uint_eq(hist_count(hop(c, 0, 1)->h),
			  ROUNDS * NFLOWS + NFLOWS - CAP);
	/* The results left are findable where they moved. */
	for (unsigned i = CAP; i < 2 * CAP; i++)
		ck_assert_ptr_nonnull(corr_stat_find(&c->live_hops, 0, 1,
						     st[i]->flow, NO_BUCKET,
						     -1, NULL));
	corr_destroy(c);
}
END_TEST

/* Following, samples with an end in holdover: in the figures and counted
 * (hop, interval, metrics, alert figure); the host's sync state in the
 * gauge (2) and the interval line. */
START_TEST(live_holdover)
{
	struct corr_config cfg;
	const struct corr_stat *s;
	struct corr_obs o;
	struct corr *c;
	char *text = NULL;
	size_t len = 0;
	double v = -1;
	FILE *f;

	struct frame_flow ff = {
		.family = AF_INET, .proto = IPPROTO_TCP, .sport = 40000,
		.dport = 9001,
	};

	corr_config_init(&cfg);
	cfg.follow = true;
	c = corr_with_hosts(2, &cfg);
	inet_pton(AF_INET, "198.18.0.1", ff.src);
	inet_pton(AF_INET, "198.18.0.2", ff.dst);
	ck_assert_uint_eq(corr_stream(c, c->hosts[0], &ff, DIR_OUT)->flow, 0);
	/* Five messages h0 -> h1 on that flow: h1 in holdover for three, out
	 * of sync for one, in sync for the last. */
	for (int i = 0; i < 5; i++) {
		o = obs(0, DIR_OUT, T0 + i * 1000);
		o.sync = SYNC_IN;
		o.bound = 5;
		corr_match(c, &o, 100 + (uint32_t)i, 0);
		o = obs(1, DIR_IN, T0 + i * 1000 + 700);
		o.sync = i < 3 ? SYNC_HOLD : i == 3 ? SYNC_OUT : SYNC_IN;
		o.bound = i == 3 ? -1 : 900 + i;
		corr_match(c, &o, 100 + (uint32_t)i, 0);
	}
	s = hop(c, 0, 1);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_eq(hist_count(s->h), 4);
	ck_assert_uint_eq(hist_count(s->out), 1);
	ck_assert_uint_eq(s->holdover, 3);
	ck_assert_int_eq(s->bound_max, 5 + 904);
	ck_assert_uint_eq(live_of(c, 0, 1, ALL_FLOWS)->hold, 3);
	ck_assert_uint_eq(live_of(c, 0, 1, ALL_FLOWS)->out, 1);
	ck_assert_uint_eq(live_of(c, 0, 1, ALL_FLOWS)->n, 4);
	ck_assert_int_eq(corr_interval_value(c, "h0->h1", "holdover", &v), 0);
	ck_assert(v == 3);

	c->hosts[0]->live.sync = SYNC_IN;
	c->hosts[1]->live.sync = SYNC_HOLD;
	f = open_memstream(&text, &len);
	ck_assert_int_eq(corr_metrics(c, f, METRICS_OPENMETRICS), 0);
	fclose(f);
	ck_assert_double_eq(value_after(text,
		"\ntapless_hop_holdover_samples_total{from=\"h0\",to=\"h1\"} "), 3);
	ck_assert_double_eq(value_after(text,
		"\ntapless_hop_out_of_sync_samples_total{from=\"h0\",to=\"h1\"} "), 1);
	ck_assert_double_eq(value_after(text,
		"\ntapless_host_in_sync{host=\"h1\"} "), 2);
	ck_assert_double_eq(value_after(text,
		"\ntapless_host_in_sync{host=\"h0\"} "), 1);
	free(text);
	f = open_memstream(&text, &len);
	corr_print_interval(c, f, PRINT_JSON);
	fclose(f);
	ck_assert_uint_eq(lines_with(text, "\"type\":\"hop\"", "\"holdover\":3"), 1);
	ck_assert_uint_eq(lines_with(text, "\"host\":\"h1\"", "\"sync\":\"holdover\""), 1);
	ck_assert_uint_eq(lines_with(text, "\"host\":\"h0\"", "\"sync\":\"in\""), 1);
	free(text);
	corr_destroy(c);
}
END_TEST

/* ---- transactions ---- */

static struct fix_msg msg;
static char msgbuf[512];

/* A FIX message of type mt with tag=value pairs ("55=AAPL", ...). */
static const struct fix_msg *fix(const char *mt, const char *const *kv)
{
	struct fix_writer w;
	enum fix_error why;
	const char *m;
	size_t len;

	fix_begin(&w, msgbuf, sizeof(msgbuf), "FIX.4.4", mt);
	fix_add_str(&w, 49, "A");
	fix_add_str(&w, 56, "B");
	fix_add_int(&w, 34, 1);
	for (; *kv; kv++)
		fix_add_str(&w, (uint32_t)atoi(*kv), strchr(*kv, '=') + 1);
	m = fix_end(&w, &len);
	ck_assert_ptr_nonnull(m);
	ck_assert_int_eq(fix_parse(&msg, m, len, &why), 0);
	return &msg;
}

static void txn(struct corr *c, uint8_t d, int64_t ts, const char *mt,
		const char *const *kv)
{
	const struct fix_msg *m = fix(mt, kv);
	struct corr_fields f;

	corr_fields(m, &f);
	corr_txn(c, c->hosts[0], d, ts, m, &f);
}

static int64_t txn_only(const struct corr *c, int kind)
{
	for (size_t i = 0; i < c->txns.n; i++)
		if (c->txns.v[i].kind == kind &&
		    c->txns.v[i].bucket == NO_BUCKET) {
			struct summary sm = summary_of_hist(c->txns.v[i].h);

			ck_assert_uint_eq(sm.n, 1);
			return sm.min;
		}
	return -1;
}

START_TEST(txn_fttc)
{
	struct corr *c = corr_with_hosts(1, NULL);

	/* A bid on AAPL (and an offer on MSFT, which triggers nothing). */
	txn(c, DIR_IN, T0, "X", (const char *const[]){ "268=2", "279=0",
		"269=1", "55=MSFT", "279=0", "269=0", "55=AAPL", NULL });
	/* Buy AAPL 3 us later: tick-to-trade. */
	txn(c, DIR_OUT, T0 + 3000, "D", (const char *const[]){ "11=o1",
		"55=AAPL", "54=1", NULL });
	/* Buy MSFT: no bid came, no trigger. */
	txn(c, DIR_OUT, T0 + 3500, "D", (const char *const[]){ "11=o2",
		"55=MSFT", "54=1", NULL });
	/* o1 acknowledged, then filled. */
	txn(c, DIR_IN, T0 + 5000, "8", (const char *const[]){ "11=o1",
		"39=0", "55=AAPL", "54=1", NULL });
	txn(c, DIR_IN, T0 + 9000, "8", (const char *const[]){ "11=o1",
		"39=2", "55=AAPL", "54=1", NULL });
	/* Sell what was bought: fill-to-sell. */
	txn(c, DIR_OUT, T0 + 9500, "D", (const char *const[]){ "11=o3",
		"55=AAPL", "54=2", NULL });
	/* The same order seen again triggers nothing new. */
	txn(c, DIR_IN, T0 + 9600, "8", (const char *const[]){ "11=o1",
		"39=2", "55=AAPL", "54=1", NULL });

	ck_assert_int_eq(txn_only(c, TXN_TICK_TO_TRADE), 3000);
	ck_assert_int_eq(txn_only(c, TXN_ORDER_TO_ACK), 2000);
	ck_assert_int_eq(txn_only(c, TXN_ORDER_TO_FILL), 6000);
	ck_assert_int_eq(txn_only(c, TXN_FILL_TO_SELL), 500);
	ck_assert_uint_eq(c->txns.n, 4);
	ck_assert_uint_eq(c->hosts[0]->no_trigger[TXN_TICK_TO_TRADE], 1);
	ck_assert_uint_eq(c->hosts[0]->no_trigger[TXN_FILL_TO_SELL], 0);
	ck_assert(corr_measured(c));
	ck_assert_str_eq(corr_txn_names[TXN_FILL_TO_SELL], "fill_to_sell");
	corr_destroy(c);
}
END_TEST

START_TEST(txn_rate_bucket)
{
	struct corr_config cfg;
	struct corr *c;
	struct corr_host *h;

	corr_config_init(&cfg);
	cfg.by_rate = true;
	c = corr_with_hosts(1, &cfg);
	h = c->hosts[0];
	/* 5,000 market data messages a second: the 5000 bucket (the third
	 * of the default centres), whatever came before. */
	for (int i = 0; i < 200; i++)
		corr_md_seen(c, h, T0 + (int64_t)i * 1000000);
	ck_assert_int_eq(cfg.rates[1], 1000);
	ck_assert_int_eq(h->bucket, 1);
	for (int i = 0; i < 200; i++)
		corr_md_seen(c, h, T0 + S + (int64_t)i * 200000);
	ck_assert_int_eq(cfg.rates[2], 5000);
	ck_assert_int_eq(h->bucket, 2);
	corr_destroy(c);
}
END_TEST

static Suite *corr_suite(void)
{
	Suite *s = suite_create("corr");
	TCase *t = tcase_create("stats");
	TCase *b = tcase_create("bounds");
	TCase *m = tcase_create("match");
	TCase *x = tcase_create("txn");

	tcase_add_test(t, stats_known_set);
	tcase_add_test(t, stats_bound_sum);
	tcase_add_test(t, stats_empty);
	tcase_add_test(t, stats_order);
	suite_add_tcase(s, t);
	tcase_add_checked_fixture(b, tmp_setup, tmp_teardown);
	tcase_add_test(b, hop_bound_combination);
	tcase_add_test(b, hop_bound_terms);
	tcase_add_test(b, stat_terms_tally);
	tcase_add_test(b, obs_bound_from_journal);
	suite_add_tcase(s, b);
	tcase_add_test(m, match_hosts);
	tcase_add_test(m, match_direction_and_window);
	tcase_add_test(m, live_flow_series_capped);
	tcase_add_test(m, live_holdover);
	suite_add_tcase(s, m);
	tcase_add_test(x, txn_fttc);
	tcase_add_test(x, txn_rate_bucket);
	suite_add_tcase(s, x);
	return s;
}

UNIT_MAIN(corr_suite)
