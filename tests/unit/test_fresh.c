/* test_fresh.c — whether ptp4l measured a clock since the sample before,
 * case by case as issue 31 measured them with real ptp4l: the 0/0
 * placeholder at start, the ingress time moving before an offset can be
 * computed, Sync dropped (the data sets repeat), a relock that still shows
 * the pre-outage figures, a step (ingress back to 0), and a ptp4l without
 * TIME_STATUS_NP judged on its Sync and Follow_Up counters. */
#include "ptp/fresh.h"
#include "unit.h"

/* A sample's answers: port 0 follows, TIME_STATUS_NP and CURRENT_DATA_SET
 * answered. */
static struct fresh_input ans(int64_t ingress, int64_t offset, int64_t delay)
{
	return (struct fresh_input){
		.port = 0, .have_ts = true, .ingress_ns = ingress,
		.ts_offset_ns = offset, .have_cds = true, .delay_ns = delay,
	};
}

static struct fresh start(void)
{
	struct fresh f = { 0 };

	fresh_reset(&f);
	return f;
}

START_TEST(placeholder_then_live)
{
	struct fresh f = start();
	struct fresh_input in;

	/* The first answers only set where to count from. */
	in = ans(0, 0, 0);
	ck_assert(!fresh_judge(&f, &in));
	/* ptp4l took a Sync (ingress moved) but had no delay yet: its
	 * offset is still the placeholder 0. */
	in = ans(1000, 0, 0);
	ck_assert(!fresh_judge(&f, &in));
	in = ans(2000, 0, 20358);
	ck_assert(!fresh_judge(&f, &in));	/* offset never moved */
	/* A computed offset: from here on, a moving ingress is enough. */
	in = ans(3000, -405, 18312);
	ck_assert(fresh_judge(&f, &in));
	in = ans(4000, -405, 18312);		/* same offset, new Sync */
	ck_assert(fresh_judge(&f, &in));
}
END_TEST

START_TEST(sync_dropped)
{
	struct fresh f = start();
	struct fresh_input in;

	in = ans(1000, 7, 100);
	fresh_judge(&f, &in);
	in = ans(2000, 9, 100);
	ck_assert(fresh_judge(&f, &in));
	/* No Sync: the data sets repeat, sample after sample. */
	for (int i = 0; i < 16; i++) {
		in = ans(2000, 9, 100);
		ck_assert(!fresh_judge(&f, &in));
	}
	/* No answer at all this time: nothing measured either. */
	in = ans(3000, 11, 100);
	in.have_ts = false;
	ck_assert(!fresh_judge(&f, &in));
	/* The answer after counts against the last one seen: a Sync
	 * taken since then is new evidence, once. */
	in = ans(3000, 11, 100);
	ck_assert(fresh_judge(&f, &in));
	in = ans(3000, 11, 100);
	ck_assert(!fresh_judge(&f, &in));
	in = ans(4000, 12, 100);
	ck_assert(fresh_judge(&f, &in));
	/* A step: ptp4l resets the ingress time to 0. */
	in = ans(0, 12, 100);
	ck_assert(!fresh_judge(&f, &in));
	/* No delay measured is no measurement. */
	in = ans(5000, 13, 0);
	ck_assert(!fresh_judge(&f, &in));
	in = ans(6000, 14, 100);
	in.have_cds = false;
	ck_assert(!fresh_judge(&f, &in));
}
END_TEST

START_TEST(relock_stale)
{
	struct fresh f = start();
	struct fresh_input in;

	in = ans(1000, 50, 100);
	fresh_judge(&f, &in);
	in = ans(2000, 60, 100);
	ck_assert(fresh_judge(&f, &in));
	/* The master gone: no port follows. */
	in = ans(2000, 60, 100);
	in.port = -1;
	ck_assert(!fresh_judge(&f, &in));
	/* Relock: the port follows again, the data sets still hold the
	 * pre-outage figures. */
	in = ans(2000, 60, 100);
	ck_assert(!fresh_judge(&f, &in));
	/* A new Sync, but the offset is still the old one (ptp4l moves
	 * the ingress before it computes). */
	in = ans(3000, 60, 100);
	ck_assert(!fresh_judge(&f, &in));
	/* Computed. */
	in = ans(4000, 75, 100);
	ck_assert(fresh_judge(&f, &in));
}
END_TEST

START_TEST(counters_without_time_status)
{
	struct fresh f = start();
	struct fresh_input in = {
		.port = 1, .ts_refused = true, .have_stats = true,
		.rx_sync = 8, .rx_follow_up = 8, .have_cds = true,
		.delay_ns = 100,
	};

	ck_assert(!fresh_judge(&f, &in));	/* where to count from */
	ck_assert_int_eq(f.rx_moved, -1);
	in.rx_sync = 10, in.rx_follow_up = 10;
	ck_assert(fresh_judge(&f, &in));
	ck_assert_int_eq(f.rx_moved, 1);
	/* The rx Sync counter held still: no Sync arrives. */
	ck_assert(!fresh_judge(&f, &in));
	ck_assert_int_eq(f.rx_moved, 0);
	/* Sync without its Follow_Up (two-step): not a measurement. */
	in.rx_sync = 12;
	ck_assert(!fresh_judge(&f, &in));
	/* Another port follows now: count from it. */
	in.port = 2, in.rx_sync = 20, in.rx_follow_up = 20;
	ck_assert(!fresh_judge(&f, &in));
	in.rx_sync = 21, in.rx_follow_up = 21;
	ck_assert(fresh_judge(&f, &in));
	/* A ptp4l that has not said it refuses TIME_STATUS_NP and did not
	 * answer it: no evidence, nothing fresh. */
	in.ts_refused = false;
	in.rx_sync = 22, in.rx_follow_up = 22;
	ck_assert(!fresh_judge(&f, &in));
}
END_TEST

START_TEST(restart_forgets)
{
	struct fresh f = start();
	struct fresh_input in;

	in = ans(1000, 5, 100);
	fresh_judge(&f, &in);
	in = ans(2000, 6, 100);
	ck_assert(fresh_judge(&f, &in));
	/* ptp4l restarted: its placeholder is the new base, even if the
	 * ingress moved (a Sync taken before any offset). */
	fresh_reset(&f);
	in = ans(0, 0, 0);
	ck_assert(!fresh_judge(&f, &in));
	in = ans(500, 0, 90);
	ck_assert(!fresh_judge(&f, &in));
	in = ans(600, 4, 90);
	ck_assert(fresh_judge(&f, &in));
}
END_TEST

static Suite *fresh_suite(void)
{
	Suite *s = suite_create("fresh");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, placeholder_then_live);
	tcase_add_test(tc, sync_dropped);
	tcase_add_test(tc, relock_stale);
	tcase_add_test(tc, counters_without_time_status);
	tcase_add_test(tc, restart_forgets);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(fresh_suite)
