/* test_hwsim_truth.c — reading tapless-hwsim's truth journal: a journal
 * the simulated host itself wrote (through steps and frequency changes)
 * gives back, at any true time, the value the host read then; the true
 * time at which a clock read a value is found, including after a step
 * back (a value read twice); and bad journals are refused with their line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwsim/hwsim_host.h"
#include "hwsim/hwsim_truth.h"
#include "unit.h"

#define S 1000000000LL

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "hwsim-truth");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

START_TEST(against_the_writer)
{
	struct hwsim_params p = {
		.phc_offset_ns = 700000, .phc_ppm = 30,
		.sys_offset_ns = -300000, .sys_ppm = -20,
	};
	struct hwsim_host *h;
	struct hwsim_truth *t;
	char err[HWSIM_TRUTH_ERRBUF], path[128];
	int64_t when[6], phc[6], sys[6], v, tt;

	ck_assert_int_eq(hwsim_host_open(&h, dir, "a", true, &p, err), 0);
	ck_assert_int_eq(hwsim_phc_find(h, "eth0", true), 0);
	/* Changes as a servo makes them, each read back as it stands. */
	for (int k = 0; k < 6; k++) {
		when[k] = hwsim_true_now();
		phc[k] = hwsim_read(h, 0, when[k]);
		sys[k] = hwsim_read(h, -1, when[k]);
		if (k == 1)
			hwsim_set_freq(h, 0, -30000);
		if (k == 2)
			hwsim_step(h, 0, -5000000);	/* back 5 ms */
		if (k == 3)
			hwsim_set_freq(h, -1, 20000);
		if (k == 4)
			hwsim_set_freq(h, 0, 12345.5);
	}
	hwsim_host_close(h);

	snprintf(path, sizeof(path), "%s/a.truth", dir);
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), 0);
	ck_assert_str_eq(hwsim_truth_host(t), "a");
	for (int k = 0; k < 6; k++) {
		/* A change at when[k] is read after it: the value read
		 * before the change, at the same instant, is the old piece's
		 * (identical at the instant: changes are continuous, or a
		 * step made after the read). */
		if (k == 2)
			continue;	/* read before the step, same ns */
		ck_assert_int_eq(hwsim_truth_at(t, "phc0", when[k], &v), 0);
		ck_assert(llabs(v - phc[k]) <= 1);
		ck_assert_int_eq(hwsim_truth_at(t, "sys", when[k], &v), 0);
		ck_assert(llabs(v - sys[k]) <= 1);
	}
	/* When did the system clock read sys[4]? At when[4]. */
	ck_assert_int_eq(hwsim_truth_when(t, "sys", sys[4], when[0], &tt), 0);
	ck_assert(llabs(tt - when[4]) <= 2);
	/* The PHC went back 5 ms at when[2]: a value it read just before is
	 * read again 5 ms later (slowed to 0 ppm, then its rate of 0 ppb:
	 * native 30 ppm, adjusted -30 ppm). */
	ck_assert_int_eq(hwsim_truth_at(t, "phc0", when[2] - 1000, &v), 0);
	ck_assert_int_eq(hwsim_truth_when(t, "phc0", v, when[0], &tt), 0);
	ck_assert(llabs(tt - (when[2] - 1000)) <= 2);
	ck_assert_int_eq(hwsim_truth_when(t, "phc0", v, when[2], &tt), 0);
	ck_assert(tt > when[2]);
	/* Not known. */
	ck_assert_int_eq(hwsim_truth_at(t, "phc5", when[0], &v), -ENOENT);
	ck_assert_int_eq(hwsim_truth_at(t, "sys", 0, &v), -ERANGE);
	ck_assert_int_eq(hwsim_truth_when(t, "sys", 5, when[0], &tt), -ERANGE);
	hwsim_truth_free(t);
}
END_TEST

START_TEST(bad_journals)
{
	struct hwsim_truth *t;
	char err[HWSIM_TRUTH_ERRBUF], path[128];

	snprintf(path, sizeof(path), "%s/bad.truth", dir);
	unit_write_file(path, "# a journal of something else\n");
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad.truth:1: not a tapless-hwsim truth"));
	ck_assert_ptr_null(t);

	unit_write_file(path, "# tapless-hwsim truth 1 host b\n"
			"100 sys 200 0.000 0.000\n100 sys oops 0 0\n");
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad.truth:3: not"));

	unit_write_file(path, "# tapless-hwsim truth 1 host b\n"
			"100 sys 200 0.000 0.000\n50 sys 300 0.000 0.000\n");
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, "bad.truth:3: sys goes back"));

	/* A torn last line is what a crash leaves: left out. */
	unit_write_file(path, "# tapless-hwsim truth 1 host b\n"
			"100 sys 200 1000.000 0.000\n200 sys 3");
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), 0);
	{
		int64_t v;

		/* 1 s at 1000 ppb: 1 us more. */
		ck_assert_int_eq(hwsim_truth_at(t, "sys", 100 + S, &v), 0);
		ck_assert_int_eq(v, 200 + S + 1000);
	}
	hwsim_truth_free(t);

	snprintf(path, sizeof(path), "%s/none.truth", dir);
	ck_assert_int_eq(hwsim_truth_load(&t, path, err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "none.truth: "));
}
END_TEST

static Suite *hwsim_truth_suite(void)
{
	Suite *s = suite_create("hwsim_truth");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, against_the_writer);
	tcase_add_test(tc, bad_journals);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hwsim_truth_suite)
