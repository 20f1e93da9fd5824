/* test_hist.c — the bounded-memory histogram against summary_of() on the
 * same samples: exact within ±HIST_EXACT_NS, at most hist_error_ns() low
 * beyond (and never outside [min, max]); merging two halves is the same as
 * adding all; bins are walked in increasing order; empty is all zeros. */
#include <math.h>
#include <stdbool.h>

#include "base/hist.h"
#include "base/summary.h"
#include "unit.h"

#define N 20011

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd64(void)
{
	/* xorshift64*: deterministic, full 64 bits. */
	rnd_state ^= rnd_state >> 12;
	rnd_state ^= rnd_state << 25;
	rnd_state ^= rnd_state >> 27;
	return rnd_state * 2685821657736338717ull;
}

/* Uniform in [-r, r]. */
static int64_t rnd_pm(int64_t r)
{
	return (int64_t)(rnd64() % (uint64_t)(2 * r + 1)) - r;
}

static void near(double got, double want)
{
	double tol = 1e-6 * fmax(fabs(want), 1.0);

	ck_assert_msg(fabs(got - want) <= tol, "got %.9g, want %.9g", got, want);
}

static struct hist *hist_of(const int64_t *v, size_t n)
{
	struct hist *h = hist_create();

	for (size_t i = 0; i < n; i++)
		hist_add(h, v[i]);
	return h;
}

/* h's summary against summary_of() on v (a copy: summary_of() sorts). */
static void expect_exact(const struct hist *h, const int64_t *v, size_t n)
{
	int64_t *copy = malloc(n * sizeof(*copy));
	struct summary want, got;

	ck_assert_ptr_nonnull(copy);
	memcpy(copy, v, n * sizeof(*copy));
	summary_of(copy, n, &want);
	free(copy);
	hist_summary(h, &got);
	ck_assert_uint_eq(got.n, want.n);
	ck_assert_int_eq(got.min, want.min);
	ck_assert_int_eq(got.max, want.max);
	ck_assert_int_eq(got.p50, want.p50);
	ck_assert_int_eq(got.p90, want.p90);
	ck_assert_int_eq(got.p99, want.p99);
	ck_assert_int_eq(got.p999, want.p999);
	near(got.mean, want.mean);
	near(got.sd, want.sd);
	ck_assert_int_eq(hist_error_ns(h), 0);
}

START_TEST(exact_range)
{
	static int64_t v[N];
	struct hist *h;

	/* Mostly a narrow peak off zero, with a spread tail on both sides
	 * up to the exact range's edges. */
	for (size_t i = 0; i < N; i++)
		v[i] = i % 7 ? 3000 + rnd_pm(200) : rnd_pm(HIST_EXACT_NS - 1);
	v[0] = HIST_EXACT_NS - 1;
	v[1] = -(HIST_EXACT_NS - 1);
	h = hist_of(v, N);
	ck_assert_uint_eq(hist_count(h), N);
	expect_exact(h, v, N);
	hist_destroy(h);
	/* Small counts, where the ranks are 1 and n. */
	for (size_t n = 1; n <= 5; n++) {
		h = hist_of(v + 10, n);
		expect_exact(h, v + 10, n);
		hist_destroy(h);
	}
}
END_TEST

/* Percentiles beyond the exact range: within [exact - err, exact] and
 * within [min, max]. */
static void expect_close(const int64_t *p_got, const int64_t *p_want,
			 const struct summary *got, int64_t err)
{
	for (int i = 0; i < 4; i++) {
		ck_assert_msg(p_got[i] <= p_want[i], "p[%d] %lld above %lld", i,
			      (long long)p_got[i], (long long)p_want[i]);
		ck_assert_msg((uint64_t)p_want[i] - (uint64_t)p_got[i] <=
			      (uint64_t)err, "p[%d] %lld more than %lld below %lld",
			      i, (long long)p_got[i], (long long)err,
			      (long long)p_want[i]);
		ck_assert_int_ge(p_got[i], got->min);
		ck_assert_int_le(p_got[i], got->max);
	}
}

static int cmp64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* stats: also compare mean and SD with summary_of() (whose differences
 * from the minimum overflow across the whole int64 range). */
static void check_wide(const int64_t *v, size_t n, bool stats)
{
	int64_t *sorted = malloc(n * sizeof(*sorted));
	struct summary want, got;
	struct hist *h = hist_of(v, n);
	int64_t err = hist_error_ns(h);

	ck_assert_ptr_nonnull(sorted);
	memcpy(sorted, v, n * sizeof(*sorted));
	qsort(sorted, n, sizeof(*sorted), cmp64);
	hist_summary(h, &got);
	ck_assert_uint_eq(got.n, n);
	ck_assert_int_eq(got.min, sorted[0]);
	ck_assert_int_eq(got.max, sorted[n - 1]);
	ck_assert_int_gt(err, 0);
	const int64_t pg[4] = { got.p50, got.p90, got.p99, got.p999 };
	const int64_t pw[4] = {
		summary_rank(sorted, n, 50), summary_rank(sorted, n, 90),
		summary_rank(sorted, n, 99), summary_rank(sorted, n, 99.9),
	};
	expect_close(pg, pw, &got, err);
	if (stats) {
		summary_of(sorted, n, &want);
		near(got.mean, want.mean);
		near(got.sd, want.sd);
	}
	free(sorted);
	hist_destroy(h);
}

START_TEST(wide_range)
{
	static int64_t v[N];

	/* Log-uniform magnitudes up to 1e12, both signs. */
	for (size_t i = 0; i < N; i++) {
		double e = (double)(rnd64() % 1000000) / 1000000.0 * 12.0;
		int64_t m = (int64_t)pow(10.0, e);

		v[i] = rnd64() & 1 ? m : -m;
	}
	check_wide(v, N, true);
	/* All positive and large: the percentiles fall in wide bins. */
	for (size_t i = 0; i < N; i++)
		v[i] = 1000000000000ll - rnd_pm(100000000000ll);
	check_wide(v, N, true);
	/* The error is no more than 1/1024 of the largest magnitude. */
	struct hist *h = hist_of(v, N);
	ck_assert_int_le(hist_error_ns(h), 1100000000000ll / 1024);
	hist_destroy(h);
}
END_TEST

/* The int64 edges: INT64_MIN's magnitude does not fit an int64, so its
 * bin must still be walked as the smallest value. */
START_TEST(extremes)
{
	int64_t v[] = { INT64_MIN, INT64_MAX, -1, 0, 1, INT64_MIN + 1,
			INT64_MAX - 1, 20000, -20000, INT64_MIN };
	size_t n = sizeof(v) / sizeof(v[0]);
	struct summary s;
	struct hist *h;

	check_wide(v, n, false);
	/* Only the minimum: every percentile is exactly it. */
	h = hist_create();
	hist_add(h, INT64_MIN);
	hist_add(h, INT64_MIN);
	hist_summary(h, &s);
	ck_assert_int_eq(s.min, INT64_MIN);
	ck_assert_int_eq(s.p50, INT64_MIN);
	ck_assert_int_eq(s.p999, INT64_MIN);
	ck_assert_int_eq(s.max, INT64_MIN);
	ck_assert(s.mean == -9223372036854775808.0);
	ck_assert(s.sd == 0);
	hist_destroy(h);
	/* Half at each end: p50 is the low end, p90 the high one (to
	 * within the top bin's width). */
	h = hist_create();
	for (int i = 0; i < 10; i++)
		hist_add(h, i < 5 ? INT64_MIN : INT64_MAX);
	hist_summary(h, &s);
	ck_assert_int_eq(s.p50, INT64_MIN);
	ck_assert_int_gt(s.p90, INT64_MAX - hist_error_ns(h) - 1);
	ck_assert(fabs(s.mean) < 1e6);
	hist_destroy(h);
}
END_TEST

static void expect_same(const struct summary *a, const struct summary *b)
{
	ck_assert_uint_eq(a->n, b->n);
	ck_assert_int_eq(a->min, b->min);
	ck_assert_int_eq(a->max, b->max);
	ck_assert_int_eq(a->p50, b->p50);
	ck_assert_int_eq(a->p90, b->p90);
	ck_assert_int_eq(a->p99, b->p99);
	ck_assert_int_eq(a->p999, b->p999);
	near(a->mean, b->mean);
	near(a->sd, b->sd);
}

START_TEST(merge_halves)
{
	static int64_t v[N];
	struct summary all_s, merged_s;
	struct hist *all, *a, *b, *empty;

	/* Two halves from different places, so re-centring the sums
	 * matters. */
	for (size_t i = 0; i < N; i++)
		v[i] = i < N / 2 ? -5000000 + rnd_pm(1000000) :
				   (int64_t)(rnd64() % 3000000000000ull);
	all = hist_of(v, N);
	a = hist_of(v, N / 2);
	b = hist_of(v + N / 2, N - N / 2);
	hist_merge(a, b);
	ck_assert_uint_eq(hist_count(a), N);
	ck_assert_int_eq(hist_error_ns(a), hist_error_ns(all));
	hist_summary(all, &all_s);
	hist_summary(a, &merged_s);
	expect_same(&merged_s, &all_s);
	/* Into an empty one, and an empty one in. */
	empty = hist_create();
	hist_merge(empty, all);
	hist_summary(empty, &merged_s);
	expect_same(&merged_s, &all_s);
	hist_destroy(empty);
	empty = hist_create();
	hist_merge(all, empty);
	hist_summary(all, &merged_s);
	expect_same(&merged_s, &all_s);
	hist_destroy(empty);
	hist_destroy(all);
	hist_destroy(a);
	hist_destroy(b);
}
END_TEST

struct walk {
	int64_t last_hi;
	uint64_t total, bins;
	bool first;
	int stop_after;		/* return 7 at this bin (1-based), 0: never */
};

static int walk_bin(int64_t lo, int64_t hi, uint64_t count, void *arg)
{
	struct walk *w = arg;

	ck_assert_int_le(lo, hi);
	ck_assert_uint_gt(count, 0);
	if (!w->first)
		ck_assert_int_gt(lo, w->last_hi);
	w->first = false;
	w->last_hi = hi;
	w->total += count;
	w->bins++;
	return w->stop_after && w->bins == (uint64_t)w->stop_after ? 7 : 0;
}

START_TEST(foreach_order)
{
	struct hist *h = hist_create();
	struct walk w = { .first = true };
	uint64_t n = 0;

	ck_assert_int_eq(hist_foreach(h, walk_bin, &w), 0);
	ck_assert_uint_eq(w.bins, 0);
	for (int i = 0; i < 5000; i++, n++)
		hist_add(h, rnd_pm(100000));
	for (int i = 0; i < 100; i++, n++)
		hist_add(h, rnd_pm(INT64_MAX / 2) * 2);
	hist_add(h, INT64_MIN);
	hist_add(h, INT64_MAX);
	hist_add(h, 0);
	n += 3;
	ck_assert_int_eq(hist_foreach(h, walk_bin, &w), 0);
	ck_assert_uint_eq(w.total, n);
	ck_assert_uint_gt(w.bins, 1000);
	/* The first bin is INT64_MIN's, the last INT64_MAX's. */
	struct walk w2 = { .first = true, .stop_after = 1 };
	ck_assert_int_eq(hist_foreach(h, walk_bin, &w2), 7);
	ck_assert_uint_eq(w2.bins, 1);
	ck_assert_int_eq(w2.last_hi, INT64_MIN);
	ck_assert_int_eq(w.last_hi, INT64_MAX);
	/* Stopping midway returns fn's value and visits no more. */
	struct walk w3 = { .first = true, .stop_after = 10 };
	ck_assert_int_eq(hist_foreach(h, walk_bin, &w3), 7);
	ck_assert_uint_eq(w3.bins, 10);
	hist_destroy(h);
}
END_TEST

START_TEST(empty)
{
	struct hist *h = hist_create();
	struct summary s;

	memset(&s, 0xa5, sizeof(s));
	hist_summary(h, &s);
	ck_assert_uint_eq(hist_count(h), 0);
	ck_assert_uint_eq(s.n, 0);
	ck_assert_int_eq(s.min, 0);
	ck_assert_int_eq(s.max, 0);
	ck_assert_int_eq(s.p50, 0);
	ck_assert(s.mean == 0 && s.sd == 0);
	ck_assert_int_eq(hist_error_ns(h), 0);
	hist_destroy(h);
	hist_destroy(NULL);
}
END_TEST

/* A histogram emptied for its next interval is as good as a new one: the
 * same figures on the same samples, wide ones included (their pages
 * stay, zeroed). */
START_TEST(reset_reuse)
{
	static int64_t v[N];
	struct hist *h = hist_create(), *fresh;

	/* Stale counts would show: fill the bins the later samples use. */
	for (size_t i = 0; i < N; i++) {
		hist_add(h, rnd_pm(INT64_C(1) << 40));
		hist_add(h, rnd_pm(HIST_EXACT_NS - 1));
		hist_add(h, 1000000 + rnd_pm(900000));
	}
	hist_reset(h);
	ck_assert_uint_eq(hist_count(h), 0);
	for (size_t i = 0; i < N; i++)
		v[i] = rnd_pm(HIST_EXACT_NS - 1);
	for (size_t i = 0; i < N; i++)
		hist_add(h, v[i]);
	expect_exact(h, v, N);
	/* Past the exact range, against a fresh one fed the same. */
	hist_reset(h);
	fresh = hist_create();
	for (size_t i = 0; i < N; i++) {
		int64_t x = 1000000 + rnd_pm(900000);

		hist_add(h, x);
		hist_add(fresh, x);
	}
	{
		struct summary a, b;

		hist_summary(h, &a);
		hist_summary(fresh, &b);
		ck_assert_uint_eq(a.n, b.n);
		ck_assert_int_eq(a.min, b.min);
		ck_assert_int_eq(a.p50, b.p50);
		ck_assert_int_eq(a.p99, b.p99);
		ck_assert_int_eq(a.max, b.max);
		near(a.mean, b.mean);
		ck_assert_int_eq(hist_error_ns(h), hist_error_ns(fresh));
	}
	hist_destroy(fresh);
	hist_destroy(h);
}
END_TEST

static Suite *hist_suite(void)
{
	Suite *s = suite_create("hist");
	TCase *tc = tcase_create("hist");

	tcase_add_test(tc, exact_range);
	tcase_add_test(tc, wide_range);
	tcase_add_test(tc, extremes);
	tcase_add_test(tc, merge_halves);
	tcase_add_test(tc, foreach_order);
	tcase_add_test(tc, empty);
	tcase_add_test(tc, reset_reuse);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hist_suite)
