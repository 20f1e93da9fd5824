/* test_syncq.c — a clock's sync quality: the bound is |offset| + 3 SD of
 * recent offsets + the asymmetry allowance; in sync only after `settle`
 * good samples while following a master (UNCALIBRATED counts only when
 * free running); any fault starts over; a grandmaster is bound 0; and the
 * 1/10/60-minute windows see exactly the samples in them. A derived clock
 * (phc2sys's) is offset by its readings against sys and bound by its own
 * bound + the reference's + half of each reading's window. */
#include <errno.h>
#include <math.h>

#include "ptp/syncq.h"
#include "unit.h"

#define S 1000000000LL

static const struct syncq_params params = {
	.threshold_ns = 1000, .asym_ns = 5, .asym_fraction = 0.1,
	.free_running = false, .settle = 3, .interval_ns = S,
};

static void add(struct syncq *q, int64_t t, enum syncq_state st, int64_t off,
		int64_t delay, bool *ok, int64_t *b)
{
	struct syncq_sample s = { .ts_ns = t, .state = st, .offset_ns = off,
				  .delay_ns = delay };

	syncq_add(q, &s, ok, b);
}

START_TEST(bound_and_settle)
{
	struct syncq *q = syncq_create(&params);
	bool ok;
	int64_t b;

	/* One offset: no spread yet. 100 + 0 + 5 + 0.1 * 300 = 135. */
	add(q, 1 * S, SYNCQ_FOLLOWING, -100, 300, &ok, &b);
	ck_assert_int_eq(b, 135);
	ck_assert(!ok);				/* 1 of 3 */
	add(q, 2 * S, SYNCQ_FOLLOWING, 100, 300, &ok, &b);
	/* SD of {-100, 100} = 141.42; 100 + 424.26 + 5 + 30 -> 560. */
	ck_assert_int_eq(b, 560);
	ck_assert(!ok);
	add(q, 3 * S, SYNCQ_FOLLOWING, 0, 300, &ok, &b);
	/* SD of {-100, 100, 0} = 100: 0 + 300 + 35 = 335. */
	ck_assert_int_eq(b, 335);
	ck_assert(ok);				/* third good one */
	/* Over the threshold: out at once, and settling starts over. */
	add(q, 4 * S, SYNCQ_FOLLOWING, 5000, 300, &ok, &b);
	ck_assert(!ok);
	ck_assert_int_gt(b, 1000);
	syncq_destroy(q);
}
END_TEST

START_TEST(states)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_params fr = params;
	bool ok;
	int64_t b;

	for (int i = 0; i < 5; i++)
		add(q, i * S, SYNCQ_CALIBRATING, 10, 100, &ok, &b);
	ck_assert(!ok);				/* servo not locked */
	add(q, 5 * S, SYNCQ_GRANDMASTER, SYNCQ_NONE, SYNCQ_NONE, &ok, &b);
	ck_assert(ok);
	ck_assert_int_eq(b, 0);
	add(q, 6 * S, SYNCQ_LOST, SYNCQ_NONE, SYNCQ_NONE, &ok, &b);
	ck_assert(!ok);
	ck_assert_int_eq(b, SYNCQ_NONE);
	syncq_destroy(q);

	fr.free_running = true;
	q = syncq_create(&fr);
	for (int i = 0; i < 3; i++)
		add(q, i * S, SYNCQ_CALIBRATING, 10, 100, &ok, &b);
	ck_assert(ok);				/* measured, not steered */
	/* A fault in between: three more needed. */
	syncq_reset(q);
	add(q, 4 * S, SYNCQ_CALIBRATING, 10, 100, &ok, &b);
	ck_assert(!ok);
	ck_assert_int_eq(b, 10 + 5 + 10);	/* spread restarted too */
	syncq_destroy(q);
}
END_TEST

START_TEST(windows)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_stats st;
	struct syncq_sample last;
	bool ok;
	int64_t b;

	/* Two hours at 1 Hz: offset = i % 7, delay 500 + i % 3. */
	for (int64_t i = 0; i < 7200; i++)
		add(q, i * S, SYNCQ_FOLLOWING, i % 7, 500 + i % 3, &ok, &b);
	syncq_window(q, 7199 * S, 60 * S, &st);
	ck_assert_uint_eq(st.samples, 60);
	ck_assert_uint_eq(st.measured, 60);
	ck_assert_int_eq(st.offset_min, 0);
	ck_assert_int_eq(st.offset_max, 6);
	ck_assert_int_eq(st.delay_min, 500);
	ck_assert_int_eq(st.delay_max, 502);
	{
		double sum = 0, ss = 0;

		for (int64_t i = 7140; i < 7200; i++)
			sum += (double)(i % 7);
		for (int64_t i = 7140; i < 7200; i++)
			ss += pow((double)(i % 7) - sum / 60, 2);
		ck_assert(fabs(st.offset_mean - sum / 60) < 1e-9);
		ck_assert(fabs(st.offset_sd - sqrt(ss / 59)) < 1e-9);
	}
	ck_assert_uint_eq(st.in_sync, 60);
	ck_assert_int_ge(st.bound_max, 6 + 5 + 50);
	syncq_window(q, 7199 * S, 600 * S, &st);
	ck_assert_uint_eq(st.samples, 600);
	/* The ring keeps an hour: 60 minutes are all there. */
	syncq_window(q, 7199 * S, 3600 * S, &st);
	ck_assert_uint_eq(st.samples, 3600);
	/* A window in the past. */
	syncq_window(q, 7000 * S, 10 * S, &st);
	ck_assert_uint_eq(st.samples, 10);
	ck_assert(syncq_last(q, &last, &ok, &b));
	ck_assert_int_eq(last.ts_ns, 7199 * S);
	ck_assert_int_eq(last.offset_ns, 7199 % 7);
	syncq_destroy(q);
}
END_TEST

START_TEST(derived_offset)
{
	struct syncq_reading ref = { .offset_ns = 1000, .window_ns = 40 };
	struct syncq_reading own = { .offset_ns = 1250, .window_ns = 61 };
	int64_t off = 7, w = 7;

	/* A PHC: own - ref; width 40/2 + 61/2 (whole ns) = 20 + 30. */
	ck_assert_int_eq(syncq_derived_offset(&ref, &own, -1, &off, &w), 0);
	ck_assert_int_eq(off, 250);
	ck_assert_int_eq(w, 50);
	/* sys belongs at PHC - 37 s: a PHC 37 s + 123 ns ahead of sys puts
	 * sys 123 ns early. Only the reference's window counts. */
	ref.offset_ns = 37 * S + 123;
	ck_assert_int_eq(syncq_derived_offset(&ref, NULL, 37, &off, &w), 0);
	ck_assert_int_eq(off, -123);
	ck_assert_int_eq(w, 20);
	ref.offset_ns = 37 * S - 77;
	ck_assert_int_eq(syncq_derived_offset(&ref, NULL, 37, &off, &w), 0);
	ck_assert_int_eq(off, 77);
	/* TAI - UTC not known: nothing to judge sys against; untouched. */
	off = w = 7;
	ck_assert_int_eq(syncq_derived_offset(&ref, NULL, -1, &off, &w),
			 -EAGAIN);
	ck_assert_int_eq(off, 7);
	ck_assert_int_eq(w, 7);
	/* TAI - UTC 0 is known (a PTP domain on UTC). */
	ref.offset_ns = 5;
	ck_assert_int_eq(syncq_derived_offset(&ref, NULL, 0, &off, &w), 0);
	ck_assert_int_eq(off, -5);
}
END_TEST

START_TEST(derived_bound)
{
	bool ok;
	int64_t b;

	/* Own 30 + reference 100 + readings 5. */
	ok = true, b = 30;
	syncq_derived_bound(&ok, &b, true, 100, 5, 1000);
	ck_assert(ok);
	ck_assert_int_eq(b, 135);
	/* Still settling: chained, not in sync. */
	ok = false, b = 30;
	syncq_derived_bound(&ok, &b, true, 100, 5, 1000);
	ck_assert(!ok);
	ck_assert_int_eq(b, 135);
	/* A reference out of sync vouches for nothing. */
	ok = true, b = 30;
	syncq_derived_bound(&ok, &b, false, 100, 5, 1000);
	ck_assert(!ok);
	ck_assert_int_eq(b, SYNCQ_NONE);
	/* Nor does a clock with no bound of its own (no reading). */
	ok = false, b = SYNCQ_NONE;
	syncq_derived_bound(&ok, &b, true, 100, 5, 1000);
	ck_assert(!ok);
	ck_assert_int_eq(b, SYNCQ_NONE);
	/* The threshold holds for the sum: 1000 is in, 1001 out. */
	ok = true, b = 600;
	syncq_derived_bound(&ok, &b, true, 300, 100, 1000);
	ck_assert(ok);
	ck_assert_int_eq(b, 1000);
	ok = true, b = 600;
	syncq_derived_bound(&ok, &b, true, 300, 101, 1000);
	ck_assert(!ok);
	ck_assert_int_eq(b, 1001);
	/* A grandmaster reference (bound 0), no reading width. */
	ok = true, b = 12;
	syncq_derived_bound(&ok, &b, true, 0, 0, 1000);
	ck_assert(ok);
	ck_assert_int_eq(b, 12);
}
END_TEST

/* The path syncd takes for a PHC phc2sys keeps on another: readings,
 * offset, syncq_add() (asymmetry 0 for derived clocks), chained bound. */
START_TEST(derived_chain)
{
	struct syncq_params dp = params;
	struct syncq_reading ref = { .offset_ns = 500, .window_ns = 20 };
	struct syncq_reading own = { .offset_ns = 510, .window_ns = 20 };
	struct syncq *q;
	struct syncq_sample s = { .state = SYNCQ_FOLLOWING,
				  .delay_ns = SYNCQ_NONE };
	int64_t w, b;
	bool ok;

	dp.asym_ns = 0;
	dp.asym_fraction = 0;
	q = syncq_create(&dp);
	for (int i = 0; i < 3; i++) {
		s.ts_ns = i * S;
		ck_assert_int_eq(syncq_derived_offset(&ref, &own, 37,
						      &s.offset_ns, &w), 0);
		syncq_add(q, &s, &ok, &b);
		/* 10 + 3 SD(10, 10, ...) = 10; + 100 + 10 + 10. */
		syncq_derived_bound(&ok, &b, true, 100, w, dp.threshold_ns);
		ck_assert_int_eq(b, 130);
		ck_assert(ok == (i == 2));	/* settles on the third */
	}
	/* The reference lost: out at once, the window still has the
	 * clock's own verdicts. */
	s.ts_ns = 3 * S;
	syncq_add(q, &s, &ok, &b);
	syncq_derived_bound(&ok, &b, false, 100, w, dp.threshold_ns);
	ck_assert(!ok);
	ck_assert_int_eq(b, SYNCQ_NONE);
	syncq_destroy(q);
}
END_TEST

static Suite *syncq_suite(void)
{
	Suite *s = suite_create("syncq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bound_and_settle);
	tcase_add_test(tc, states);
	tcase_add_test(tc, windows);
	tcase_add_test(tc, derived_offset);
	tcase_add_test(tc, derived_bound);
	tcase_add_test(tc, derived_chain);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(syncq_suite)
