/* test_phc.c — PHC reading: sample selection of the sys-phc-sys methods
 * from constructed readings, opening, and names. The live comparison runs
 * only where a PHC exists (not on veth or loopback machines). */
#include <errno.h>
#include <linux/ptp_clock.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "stamp/phc.h"
#include "unit.h"

#define NS 1000000000LL

static struct ptp_clock_time t(int64_t ns)
{
	struct ptp_clock_time x = { .sec = ns / NS, .nsec = (uint32_t)(ns % NS) };

	return x;
}

static void ext(struct ptp_sys_offset_extended *x, unsigned i, int64_t before,
		int64_t phc, int64_t after)
{
	x->ts[i][0] = t(before);
	x->ts[i][1] = t(phc);
	x->ts[i][2] = t(after);
}

/* A result no pick function produces, to see *out left alone. */
static const struct phc_offset untouched = { -1, -1, -1, -1, PHC_METHOD_PRECISE };

static void assert_untouched(const struct phc_offset *o)
{
	ck_assert_int_eq(o->phc_ns, -1);
	ck_assert_int_eq(o->sys_ns, -1);
	ck_assert_int_eq(o->offset_ns, -1);
	ck_assert_int_eq(o->window_ns, -1);
	ck_assert_int_eq(o->method, PHC_METHOD_PRECISE);
}

START_TEST(extended_narrowest_wins)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	x.n_samples = 3;
	/* Windows of 900, 101 and 500 ns: the second wins, and its odd
	 * window puts the midpoint 50 ns (not 50.5) after the start. */
	ext(&x, 0, 1000000000000, 1000037000000, 1000000000900);
	ext(&x, 1, 2000000000000, 2000037000050, 2000000000101);
	ext(&x, 2, 3000000000000, 3000037000000, 3000000000500);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.method, PHC_METHOD_EXTENDED);
	ck_assert_int_eq(o.window_ns, 101);
	ck_assert_int_eq(o.sys_ns, 2000000000050);
	ck_assert_int_eq(o.phc_ns, 2000037000050);
	ck_assert_int_eq(o.offset_ns, 37000000);
}
END_TEST

START_TEST(extended_first_of_equals)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	x.n_samples = 3;
	ext(&x, 0, 1000, 5000, 1300);
	ext(&x, 1, 2000, 6000, 2200);
	ext(&x, 2, 3000, 9000, 3200);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.window_ns, 200);
	ck_assert_int_eq(o.sys_ns, 2100);
	ck_assert_int_eq(o.offset_ns, 3900);
}
END_TEST

START_TEST(extended_exact_at_todays_epoch)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;
	int64_t utc = 1700000000LL * NS + 123456789;

	/* A PHC on TAI, 37 s ahead of UTC: every nanosecond must survive, which
	 * a double (53-bit mantissa) would not at 1.7e18 ns. */
	memset(&x, 0, sizeof(x));
	x.n_samples = 1;
	ext(&x, 0, utc, utc + 37 * NS + 20, utc + 41);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.sys_ns, utc + 20);
	ck_assert_int_eq(o.phc_ns, utc + 37 * NS + 20);
	ck_assert_int_eq(o.offset_ns, 37 * NS);
	ck_assert_int_eq(o.window_ns, 41);
}
END_TEST

START_TEST(extended_negative_offset)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	/* A PHC behind the system clock. */
	memset(&x, 0, sizeof(x));
	x.n_samples = 1;
	ext(&x, 0, 5000000000000, 4999999999000, 5000000000010);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.sys_ns, 5000000000005);
	ck_assert_int_eq(o.offset_ns, -1005);
}
END_TEST

START_TEST(extended_step_skipped)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	/* CLOCK_REALTIME stepped back 1 s inside the second sample: its
	 * "window" of -1 s must not win over the honest 300 ns one. */
	memset(&x, 0, sizeof(x));
	x.n_samples = 2;
	ext(&x, 0, 10 * NS, 10 * NS + 500, 10 * NS + 300);
	ext(&x, 1, 11 * NS, 11 * NS + 500, 10 * NS + 100);
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.window_ns, 300);
	ck_assert_int_eq(o.offset_ns, 350);

	/* Only stepped samples: nothing to report, try again. */
	x.n_samples = 1;
	x.ts[0][2] = t(10 * NS - 1);
	o = untouched;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EAGAIN);
	assert_untouched(&o);
}
END_TEST

START_TEST(extended_sample_counts)
{
	struct ptp_sys_offset_extended x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	for (unsigned i = 0; i < PTP_MAX_SAMPLES; i++)
		ext(&x, i, (i + 1) * NS, (i + 1) * NS + 7000, (i + 1) * NS + 1000 - i);
	/* All 25: the last, narrowest, is read. */
	x.n_samples = PTP_MAX_SAMPLES;
	ck_assert_int_eq(phc_pick_extended(&x, &o), 0);
	ck_assert_int_eq(o.window_ns, 1000 - (PTP_MAX_SAMPLES - 1));
	ck_assert_int_eq(o.sys_ns, PTP_MAX_SAMPLES * NS + (1000 - (PTP_MAX_SAMPLES - 1)) / 2);

	o = untouched;
	x.n_samples = 0;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EINVAL);
	x.n_samples = PTP_MAX_SAMPLES + 1;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EINVAL);
	x.n_samples = 0xffffffffu;
	ck_assert_int_eq(phc_pick_extended(&x, &o), -EINVAL);
	assert_untouched(&o);
}
END_TEST

START_TEST(basic_interleaved)
{
	struct ptp_sys_offset x;
	struct phc_offset o;

	memset(&x, 0, sizeof(x));
	x.n_samples = 2;
	/* sys, phc, sys, phc, sys: the middle sys reading closes the first
	 * bracket (200 ns) and opens the second (40 ns). */
	x.ts[0] = t(1000000000000);
	x.ts[1] = t(1000000000600);
	x.ts[2] = t(1000000000200);
	x.ts[3] = t(1000000000725);
	x.ts[4] = t(1000000000240);
	ck_assert_int_eq(phc_pick_basic(&x, &o), 0);
	ck_assert_int_eq(o.method, PHC_METHOD_BASIC);
	ck_assert_int_eq(o.window_ns, 40);
	ck_assert_int_eq(o.sys_ns, 1000000000220);
	ck_assert_int_eq(o.phc_ns, 1000000000725);
	ck_assert_int_eq(o.offset_ns, 505);

	/* PHC behind: negative offset. */
	x.ts[3] = t(999999999000);
	ck_assert_int_eq(phc_pick_basic(&x, &o), 0);
	ck_assert_int_eq(o.offset_ns, -1220);
}
END_TEST

START_TEST(basic_sample_counts)
{
	struct ptp_sys_offset x;
	struct phc_offset o;
	int64_t sys = 50 * NS;

	/* 25 samples, 2n + 1 = 51 readings; brackets shrink to the last,
	 * which ends on ts[50]. */
	memset(&x, 0, sizeof(x));
	for (unsigned i = 0; i < PTP_MAX_SAMPLES; i++) {
		x.ts[2 * i] = t(sys);
		x.ts[2 * i + 1] = t(sys + 3000);
		sys += 100 - i;
	}
	x.ts[2 * PTP_MAX_SAMPLES] = t(sys);
	x.n_samples = PTP_MAX_SAMPLES;
	ck_assert_int_eq(phc_pick_basic(&x, &o), 0);
	ck_assert_int_eq(o.window_ns, 100 - (PTP_MAX_SAMPLES - 1));
	ck_assert_int_eq(o.sys_ns, sys - o.window_ns + o.window_ns / 2);
	ck_assert_int_eq(o.offset_ns, 3000 - o.window_ns / 2);

	o = untouched;
	x.n_samples = 0;
	ck_assert_int_eq(phc_pick_basic(&x, &o), -EINVAL);
	x.n_samples = PTP_MAX_SAMPLES + 1;
	ck_assert_int_eq(phc_pick_basic(&x, &o), -EINVAL);
	assert_untouched(&o);

	/* Every bracket stepped backwards. */
	x.n_samples = 1;
	x.ts[2] = t(50 * NS - 1);
	ck_assert_int_eq(phc_pick_basic(&x, &o), -EAGAIN);
	assert_untouched(&o);
}
END_TEST

START_TEST(open_errors)
{
	struct phc *p = (struct phc *)&p;

	/* /dev/ptp99 does not exist (no PHC on this machine, and none with
	 * 100 of them); the pointer is left alone on failure. */
	ck_assert_int_eq(phc_open(&p, 99), -ENOENT);
	ck_assert_int_eq(phc_open(&p, -1), -EINVAL);
	ck_assert_ptr_eq(p, (struct phc *)&p);
	phc_close(NULL);
}
END_TEST

START_TEST(method_names)
{
	ck_assert_str_eq(phc_method_name(PHC_METHOD_PRECISE), "precise");
	ck_assert_str_eq(phc_method_name(PHC_METHOD_EXTENDED), "extended");
	ck_assert_str_eq(phc_method_name(PHC_METHOD_BASIC), "basic");
	ck_assert_str_eq(phc_method_name((enum phc_method)42), "?");
}
END_TEST

static int64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * NS + ts.tv_nsec;
}

START_TEST(live)
{
	struct phc_offset o, o2;
	int64_t ns, ns2, now;
	struct phc *p;
	int err;

	if (access("/dev/ptp0", F_OK)) {
		printf("phc: no /dev/ptp0, live PHC test skipped\n");
		return;
	}
	err = phc_open(&p, 0);
	if (err == -EACCES) {
		printf("phc: /dev/ptp0 not readable, live PHC test skipped\n");
		return;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_int_eq(phc_index(p), 0);

	/* The dynamic clock id reads the device, and it moves forward. */
	ck_assert_int_eq(phc_gettime(p, &ns), 0);
	ck_assert_int_eq(phc_gettime(p, &ns2), 0);
	ck_assert(ns > 0 && ns2 >= ns);

	ck_assert_int_eq(phc_sys_offset(p, 5, &o), 0);
	now = realtime_ns();
	printf("phc: /dev/ptp0 offset %lld ns, window %lld ns, method %s\n",
	       (long long)o.offset_ns, (long long)o.window_ns,
	       phc_method_name(o.method));
	ck_assert(o.window_ns >= 0 && o.window_ns < NS);
	ck_assert(o.offset_ns == o.phc_ns - o.sys_ns);
	ck_assert(o.sys_ns <= now && now - o.sys_ns < NS);
	/* The PHC reading is the clock phc_gettime reads. */
	ck_assert(o.phc_ns >= ns2 && o.phc_ns - ns2 < NS);

	/* The method is remembered: the second reading uses the same. */
	ck_assert_int_eq(phc_sys_offset(p, PTP_MAX_SAMPLES, &o2), 0);
	ck_assert_int_eq(o2.method, o.method);

	ck_assert_int_eq(phc_sys_offset(p, 0, &o2), -EINVAL);
	ck_assert_int_eq(phc_sys_offset(p, PTP_MAX_SAMPLES + 1, &o2), -EINVAL);
	phc_close(p);
}
END_TEST

static Suite *phc_suite(void)
{
	Suite *s = suite_create("phc");
	TCase *pick = tcase_create("pick");
	TCase *dev = tcase_create("device");

	tcase_add_test(pick, extended_narrowest_wins);
	tcase_add_test(pick, extended_first_of_equals);
	tcase_add_test(pick, extended_exact_at_todays_epoch);
	tcase_add_test(pick, extended_negative_offset);
	tcase_add_test(pick, extended_step_skipped);
	tcase_add_test(pick, extended_sample_counts);
	tcase_add_test(pick, basic_interleaved);
	tcase_add_test(pick, basic_sample_counts);
	suite_add_tcase(s, pick);

	tcase_add_test(dev, open_errors);
	tcase_add_test(dev, method_names);
	tcase_add_test(dev, live);
	suite_add_tcase(s, dev);
	return s;
}

UNIT_MAIN(phc_suite)
