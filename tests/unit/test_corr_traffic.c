/* test_corr_traffic.c — the traffic as a second opinion on the clocks
 * (corr/corr_traffic.h): the interval from the least one-way delays, open
 * intervals, empty ones, the miss against the journals' claim, loops of
 * three with their signs and the host they blame; then the windows,
 * fed samples with known clock offsets: a clean run, a host 20 us off
 * while its journal claims 40 ns, late samples, the flagged windows kept
 * and counted. Whole captures are the replay tier's
 * (tests/replay/test_traffic.sh). */
#include <stdint.h>

#include "corr/corr_traffic.h"
#include "unit.h"

#define S 1000000000LL

static struct corr_traffic_iv iv(int64_t lo, int64_t hi)
{
	return corr_traffic_interval(true, hi, true, -lo);
}

START_TEST(interval_from_mins)
{
	struct corr_traffic_iv v = corr_traffic_interval(true, 500, true, 600);

	ck_assert(v.has_lo && v.has_hi);
	ck_assert_int_eq(v.lo, -600);
	ck_assert_int_eq(v.hi, 500);
	ck_assert(!corr_traffic_empty(&v));
	ck_assert(corr_traffic_contains(&v, 0));
	ck_assert(corr_traffic_contains(&v, -600));
	ck_assert(!corr_traffic_contains(&v, 501));
}
END_TEST

START_TEST(half_open)
{
	/* Only a→b samples: bounded above only. */
	struct corr_traffic_iv v = corr_traffic_interval(true, 500, false, 0);

	ck_assert(!v.has_lo && v.has_hi);
	ck_assert(corr_traffic_contains(&v, INT64_MIN / 2));
	ck_assert(!corr_traffic_empty(&v));
	/* Meets any claim it can reach... */
	ck_assert_int_le(corr_traffic_miss(&v, 100), 0);
	/* ... and misses one below its top: b 300 ns behind at least. */
	v = corr_traffic_interval(true, -300, false, 0);
	ck_assert_int_eq(corr_traffic_miss(&v, 100), 200);
	/* Only b→a: bounded below. */
	v = corr_traffic_interval(false, 0, true, -19400);
	ck_assert(v.has_lo && !v.has_hi);
	ck_assert_int_eq(v.lo, 19400);
	ck_assert_int_eq(corr_traffic_miss(&v, 82), 19318);
	/* Open both ways: nothing to miss. */
	v = corr_traffic_interval(false, 0, false, 0);
	ck_assert_int_eq(corr_traffic_miss(&v, 82), INT64_MIN);
	/* No claim: nothing to miss either. */
	v = iv(19400, 20500);
	ck_assert_int_eq(corr_traffic_miss(&v, -1), INT64_MIN);
}
END_TEST

START_TEST(empty_interval)
{
	/* Both one-way minima negative past each other: a step. */
	struct corr_traffic_iv v = corr_traffic_interval(true, -100, true, -50);

	ck_assert_int_eq(v.lo, 50);
	ck_assert_int_eq(v.hi, -100);
	ck_assert(corr_traffic_empty(&v));
	ck_assert(!corr_traffic_contains(&v, 0));
	v = iv(10, 10);
	ck_assert(!corr_traffic_empty(&v));
}
END_TEST

START_TEST(claim_intersection)
{
	struct corr_traffic_iv v = iv(19403, 20525), n;

	/* The journals' ±82 ns against 19.4 to 20.5 us. */
	ck_assert_int_eq(corr_traffic_miss(&v, 82), 19321);
	/* Below the claim, by the same arithmetic. */
	v = iv(-20525, -19403);
	ck_assert_int_eq(corr_traffic_miss(&v, 82), 19321);
	/* Overlapping: the miss is how far inside (negative). */
	v = iv(-589, 525);
	ck_assert_int_le(corr_traffic_miss(&v, 82), 0);
	/* Touching counts as meeting. */
	v = iv(82, 500);
	ck_assert_int_eq(corr_traffic_miss(&v, 82), 0);
	/* Narrowed to the claim. */
	v = iv(-589, 525);
	n = corr_traffic_narrow(&v, 82);
	ck_assert_int_eq(n.lo, -82);
	ck_assert_int_eq(n.hi, 82);
	v = corr_traffic_interval(true, 50, false, 0);
	n = corr_traffic_narrow(&v, 82);
	ck_assert(n.has_lo && n.has_hi);
	ck_assert_int_eq(n.lo, -82);
	ck_assert_int_eq(n.hi, 50);
	v = iv(1000, 2000);
	n = corr_traffic_narrow(&v, 82);
	ck_assert(corr_traffic_empty(&n));
	n = corr_traffic_narrow(&v, -1);
	ck_assert_int_eq(n.lo, 1000);
	ck_assert_int_eq(n.hi, 2000);
}
END_TEST

START_TEST(add_neg)
{
	struct corr_traffic_iv a = iv(-10, 20), b = iv(100, 200), s, n;
	struct corr_traffic_iv h = corr_traffic_interval(true, 5, false, 0);

	s = corr_traffic_add(&a, &b);
	ck_assert_int_eq(s.lo, 90);
	ck_assert_int_eq(s.hi, 220);
	n = corr_traffic_neg(&b);
	ck_assert_int_eq(n.lo, -200);
	ck_assert_int_eq(n.hi, -100);
	/* An open side stays open through the sum and flips with the
	 * sign. */
	s = corr_traffic_add(&a, &h);
	ck_assert(!s.has_lo && s.has_hi);
	ck_assert_int_eq(s.hi, 25);
	n = corr_traffic_neg(&h);
	ck_assert(n.has_lo && !n.has_hi);
	ck_assert_int_eq(n.lo, -5);
}
END_TEST

/* The interval of pair (a, b) from offsets o[] and a true one-way delay of
 * `delay` each way, as the traffic would show it. */
static struct corr_traffic_iv measured(const int64_t *o, unsigned a,
				       unsigned b, int64_t delay)
{
	return corr_traffic_interval(true, delay + o[b] - o[a], true,
				     delay + o[a] - o[b]);
}

START_TEST(loop_signs)
{
	struct corr_traffic_loop l;
	int64_t none[3] = { -1, -1, -1 };
	/* y − x ≈ +1 us, z − y ≈ +1 us, so z − x ≈ +2 us: closes only if
	 * the third is subtracted. */
	struct corr_traffic_iv v[3] = { iv(1000, 1100), iv(1000, 1100),
					iv(1950, 2250) };

	corr_traffic_loop_check(v, none, &l);
	ck_assert(l.closes_traffic);
	ck_assert(l.closes);
	ck_assert_uint_eq(l.blame, 0);
	/* z − x ≈ 0 cannot be: the loop is open on the traffic alone. */
	v[2] = iv(-100, 100);
	corr_traffic_loop_check(v, none, &l);
	ck_assert(!l.closes_traffic);
	ck_assert(!l.closes);
	ck_assert_uint_eq(l.blame, 0);
	/* An empty pair opens it too. */
	v[2] = iv(2100, 1900);
	corr_traffic_loop_check(v, none, &l);
	ck_assert(!l.closes_traffic);
	/* Open sides: only the bounded ones can fail. */
	v[0] = corr_traffic_interval(true, 1100, false, 0);
	v[2] = iv(-100, 100);
	corr_traffic_loop_check(v, none, &l);
	ck_assert(l.closes_traffic);
}
END_TEST

START_TEST(loop_suspect)
{
	int64_t claim[3] = { 100, 100, 100 };
	struct corr_traffic_loop l;
	struct corr_traffic_iv v[3];

	/* Each host off by 20 us in turn, its journal none the wiser: the
	 * loop closes on the traffic, not with the claims, and blames it
	 * alone. */
	for (unsigned bad = 0; bad < 3; bad++) {
		int64_t o[3] = { 0, 0, 0 };

		o[bad] = 20000;
		v[0] = measured(o, 0, 1, 500);
		v[1] = measured(o, 1, 2, 700);
		v[2] = measured(o, 0, 2, 600);
		corr_traffic_loop_check(v, claim, &l);
		ck_assert(l.closes_traffic);
		ck_assert(!l.closes);
		ck_assert_uint_eq(l.blame, 1u << bad);
	}
	/* Clean clocks: it closes. */
	{
		int64_t o[3] = { 30, -20, 10 };

		v[0] = measured(o, 0, 1, 500);
		v[1] = measured(o, 1, 2, 700);
		v[2] = measured(o, 0, 2, 600);
		corr_traffic_loop_check(v, claim, &l);
		ck_assert(l.closes);
	}
	/* Two hosts off the same way look, from the traffic, as the third
	 * off the other way: the loop blames the third. */
	{
		int64_t o[3] = { 20000, 20000, 0 };

		v[0] = measured(o, 0, 1, 500);
		v[1] = measured(o, 1, 2, 700);
		v[2] = measured(o, 0, 2, 600);
		corr_traffic_loop_check(v, claim, &l);
		ck_assert(!l.closes);
		ck_assert_uint_eq(l.blame, 1u << 2);
	}
	/* Two off opposite ways: every pair is wrong, no one host explains
	 * it, nobody is blamed. */
	{
		int64_t o[3] = { 20000, -20000, 0 };

		v[0] = measured(o, 0, 1, 500);
		v[1] = measured(o, 1, 2, 700);
		v[2] = measured(o, 0, 2, 600);
		corr_traffic_loop_check(v, claim, &l);
		ck_assert(l.closes_traffic);
		ck_assert(!l.closes);
		ck_assert_uint_eq(l.blame, 0);
	}
}
END_TEST

/* Samples both ways between every pair of n hosts in window w (ts inside
 * it), host i off by o[i], true delay 600 ns plus i, each end's journal
 * claiming 40 ns. */
static void feed(struct corr_traffic *t, unsigned n, const int64_t *o,
		 int64_t ts)
{
	for (unsigned a = 0; a < n; a++)
		for (unsigned b = 0; b < n; b++)
			if (a != b)
				for (int k = 0; k < 10; k++)
					corr_traffic_sample(t, a, b, ts + k * 1000,
							    600 + k + a + o[b] - o[a],
							    80);
}

START_TEST(windows_clean)
{
	struct corr_traffic *t = corr_traffic_create(S, 2 * S);
	struct corr_traffic_pair_stats s;
	struct corr_traffic_loops l;
	int64_t o[3] = { 10, -30, 25 };

	for (int w = 0; w < 5; w++)
		feed(t, 3, o, 1763900000 * S + w * S + 5000);
	corr_traffic_flush(t);
	ck_assert(corr_traffic_pair(t, 0, 1, &s));
	ck_assert_uint_eq(s.windows, 5);
	ck_assert_uint_eq(s.both, 5);
	ck_assert_uint_eq(s.flagged, 0);
	ck_assert_uint_eq(s.inconsistent, 0);
	ck_assert_uint_eq(s.kept, 0);
	ck_assert(s.have_tightest);
	/* offset_1 − offset_0 = −40 in [−(600 + 1) − 40, 600 + 40]. */
	ck_assert_int_eq(s.tightest.lo, -641);
	ck_assert_int_eq(s.tightest.hi, 560);
	ck_assert_int_eq(s.median_width, 1201);
	ck_assert(!corr_traffic_pair(t, 1, 0, &s));
	corr_traffic_loops(t, &l);
	ck_assert_uint_eq(l.checked, 5);
	ck_assert_uint_eq(l.failed, 0);
	ck_assert_int_eq(l.suspect, -1);
	corr_traffic_destroy(t);
}
END_TEST

START_TEST(windows_faulty)
{
	struct corr_traffic *t = corr_traffic_create(S, 2 * S);
	struct corr_traffic_pair_stats s;
	struct corr_traffic_loops l;
	int64_t o[4] = { 0, 20000, 0, 0 };

	for (int w = 0; w < 3; w++)
		feed(t, 4, o, 1763900000 * S + w * S);
	corr_traffic_flush(t);
	/* Host 1's pairs flagged, the others not. */
	ck_assert(corr_traffic_pair(t, 0, 1, &s));
	ck_assert_uint_eq(s.flagged, 3);
	ck_assert_uint_eq(s.kept, 3);
	ck_assert(corr_traffic_pair(t, 1, 2, &s));
	ck_assert_uint_eq(s.flagged, 3);
	ck_assert(corr_traffic_pair(t, 0, 2, &s));
	ck_assert_uint_eq(s.flagged, 0);
	ck_assert(corr_traffic_pair(t, 2, 3, &s));
	ck_assert_uint_eq(s.flagged, 0);
	/* Loops 012, 013, 123 fail, 023 closes: host 1 in each. */
	corr_traffic_loops(t, &l);
	ck_assert_uint_eq(l.checked, 12);
	ck_assert_uint_eq(l.failed, 9);
	ck_assert_uint_eq(l.open, 0);
	ck_assert_int_eq(l.suspect, 1);
	ck_assert_uint_eq(l.blamed[1], 9);
	ck_assert_uint_eq(l.blamed[0], 0);
	corr_traffic_destroy(t);
}
END_TEST

START_TEST(windows_half_open_and_late)
{
	struct corr_traffic *t = corr_traffic_create(S, 0);
	struct corr_traffic_pair_stats s;
	int64_t t0 = 1763900000 * S;

	/* One way only, b 20 us ahead: lo is unknown, hi is not, and the
	 * claim is met (b ahead only raises a→b delays). */
	corr_traffic_sample(t, 0, 1, t0, 20600, 80);
	/* The other way only, next window: lo = 20000 − 600, flagged. */
	corr_traffic_sample(t, 1, 0, t0 + S, 600 - 20000, 80);
	/* Two windows on: the first is closed (no late time allowed, two
	 * slots), a sample for it is late. */
	corr_traffic_sample(t, 0, 1, t0 + 3 * S, 20600, 80);
	corr_traffic_sample(t, 0, 1, t0 + 10, 20600, 80);
	corr_traffic_flush(t);
	ck_assert(corr_traffic_pair(t, 0, 1, &s));
	ck_assert_uint_eq(s.windows, 3);
	ck_assert_uint_eq(s.both, 0);
	ck_assert_uint_eq(s.flagged, 1);
	ck_assert_uint_eq(s.late, 1);
	ck_assert(!s.have_tightest);
	ck_assert_int_eq(s.median_width, -1);
	corr_traffic_destroy(t);
}
END_TEST

START_TEST(windows_inconsistent)
{
	struct corr_traffic *t = corr_traffic_create(S, S);
	struct corr_traffic_pair_stats s;
	struct corr_traffic_loops l;

	/* b stepped by 5 us within the window: its early a→b samples and
	 * its late b→a ones cannot both hold. */
	corr_traffic_sample(t, 0, 1, 100, 600, 80);
	corr_traffic_sample(t, 1, 0, 200, 600 - 5000, 80);
	corr_traffic_flush(t);
	ck_assert(corr_traffic_pair(t, 0, 1, &s));
	ck_assert_uint_eq(s.inconsistent, 1);
	ck_assert_uint_eq(s.flagged, 0);
	ck_assert_uint_eq(s.kept, 1);
	corr_traffic_loops(t, &l);
	ck_assert_uint_eq(l.checked, 0);
	corr_traffic_destroy(t);
}
END_TEST

START_TEST(windows_bounded)
{
	struct corr_traffic *t = corr_traffic_create(1000000, 0);
	struct corr_traffic_pair_stats s;

	/* 500 flagged windows: 100 kept, the rest counted. */
	for (int w = 0; w < 500; w++) {
		corr_traffic_sample(t, 0, 1, w * 1000000LL, 20600, 80);
		corr_traffic_sample(t, 1, 0, w * 1000000LL, 600 - 20000, 80);
	}
	corr_traffic_flush(t);
	ck_assert(corr_traffic_pair(t, 0, 1, &s));
	ck_assert_uint_eq(s.windows, 500);
	ck_assert_uint_eq(s.flagged, 500);
	ck_assert_uint_eq(s.kept, CORR_TRAFFIC_KEEP);
	corr_traffic_destroy(t);
}
END_TEST

static Suite *corr_traffic_suite(void)
{
	Suite *s = suite_create("corr_traffic");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, interval_from_mins);
	tcase_add_test(tc, half_open);
	tcase_add_test(tc, empty_interval);
	tcase_add_test(tc, claim_intersection);
	tcase_add_test(tc, add_neg);
	tcase_add_test(tc, loop_signs);
	tcase_add_test(tc, loop_suspect);
	tcase_add_test(tc, windows_clean);
	tcase_add_test(tc, windows_faulty);
	tcase_add_test(tc, windows_half_open_and_late);
	tcase_add_test(tc, windows_inconsistent);
	tcase_add_test(tc, windows_bounded);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(corr_traffic_suite)
