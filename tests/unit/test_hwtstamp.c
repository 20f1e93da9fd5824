/* test_hwtstamp.c — the NIC stamping configuration: what gets written (never
 * narrowing what ptp4l set), what counts as narrower, names, and refusals on
 * devices without hardware stamping (all this machine has). */
#include <errno.h>
#include <limits.h>
#include <linux/net_tstamp.h>
#include <stdio.h>
#include <string.h>

#include "stamp/hwtstamp.h"
#include "stamp/ts.h"
#include "unit.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(plan_cases)
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
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V1_L4_EVENT, true, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* SOME and NTP_ALL are not ALL either. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_SOME, false, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_NTP_ALL, false, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* Already right: no write. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, true, true, false,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* One-step modes stamp TX too: kept, not "downgraded" to ON. */
		{ HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_ALL, true, true, false,
		  HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_ALL },
		{ HWTSTAMP_TX_ONESTEP_P2P, HWTSTAMP_FILTER_PTP_V2_L2_EVENT, true, true,
		  true, HWTSTAMP_TX_ONESTEP_P2P, HWTSTAMP_FILTER_ALL },
		/* TX only wanted: RX left as it is, even if narrow or none. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_PTP_V2_L2_EVENT, true, false, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_L2_EVENT },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_NONE, true, false, false,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_NONE },
		/* RX only wanted: TX left off, and left on. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE, false, true, true,
		  HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_ALL },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_NONE, false, true, true,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
		/* Nothing wanted: nothing touched, nothing turned off. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE, false, false, false,
		  HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, false, false, false,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL },
	};

	for (size_t i = 0; i < N(cases); i++) {
		struct hwtstamp_state cur = { cases[i].tx, cases[i].rx };
		struct hwtstamp_state next = { -7, -7 };

		ck_assert_msg(hwtstamp_plan(&cur, cases[i].want_tx, cases[i].want_rx,
					    &next) == cases[i].write, "case %zu", i);
		ck_assert_msg(next.tx_type == cases[i].ntx, "case %zu: tx %d",
			      i, next.tx_type);
		ck_assert_msg(next.rx_filter == cases[i].nrx, "case %zu: rx %d",
			      i, next.rx_filter);
		/* cur is the caller's: read, never written. */
		ck_assert_int_eq(cur.tx_type, cases[i].tx);
		ck_assert_int_eq(cur.rx_filter, cases[i].rx);
	}
}
END_TEST

/* Every state the kernel can report, every request: the plan gives what was
 * asked, never takes anything away, and writes exactly when it differs. */
START_TEST(plan_every_state)
{
	for (int tx = HWTSTAMP_TX_OFF; tx <= HWTSTAMP_TX_ONESTEP_P2P; tx++)
	for (int rx = HWTSTAMP_FILTER_NONE; rx <= HWTSTAMP_FILTER_NTP_ALL; rx++)
	for (int w = 0; w < 4; w++) {
		struct hwtstamp_state cur = { tx, rx }, next;
		bool want_tx = w & 1, want_rx = w & 2;
		bool write = hwtstamp_plan(&cur, want_tx, want_rx, &next);

		ck_assert(!hwtstamp_narrower(&cur, &next));
		ck_assert(write == (next.tx_type != tx || next.rx_filter != rx));
		if (want_tx)
			ck_assert_int_ne(next.tx_type, HWTSTAMP_TX_OFF);
		else
			ck_assert_int_eq(next.tx_type, tx);
		if (tx != HWTSTAMP_TX_OFF)
			ck_assert_int_eq(next.tx_type, tx);
		if (want_rx)
			ck_assert_int_eq(next.rx_filter, HWTSTAMP_FILTER_ALL);
		else
			ck_assert_int_eq(next.rx_filter, rx);
	}
}
END_TEST

START_TEST(narrower)
{
	static const struct {
		int atx, arx, gtx, grx;
		bool narrower;
	} cases[] = {
		/* Got what was asked. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, false },
		/* Asked ALL, the driver could only do PTP event packets. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_EVENT, true },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_SOME, true },
		/* Asked TX on, the driver left it off. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL,
		  HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_ALL, true },
		{ HWTSTAMP_TX_ONESTEP_SYNC, HWTSTAMP_FILTER_PTP_V2_EVENT,
		  HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_PTP_V2_EVENT, true },
		/* A PTP filter kept as it was, answered with a wider one. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_L2_EVENT,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_EVENT, false },
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_L2_EVENT,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL, false },
		/* ... or dropped altogether. */
		{ HWTSTAMP_TX_ON, HWTSTAMP_FILTER_PTP_V2_L2_EVENT,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_NONE, true },
		/* Asked nothing, got something: wider. */
		{ HWTSTAMP_TX_OFF, HWTSTAMP_FILTER_NONE,
		  HWTSTAMP_TX_ON, HWTSTAMP_FILTER_SOME, false },
	};

	for (size_t i = 0; i < N(cases); i++) {
		struct hwtstamp_state asked = { cases[i].atx, cases[i].arx };
		struct hwtstamp_state got = { cases[i].gtx, cases[i].grx };

		ck_assert_msg(hwtstamp_narrower(&asked, &got) == cases[i].narrower,
			      "case %zu", i);
	}
}
END_TEST

START_TEST(names)
{
	static const char *const tx[] = {
		"off", "on", "onestep-sync", "onestep-p2p",
	};
	static const char *const rx[] = {
		"none", "all", "some",
		"ptpv1-l4-event", "ptpv1-l4-sync", "ptpv1-l4-delay-req",
		"ptpv2-l4-event", "ptpv2-l4-sync", "ptpv2-l4-delay-req",
		"ptpv2-l2-event", "ptpv2-l2-sync", "ptpv2-l2-delay-req",
		"ptpv2-event", "ptpv2-sync", "ptpv2-delay-req",
		"ntp-all",
	};

	/* The kernel's order: index i is the value i. */
	ck_assert_uint_eq(N(tx), HWTSTAMP_TX_ONESTEP_P2P + 1);
	ck_assert_uint_eq(N(rx), HWTSTAMP_FILTER_NTP_ALL + 1);
	for (int i = 0; i < (int)N(tx); i++)
		ck_assert_str_eq(hwtstamp_tx_name(i), tx[i]);
	for (int i = 0; i < (int)N(rx); i++)
		ck_assert_str_eq(hwtstamp_rx_name(i), rx[i]);
	ck_assert_str_eq(hwtstamp_rx_name(HWTSTAMP_FILTER_PTP_V2_EVENT),
			 "ptpv2-event");

	ck_assert_ptr_null(hwtstamp_tx_name(-1));
	ck_assert_ptr_null(hwtstamp_tx_name(HWTSTAMP_TX_ONESTEP_P2P + 1));
	ck_assert_ptr_null(hwtstamp_tx_name(INT_MIN));
	ck_assert_ptr_null(hwtstamp_tx_name(INT_MAX));
	ck_assert_ptr_null(hwtstamp_rx_name(-1));
	ck_assert_ptr_null(hwtstamp_rx_name(HWTSTAMP_FILTER_NTP_ALL + 1));
	ck_assert_ptr_null(hwtstamp_rx_name(INT_MIN));
	ck_assert_ptr_null(hwtstamp_rx_name(INT_MAX));
}
END_TEST

/* What a stamped socket's set-up did to the device, for the program to
 * say (the library logs nothing). */
START_TEST(set_text)
{
	struct ts_info ti = { .hw_set_tx = -1, .hw_set_rx = -1 };
	char buf[96] = "untouched";

	ck_assert(!ts_hw_set_text(&ti, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "untouched");
	ti.hw_set_tx = HWTSTAMP_TX_ONESTEP_SYNC;
	ti.hw_set_rx = HWTSTAMP_FILTER_ALL;
	ck_assert(ts_hw_set_text(&ti, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "hardware stamping set to tx onestep-sync, rx all");
	ti.hw_set_rx = 99;	/* a filter of a newer kernel */
	ck_assert(ts_hw_set_text(&ti, buf, sizeof(buf)));
	ck_assert_str_eq(buf, "hardware stamping set to tx onestep-sync, rx ?");
}
END_TEST

START_TEST(lo_has_none)
{
	struct hwtstamp_state st = { -7, -7 };
	int err = hwtstamp_get("lo", &st);

	/* lo has no hardware stamping: the kernel says so, and st is left
	 * alone. Which error depends on the kernel. */
	printf("hwtstamp: lo: %d (%s)\n", err, err == -EOPNOTSUPP ? "EOPNOTSUPP" :
	       err == -EINVAL ? "EINVAL" : "unexpected");
	ck_assert_int_lt(err, 0);
	ck_assert_msg(err == -EOPNOTSUPP || err == -EINVAL, "lo: %d", err);
	ck_assert_int_eq(st.tx_type, -7);
	ck_assert_int_eq(st.rx_filter, -7);
}
END_TEST

START_TEST(unknown_devices)
{
	struct hwtstamp_state st = { -7, -7 }, want = { HWTSTAMP_TX_ON,
							HWTSTAMP_FILTER_ALL };
	bool changed = true;

	ck_assert_int_eq(hwtstamp_get("tapless-nosuch0", &st), -ENODEV);
	/* Names no device can have, refused before they reach the kernel
	 * (one would be cut to another device's name). */
	ck_assert_int_eq(hwtstamp_get("a-name-longer-than-ifnamsiz", &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_get("lo-and-then-more", &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_get("", &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_get(NULL, &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_set("tapless-nosuch0", &want, &st), -ENODEV);
	ck_assert_int_eq(hwtstamp_ensure("tapless-nosuch0", true, true, &st,
					 &changed), -ENODEV);
	ck_assert(!changed);
	ck_assert_int_eq(st.tx_type, -7);
	ck_assert_int_eq(st.rx_filter, -7);
}
END_TEST

START_TEST(ensure_on_lo_refused)
{
	struct hwtstamp_state now = { -7, -7 };
	struct hwtstamp_state want = { HWTSTAMP_TX_ON, HWTSTAMP_FILTER_ALL };
	bool changed = true;
	int before = hwtstamp_get("lo", &now);
	int err = hwtstamp_ensure("lo", true, true, &now, &changed);

	/* The read fails, so nothing is planned or written. */
	ck_assert_int_lt(err, 0);
	ck_assert_int_eq(err, before);
	ck_assert(!changed);
	ck_assert_int_eq(now.tx_type, -7);
	ck_assert_int_eq(now.rx_filter, -7);
	ck_assert_int_eq(hwtstamp_get("lo", &now), before);

	/* A direct write is refused too (EOPNOTSUPP as root, EPERM not). */
	err = hwtstamp_set("lo", &want, &now);
	ck_assert_msg(err == -EOPNOTSUPP || err == -EINVAL || err == -EPERM,
		      "set lo: %d", err);
	ck_assert_int_eq(now.tx_type, -7);
}
END_TEST

/* The message for a failed enable: strerror(), except the narrowed filter
 * of a NIC that can be read (test_hwsim.sh has one); a device that cannot
 * be read, or none named, gets strerror() for -ERANGE too. */
START_TEST(why_messages)
{
	char buf[200];

	ck_assert_str_eq(hwtstamp_why(NULL, -ENODEV, buf, sizeof(buf)),
			 strerror(ENODEV));
	ck_assert_str_eq(hwtstamp_why("lo", -EOPNOTSUPP, buf, sizeof(buf)),
			 strerror(EOPNOTSUPP));
	ck_assert_str_eq(hwtstamp_why(NULL, -ERANGE, buf, sizeof(buf)),
			 strerror(ERANGE));
	ck_assert_str_eq(hwtstamp_why("tlnosuch0", -ERANGE, buf, sizeof(buf)),
			 strerror(ERANGE));
	/* Cut to the buffer, never past it. */
	ck_assert_uint_eq(strlen(hwtstamp_why(NULL, -ENODEV, buf, 5)), 4);
}
END_TEST

static Suite *hwtstamp_suite(void)
{
	Suite *s = suite_create("hwtstamp");
	TCase *pure = tcase_create("pure");
	TCase *dev = tcase_create("device");

	tcase_add_test(pure, plan_cases);
	tcase_add_test(pure, plan_every_state);
	tcase_add_test(pure, narrower);
	tcase_add_test(pure, set_text);
	tcase_add_test(pure, names);
	suite_add_tcase(s, pure);

	tcase_add_test(dev, lo_has_none);
	tcase_add_test(dev, unknown_devices);
	tcase_add_test(dev, ensure_on_lo_refused);
	tcase_add_test(dev, why_messages);
	suite_add_tcase(s, dev);
	return s;
}

UNIT_MAIN(hwtstamp_suite)
