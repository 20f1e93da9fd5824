/* test_syncq.c — a clock's sync quality: the bound is |offset| + 3 SD of
 * recent offsets + the asymmetry allowance; in sync only after `settle`
 * good samples while following a master (UNCALIBRATED counts only when
 * free running); any fault starts over; a grandmaster is bound 0; and the
 * 1/10/60-minute windows see exactly the samples in them. A derived clock
 * (phc2sys's) is offset by its readings against sys and bound by its own
 * bound + the reference's + half of each reading's window. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "ptp/syncq.h"
#include "unit.h"

#define S 1000000000LL

static const struct syncq_params params = {
	.threshold_ns = 1000, .asym_ns = 5, .asym_fraction = 0.1,
	.free_running = false, .settle = 3, .interval_ns = S,
	.drift_ppb = 100,
};

/* A sample, fresh: measured since the one before. */
static void add(struct syncq *q, int64_t t, enum syncq_state st, int64_t off,
		int64_t delay, bool *ok, int64_t *b)
{
	struct syncq_sample s = { .ts_ns = t, .state = st, .offset_ns = off,
				  .delay_ns = delay, .fresh = true };
	struct syncq_verdict v;

	syncq_add(q, &s, &v);
	ck_assert(!v.holdover);
	*ok = v.in_sync;
	*b = v.bound_ns;
}

/* A sample with nothing measured since the one before: what ptp4l's
 * data sets still hold (off, delay) must not count. */
static void stale(struct syncq *q, int64_t t, enum syncq_state st,
		  int64_t off, struct syncq_verdict *v)
{
	struct syncq_sample s = { .ts_ns = t, .state = st, .offset_ns = off,
				  .delay_ns = 300, .fresh = false };

	syncq_add(q, &s, v);
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
	{
		struct syncq_verdict v;

		/* A grandmaster that loses its place runs on from PTP
		 * time itself: holdover from bound 0. */
		stale(q, 6 * S, SYNCQ_LOST, SYNCQ_NONE, &v);
		ck_assert(!v.in_sync && v.holdover);
		ck_assert_int_eq(v.bound_ns, 100);
	}
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

/* The line through xs[0..n) (ns) at ts (s), at the last one: |value| +
 * 3 standard errors + |slope| * interval, worked out here the textbook way
 * (normal equations on absolute times), not as syncq does it. */
static double line_bound(const double *ts, const double *xs, int n, double iv)
{
	double st = 0, sx = 0, stt = 0, stx = 0, slope, icpt, ss = 0, tm, se;

	for (int i = 0; i < n; i++) {
		st += ts[i];
		sx += xs[i];
		stt += ts[i] * ts[i];
		stx += ts[i] * xs[i];
	}
	slope = (n * stx - st * sx) / (n * stt - st * st);
	icpt = (sx - slope * st) / n;
	for (int i = 0; i < n; i++) {
		double r = xs[i] - icpt - slope * ts[i];

		ss += r * r;
	}
	tm = st / n;
	se = sqrt(ss / (n - 2)) * sqrt(1.0 / n + (ts[n - 1] - tm) * (ts[n - 1] - tm) /
				       (stt - n * tm * tm));
	return fabs(icpt + slope * ts[n - 1]) + 3 * se + fabs(slope) * iv;
}

/* A free-running clock, measured and never steered, moves along a line:
 * from SYNCQ_FIT_MIN fresh offsets on, its bound is the line's, not one
 * reading's |offset| + 3 SD. A steered clock keeps |offset| + 3 SD. */
START_TEST(free_running_line)
{
	struct syncq_params fr = params;
	struct syncq *q, *steered;
	double ts[SYNCQ_SPREAD + 4], xs[SYNCQ_SPREAD + 4];
	bool ok;
	int64_t b = 0, bs = 0;

	fr.free_running = true;
	fr.threshold_ns = 100000;
	q = syncq_create(&fr);
	fr.free_running = false;
	steered = syncq_create(&fr);
	/* 40 ns/s of drift from +300 ns, readings +-150 ns around it. */
	for (int i = 0; i < SYNCQ_SPREAD + 4; i++) {
		int64_t off = 300 + 40 * i + (i % 2 ? 150 : -150) + (i % 3) * 20;

		ts[i] = i;
		xs[i] = (double)off;
		add(q, i * S, SYNCQ_CALIBRATING, off, 1000, &ok, &b);
		add(steered, i * S, SYNCQ_FOLLOWING, off, 1000, &ok, &bs);
		if (i + 1 < SYNCQ_FIT_MIN) {
			/* Too few for a line: both the same. */
			ck_assert_int_eq(b, bs);
		} else {
			int lo = i + 1 > SYNCQ_SPREAD ? i + 1 - SYNCQ_SPREAD : 0;
			double want = line_bound(ts + lo, xs + lo, i + 1 - lo, 1.0) +
				      5 + 0.1 * 1000;

			/* Two ways of summing: a rounding apart at most. */
			ck_assert_int_le(llabs(b - (int64_t)ceil(want)), 1);
		}
	}
	/* The line is the tighter bound by far here: the readings' noise
	 * is counted once, not in |offset| and again in the SD. */
	ck_assert_int_lt(b, bs - 200);
	ck_assert(ok);
	/* Every reading at one instant gives no line: |offset| + 3 SD. */
	syncq_reset(q);
	for (int i = 0; i < SYNCQ_FIT_MIN; i++)
		add(q, S, SYNCQ_CALIBRATING, i % 2 ? 100 : -100, 0, &ok, &b);
	ck_assert_int_eq(b, (int64_t)ceil(100 + 3 * sqrt(100.0 * 100 * 8 / 7) + 5));
	syncq_destroy(q);
	syncq_destroy(steered);
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
	{
		struct syncq_verdict v;

		ck_assert(syncq_last(q, &last, &v));
		ck_assert(v.in_sync && last.fresh);
	}
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

static struct syncq_verdict verdict(bool in, bool hold, int64_t b)
{
	return (struct syncq_verdict){ .in_sync = in, .holdover = hold,
				       .bound_ns = b, .fresh_ns = 0 };
}

START_TEST(derived_bound)
{
	struct syncq_verdict v, ref = verdict(true, false, 100);

	/* Own 30 + reference 100 + readings 5. */
	v = verdict(true, false, 30);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(v.in_sync && !v.holdover);
	ck_assert_int_eq(v.bound_ns, 135);
	/* Still settling: chained, not in sync. */
	v = verdict(false, false, 30);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(!v.in_sync);
	ck_assert_int_eq(v.bound_ns, 135);
	/* A reference out of sync vouches for nothing. */
	v = verdict(true, false, 30);
	ref = verdict(false, false, 100);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(!v.in_sync && !v.holdover);
	ck_assert_int_eq(v.bound_ns, SYNCQ_NONE);
	/* A reference in holdover: so is the clock, on the grown bound. */
	v = verdict(true, false, 30);
	ref = verdict(false, true, 400);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(!v.in_sync && v.holdover);
	ck_assert_int_eq(v.bound_ns, 435);
	/* ... until the sum passes the threshold. */
	v = verdict(true, false, 30);
	ref = verdict(false, true, 990);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(!v.in_sync && !v.holdover);
	ck_assert_int_eq(v.bound_ns, 1025);
	/* Nor does a clock with no bound of its own (no reading). */
	ref = verdict(true, false, 100);
	v = verdict(false, false, SYNCQ_NONE);
	syncq_derived_bound(&v, &ref, 5, 1000);
	ck_assert(!v.in_sync);
	ck_assert_int_eq(v.bound_ns, SYNCQ_NONE);
	/* The threshold holds for the sum: 1000 is in, 1001 out. */
	ref = verdict(true, false, 300);
	v = verdict(true, false, 600);
	syncq_derived_bound(&v, &ref, 100, 1000);
	ck_assert(v.in_sync);
	ck_assert_int_eq(v.bound_ns, 1000);
	v = verdict(true, false, 600);
	syncq_derived_bound(&v, &ref, 101, 1000);
	ck_assert(!v.in_sync);
	ck_assert_int_eq(v.bound_ns, 1001);
	/* A grandmaster reference (bound 0), no reading width. */
	ref = verdict(true, false, 0);
	v = verdict(true, false, 12);
	syncq_derived_bound(&v, &ref, 0, 1000);
	ck_assert(v.in_sync);
	ck_assert_int_eq(v.bound_ns, 12);
}
END_TEST

/* The measured cases of issue 31, as syncq sees them: ptp4l's data sets
 * still hold the last offset, but nothing new was measured. */
START_TEST(stale_never_in_sync)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_verdict v;
	int64_t last;
	bool ok;
	int64_t b;

	/* Placeholder 0/0 at start: not fresh, so neither in sync nor a
	 * bound of 0. */
	for (int i = 0; i < 7; i++) {
		stale(q, i * S, SYNCQ_FOLLOWING, 0, &v);
		ck_assert(!v.in_sync && !v.holdover);
		ck_assert_int_eq(v.bound_ns, SYNCQ_NONE);
	}
	/* Settled on fresh ones. */
	for (int i = 7; i < 10; i++)
		add(q, i * S, SYNCQ_FOLLOWING, 50, 300, &ok, &b);
	ck_assert(ok);
	last = b;
	/* Syncs dropped: copies of the stale offset. The bound never
	 * shrinks, grows by drift x age, and the clock is in holdover,
	 * never in sync, while the grown bound is within the threshold
	 * (85 + 9 x 100 <= 1000). */
	for (int i = 1; i <= 9; i++) {
		stale(q, (9 + i) * S, SYNCQ_FOLLOWING, 50, &v);
		ck_assert(!v.in_sync);
		ck_assert(v.holdover);
		ck_assert_int_eq(v.fresh_ns, 9 * S);
		/* 100 ppb: 100 ns a second since the last fresh one. */
		ck_assert_int_eq(v.bound_ns, last + 100 * i);
	}
	/* Growth past the threshold: out of sync, the bound still said. */
	stale(q, 100 * S, SYNCQ_FOLLOWING, 50, &v);
	ck_assert(!v.in_sync && !v.holdover);
	ck_assert_int_eq(v.bound_ns, last + 100 * 91);
	/* Fresh again after leaving sync: it settles again, on bounds
	 * from the measurements. */
	for (int i = 101; i < 104; i++) {
		add(q, i * S, SYNCQ_FOLLOWING, 40, 300, &ok, &b);
		ck_assert(ok == (i == 103));
		ck_assert_int_lt(b, last + 100);
	}
	/* A short holdover, within the threshold, does not undo settling:
	 * the next fresh sample is in sync at once. */
	stale(q, 104 * S, SYNCQ_FOLLOWING, 40, &v);
	ck_assert(v.holdover);
	add(q, 105 * S, SYNCQ_FOLLOWING, 40, 300, &ok, &b);
	ck_assert(ok);
	syncq_destroy(q);
}
END_TEST

START_TEST(holdover_through_loss)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_verdict v;
	bool ok;
	int64_t b;

	for (int i = 0; i < 3; i++)
		add(q, i * S, SYNCQ_FOLLOWING, 100, 300, &ok, &b);
	ck_assert(ok);
	/* The grandmaster gone, the port LISTENING: the clock runs on. */
	stale(q, 5 * S, SYNCQ_LOST, SYNCQ_NONE, &v);
	ck_assert(v.holdover && !v.in_sync);
	ck_assert_int_eq(v.bound_ns, b + 300);
	/* Relock: the first data sets still hold the pre-outage offset,
	 * not fresh: still holdover, and settling starts over. */
	stale(q, 6 * S, SYNCQ_FOLLOWING, 100, &v);
	ck_assert(v.holdover && !v.in_sync);
	add(q, 7 * S, SYNCQ_FOLLOWING, 100, 300, &ok, &b);
	ck_assert(!ok);			/* 1 of 3 after the loss */
	/* A fault ends holdover: nothing from before counts. */
	syncq_reset(q);
	stale(q, 8 * S, SYNCQ_FOLLOWING, 100, &v);
	ck_assert(!v.holdover && !v.in_sync);
	ck_assert_int_eq(v.bound_ns, SYNCQ_NONE);
	/* A fresh sample over the threshold leaves nothing to grow. */
	for (int i = 9; i < 12; i++)
		add(q, i * S, SYNCQ_FOLLOWING, 100, 300, &ok, &b);
	ck_assert(ok);
	add(q, 12 * S, SYNCQ_FOLLOWING, 5000, 300, &ok, &b);
	ck_assert(!ok);
	stale(q, 13 * S, SYNCQ_FOLLOWING, 5000, &v);
	ck_assert(!v.holdover && !v.in_sync);
	syncq_destroy(q);
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
				  .delay_ns = SYNCQ_NONE, .fresh = true };
	struct syncq_verdict v, ref100 = verdict(true, false, 100);
	struct syncq_verdict lost = verdict(false, false, SYNCQ_NONE);
	int64_t w;

	dp.asym_ns = 0;
	dp.asym_fraction = 0;
	q = syncq_create(&dp);
	for (int i = 0; i < 3; i++) {
		s.ts_ns = i * S;
		ck_assert_int_eq(syncq_derived_offset(&ref, &own, 37,
						      &s.offset_ns, &w), 0);
		syncq_add(q, &s, &v);
		/* 10 + 3 SD(10, 10, ...) = 10; + 100 + 10 + 10. */
		syncq_derived_bound(&v, &ref100, w, dp.threshold_ns);
		ck_assert_int_eq(v.bound_ns, 130);
		ck_assert(v.in_sync == (i == 2));	/* settles on the third */
	}
	/* The reference lost: out at once, the window still has the
	 * clock's own verdicts. */
	s.ts_ns = 3 * S;
	syncq_add(q, &s, &v);
	syncq_derived_bound(&v, &lost, w, dp.threshold_ns);
	ck_assert(!v.in_sync);
	ck_assert_int_eq(v.bound_ns, SYNCQ_NONE);
	syncq_destroy(q);
}
END_TEST

/* The clock state is read off the verdict: FREERUN before settling,
 * LOCKED in sync, HOLDOVER while nothing is measured, FREERUN again once
 * the grown bound passes the threshold; in_sync denied by the caller
 * (syncd_blind()) is never LOCKED. */
START_TEST(clock_state)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_verdict v;
	int64_t t = 0, b;
	bool ok;

	ck_assert_int_eq(syncq_clock_state(false, false), SYNCQ_FREERUN);
	ck_assert_int_eq(syncq_clock_state(true, false), SYNCQ_LOCKED);
	ck_assert_int_eq(syncq_clock_state(false, true), SYNCQ_HOLDOVER);
	ck_assert_str_eq(syncq_clock_state_name(SYNCQ_FREERUN), "FREERUN");
	ck_assert_str_eq(syncq_clock_state_name(SYNCQ_LOCKED), "LOCKED");
	ck_assert_str_eq(syncq_clock_state_name(SYNCQ_HOLDOVER), "HOLDOVER");

	add(q, t += S, SYNCQ_FOLLOWING, 10, 300, &ok, &b);
	ck_assert_int_eq(syncq_clock_state(ok, false), SYNCQ_FREERUN);
	add(q, t += S, SYNCQ_FOLLOWING, 10, 300, &ok, &b);
	add(q, t += S, SYNCQ_FOLLOWING, 10, 300, &ok, &b);
	ck_assert_int_eq(syncq_clock_state(ok, false), SYNCQ_LOCKED);
	/* Blind: the caller's in_sync is false, the clock not held over. */
	ck_assert_int_eq(syncq_clock_state(false, false), SYNCQ_FREERUN);
	stale(q, t += S, SYNCQ_FOLLOWING, 10, &v);
	ck_assert_int_eq(syncq_clock_state(v.in_sync, v.holdover),
			 SYNCQ_HOLDOVER);
	/* 100 ppb from a bound of 45 ns: past 1000 ns after ~10 s. */
	for (int i = 0; i < 20; i++)
		stale(q, t += S, SYNCQ_LOST, SYNCQ_NONE, &v);
	ck_assert_int_eq(syncq_clock_state(v.in_sync, v.holdover),
			 SYNCQ_FREERUN);
	syncq_destroy(q);
}
END_TEST

/* A path delay change is counted when a fresh delay moves by more than
 * 100 ns and more than 10 % from the fresh delay before it. */
START_TEST(delay_changes)
{
	struct syncq *q = syncq_create(&params);
	struct syncq_verdict v;
	int64_t t = 0, b;
	bool ok;

	add(q, t += S, SYNCQ_FOLLOWING, 0, 300, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 0);	/* nothing before */
	add(q, t += S, SYNCQ_FOLLOWING, 0, 400, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 0);	/* 100: not more */
	add(q, t += S, SYNCQ_FOLLOWING, 0, 501, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 1);	/* 101 > 10 % of 400 */
	/* Long path: 10 % of 10000 is 1000, the larger of the two. */
	add(q, t += S, SYNCQ_FOLLOWING, 0, 10000, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 2);
	add(q, t += S, SYNCQ_FOLLOWING, 0, 10900, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 2);	/* 900 <= 1090 */
	add(q, t += S, SYNCQ_FOLLOWING, 0, 9800, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 3);	/* 1100 > 1090 */
	/* Stale samples hold old figures: never compared. */
	stale(q, t += S, SYNCQ_FOLLOWING, 0, &v);	/* delay 300, stale */
	ck_assert_int_eq(syncq_delay_changes(q), 3);
	/* Against the last fresh delay (9800), across a reset. */
	syncq_reset(q);
	add(q, t += S, SYNCQ_FOLLOWING, 0, 9850, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 3);
	add(q, t += S, SYNCQ_FOLLOWING, 0, 20000, &ok, &b);
	ck_assert_int_eq(syncq_delay_changes(q), 4);
	syncq_destroy(q);
}
END_TEST

static Suite *syncq_suite(void)
{
	Suite *s = suite_create("syncq");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, bound_and_settle);
	tcase_add_test(tc, states);
	tcase_add_test(tc, free_running_line);
	tcase_add_test(tc, windows);
	tcase_add_test(tc, derived_offset);
	tcase_add_test(tc, derived_bound);
	tcase_add_test(tc, derived_chain);
	tcase_add_test(tc, stale_never_in_sync);
	tcase_add_test(tc, holdover_through_loss);
	tcase_add_test(tc, clock_state);
	tcase_add_test(tc, delay_changes);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(syncq_suite)
