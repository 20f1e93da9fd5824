/* test_phc.c — PHC reading: sample selection of the sys-phc-sys methods
 * from constructed readings, and opening. The live comparison runs only
 * where a PHC exists (not on veth or loopback machines). */
#include <errno.h>
#include <linux/ptp_clock.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "phc.h"
#include "unit.h"

static struct ptp_clock_time t(int64_t ns)
{
	struct ptp_clock_time x = { .sec = ns / 1000000000,
				    .nsec = (uint32_t)(ns % 1000000000) };
	return x;
}

START_TEST(pick_extended)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	x.n_samples = 3;
	/* Windows of 900, 101 and 500 ns: the second wins. */
	x.ts[0][0] = t(1000000000000); x.ts[0][1] = t(1000000037000); x.ts[0][2] = t(1000000000900);
	x.ts[1][0] = t(2000000000000); x.ts[1][1] = t(2000037000050); x.ts[1][2] = t(2000000000101);
	x.ts[2][0] = t(3000000000000); x.ts[2][1] = t(3000037000000); x.ts[2][2] = t(3000000000500);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.method, PHC_METHOD_EXTENDED);
	ck_assert(o.window_ns == 101);
	ck_assert(o.sys_ns == 2000000000050);	/* before + window / 2 */
	ck_assert(o.phc_ns == 2000037000050);
	ck_assert(o.offset_ns == 37000000);	/* 37 ms */

	/* A PHC behind the system clock: negative offset. */
	x.n_samples = 1;
	x.ts[0][0] = t(5000000000000); x.ts[0][1] = t(4999999999000); x.ts[0][2] = t(5000000000010);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert(o.offset_ns == -1005);

	x.n_samples = 0;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EINVAL);
	x.n_samples = PTP_MAX_SAMPLES + 1;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EINVAL);
}
END_TEST

START_TEST(pick_basic)
{
	struct ptp_sys_offset x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	x.n_samples = 2;
	/* sys, phc, sys, phc, sys: brackets 200 and 40 ns. */
	x.ts[0] = t(1000000000000);
	x.ts[1] = t(1000000000600);
	x.ts[2] = t(1000000000200);
	x.ts[3] = t(1000000000725);
	x.ts[4] = t(1000000000240);
	ck_assert_int_eq(phc_pick_basic(&x, &o), 0);
	ck_assert_int_eq(o.method, PHC_METHOD_BASIC);
	ck_assert(o.window_ns == 40);
	ck_assert(o.sys_ns == 1000000000220);
	ck_assert(o.offset_ns == 505);
	x.n_samples = 0;
	ck_assert_int_eq(phc_pick_basic(&x, &o), -EINVAL);
}
END_TEST

START_TEST(open_and_names)
{
	struct phc *p;

	ck_assert_int_eq(phc_open(&p, 999), -ENOENT);
	ck_assert_str_eq(phc_method_name(PHC_METHOD_PRECISE), "precise");
	ck_assert_str_eq(phc_method_name(PHC_METHOD_BASIC), "basic");
}
END_TEST

START_TEST(live)
{
	struct phc_offset o;
	struct phc *p;
	int64_t ns;

	if (access("/dev/ptp0", R_OK)) {
		printf("phc: no /dev/ptp0, live PHC test skipped\n");
		return;
	}
	ck_assert_int_eq(phc_open(&p, 0), 0);
	ck_assert_int_eq(phc_gettime(p, &ns), 0);
	ck_assert(ns > 0);
	ck_assert_int_eq(phc_sys_offset(p, 5, &o), 0);
	ck_assert(o.window_ns >= 0);
	ck_assert_int_eq(phc_sys_offset(p, 26, &o), -EINVAL);
	phc_close(p);
}
END_TEST

static Suite *phc_suite(void)
{
	Suite *s = suite_create("phc");
	TCase *tc = tcase_create("phc");

	tcase_add_test(tc, pick_extended);
	tcase_add_test(tc, pick_basic);
	tcase_add_test(tc, open_and_names);
	tcase_add_test(tc, live);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(phc_suite)
