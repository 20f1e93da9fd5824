/* test_hwtstamp.c — the NIC stamping configuration: what gets written (never
 * narrowing what ptp4l set), names, and refusals on devices without it. */
#include <errno.h>
#include <linux/net_tstamp.h>
#include <stdio.h>

#include "hwtstamp.h"
#include "unit.h"

START_TEST(plan)
{
	static const struct {
		int tx, rx;
		bool want_tx, want_rx;
		bool write;
		int ntx, nrx;
	} cases[] = {
		/* Fresh device: turn both on. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE, true, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* ptp4l without hwts_filter full: widen RX, keep TX. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_EVENT, true, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_SOME, false, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* Already right: no write. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, true, true, false,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* One-step mode is wider than ON: kept. */
		{ HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_ALL, true, true, false,
		  HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_ALL },
		/* TX only wanted: RX left as it is, even if narrow. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_PTP_V2_L2_EVENT, true, false, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_L2_EVENT },
		/* Nothing wanted: nothing touched, nothing turned off. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, false, false, false,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct hwtstamp_state cur = { cases[i].tx, cases[i].rx }, next;

		ck_assert_msg(hwtstamp_plan(&cur, cases[i].want_tx, cases[i].want_rx,
					    &next) == cases[i].write, "case %zu", i);
		ck_assert_int_eq(next.tx_type, cases[i].ntx);
		ck_assert_int_eq(next.rx_filter, cases[i].nrx);
	}
}
END_TEST

START_TEST(names)
{
	ck_assert_str_eq(hwtstamp_tx_name(HWTSTAMP_TX_ON), "on");
	ck_assert_str_eq(hwtstamp_tx_name(HWTSTAMP_TX_ONESTEP_P2P), "onestep-p2p");
	ck_assert_str_eq(hwtstamp_rx_name(HWTSTAMP_FILTER_ALL), "all");
	ck_assert_str_eq(hwtstamp_rx_name(HWTSTAMP_FILTER_PTP_V2_EVENT), "ptpv2-event");
	ck_assert_str_eq(hwtstamp_rx_name(HWTSTAMP_FILTER_NTP_ALL), "ntp-all");
	ck_assert_ptr_null(hwtstamp_tx_name(-1));
	ck_assert_ptr_null(hwtstamp_tx_name(99));
	ck_assert_ptr_null(hwtstamp_rx_name(HWTSTAMP_FILTER_NTP_ALL + 1));
}
END_TEST

START_TEST(devices_without_it)
{
	struct hwtstamp_state st = { -7, -7 };
	bool changed = true;
	int err = hwtstamp_get("lo", &st);

	/* lo has no hardware stamping: the kernel says so. */
	ck_assert_msg(err == -EOPNOTSUPP || err == -EINVAL, "lo: %d", err);
	ck_assert_int_eq(hwtstamp_get("tapless-nosuch0", &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_get("a-name-longer-than-ifnamsiz", &st), -ENODEV);
	err = hwtstamp_ensure("lo", true, true, &st, &changed);
	ck_assert_int_lt(err, 0);
	ck_assert(!changed);
}
END_TEST

static Suite *hwtstamp_suite(void)
{
	Suite *s = suite_create("hwtstamp");
	TCase *t = tcase_create("hwtstamp");

	tcase_add_test(t, plan);
	tcase_add_test(t, names);
	tcase_add_test(t, devices_without_it);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(hwtstamp_suite)
