/* test_hwsim.c — tapless-hwsim's clocks and hosts: the clock model is
 * continuous through frequency changes and exact through steps, seeds stay
 * within 1 ms and 50 ppm, a host's state is shared through its file (two
 * opens see one clock), PHCs are found and made by interface, and stamps
 * carry the configured quantum and noise. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hwsim/hwsim_clock.h"
#include "hwsim/hwsim_host.h"
#include "unit.h"

#define S 1000000000LL

START_TEST(clock_model)
{
	struct hwsim_clock c;
	int64_t v;

	hwsim_clock_init(&c, 10 * S, 50000000, 50000);	/* +50 ms, 50 ppm */
	ck_assert_int_eq(hwsim_clock_at(&c, 10 * S), 10 * S + 50000000);
	/* 50 ppm over 2 s: 100 us. */
	ck_assert_int_eq(hwsim_clock_at(&c, 12 * S), 12 * S + 50000000 + 100000);
	/* A servo's correction: continuous at the change, then the new
	 * rate (50 ppm - 50 ppm = 0). */
	v = hwsim_clock_at(&c, 12 * S);
	hwsim_clock_set_freq(&c, 12 * S, -50000);
	ck_assert_int_eq(hwsim_clock_at(&c, 12 * S), v);
	ck_assert_int_eq(hwsim_clock_at(&c, 20 * S), v + 8 * S);
	/* A step of -50 ms at 20 s. */
	hwsim_clock_step(&c, 20 * S, -50000000);
	ck_assert_int_eq(hwsim_clock_at(&c, 20 * S), v + 8 * S - 50000000);
	/* clock_settime. */
	hwsim_clock_set(&c, 30 * S, 1000);
	ck_assert_int_eq(hwsim_clock_at(&c, 31 * S), 1000 + S);
	/* Negative rates run slow. */
	hwsim_clock_init(&c, 0, 0, -20000);
	ck_assert_int_eq(hwsim_clock_at(&c, 5 * S), 5 * S - 100000);
}
END_TEST

START_TEST(seeds)
{
	char name[32];
	int64_t off, off2;
	double ppb, ppb2;
	bool spread = false;

	for (int i = 0; i < 500; i++) {
		snprintf(name, sizeof(name), "eth%d", i);
		hwsim_seed("host", name, &off, &ppb);
		ck_assert_int_le(llabs(off), 1000000);
		ck_assert(fabs(ppb) <= 50000);
		if (i && (off != off2 || ppb != ppb2))
			spread = true;
		hwsim_seed("host", name, &off2, &ppb2);
		ck_assert_int_eq(off, off2);		/* the same every run */
		ck_assert(ppb == ppb2);
	}
	ck_assert(spread);
	hwsim_seed("a", "eth0", &off, &ppb);
	hwsim_seed("b", "eth0", &off2, &ppb2);
	ck_assert(off != off2 || ppb != ppb2);
}
END_TEST

static char dir[64];

static void mkdir_tmp(void)
{
	snprintf(dir, sizeof(dir), "/tmp/test_hwsim.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void rm_tmp(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

START_TEST(host_shared)
{
	struct hwsim_params p = {
		.phc_offset_ns = 50000000, .phc_ppm = 50,
		.sys_offset_ns = HWSIM_NONE, .sys_ppm = NAN,
	};
	struct hwsim_host *a, *b;
	struct hwsim_phc_info info;
	char err[256], name[16];
	int64_t t;

	mkdir_tmp();
	/* Not there, not to be made. */
	ck_assert_int_eq(hwsim_host_open(&a, dir, "gm", false, NULL, err,
					 sizeof(err)), -ENOENT);
	ck_assert(strstr(err, "no such simulated host"));
	ck_assert_int_eq(hwsim_host_open(&a, dir, "a/b", true, NULL, err,
					 sizeof(err)), -EINVAL);
	ck_assert_int_eq(hwsim_host_open(&a, dir, "gm", true, &p, err,
					 sizeof(err)), 0);
	/* A second program of the host: the params of the first stay. */
	ck_assert_int_eq(hwsim_host_open(&b, dir, "gm", true, NULL, err,
					 sizeof(err)), 0);
	ck_assert_int_eq(hwsim_phc_find(a, "eth0", false), -ENOENT);
	ck_assert_int_eq(hwsim_phc_find(a, "eth0", true), 0);
	ck_assert_int_eq(hwsim_phc_find(b, "eth0", false), 0);
	ck_assert_int_eq(hwsim_phc_find(b, "eth1", true), 1);
	ck_assert_uint_eq(hwsim_phc_count(a), 2);
	ck_assert_int_eq(hwsim_phc_get(a, 1, &info), 0);
	ck_assert_str_eq(info.ifname, "eth1");
	ck_assert(info.clk.native_ppb == 50000);
	t = hwsim_true_now();
	ck_assert_int_le(llabs(hwsim_read(b, 0, t) - t - 50000000), 1000000);
	/* What one program does to a clock, the other sees. */
	hwsim_step(a, 0, 1000);
	hwsim_set_freq(a, 0, -50000);
	ck_assert(hwsim_get_freq(b, 0) == -50000);
	t = hwsim_true_now();
	ck_assert_int_eq(hwsim_read(a, 0, t), hwsim_read(b, 0, t));
	/* The system clock is its own. */
	hwsim_set_freq(b, -1, 1234);
	ck_assert(hwsim_get_freq(a, -1) == 1234);
	ck_assert(hwsim_get_freq(a, 0) == -50000);
	/* Eight PHCs at most. */
	for (int i = 2; i < HWSIM_MAX_PHC; i++) {
		snprintf(name, sizeof(name), "eth%d", i);
		ck_assert_int_eq(hwsim_phc_find(a, name, true), i);
	}
	ck_assert_int_eq(hwsim_phc_find(a, "eth99", true), -ENOSPC);
	hwsim_host_close(a);
	hwsim_host_close(b);
	/* Another file under the name: refused. */
	{
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/bad.hwsim", dir);
		f = fopen(path, "w");
		fputs("not a host\n", f);
		fclose(f);
		ck_assert_int_eq(hwsim_host_open(&a, dir, "bad", true, NULL, err,
						 sizeof(err)), -EINVAL);
		ck_assert(strstr(err, "not a host file of this tapless-hwsim"));
	}
	rm_tmp();
}
END_TEST

START_TEST(stamps)
{
	struct hwsim_params p = {
		.phc_offset_ns = 0, .phc_ppm = 0, .sys_offset_ns = HWSIM_NONE,
		.sys_ppm = NAN, .quantum_ns = 8, .noise_ns = 20,
	};
	struct hwsim_host *h;
	char err[256];
	double sum = 0, ss = 0;
	int n = 4000;

	mkdir_tmp();
	ck_assert_int_eq(hwsim_host_open(&h, dir, "nic", true, &p, err,
					 sizeof(err)), 0);
	ck_assert_int_eq(hwsim_phc_find(h, "eth0", true), 0);
	for (int i = 0; i < n; i++) {
		int64_t t = 1000 * S + i * 997, v = hwsim_stamp(h, 0, t);
		double e;

		ck_assert_int_eq(((v % 8) + 8) % 8, 0);	/* the quantum */
		e = (double)(v - hwsim_read(h, 0, t));
		sum += e;
		ss += e * e;
	}
	/* Noise of sd 20 ns, cut down to 8 ns steps: mean about -3.5 ns
	 * (the cut), sd about 20. */
	ck_assert(fabs(sum / n + 3.5) < 2);
	ck_assert(fabs(sqrt(ss / n - (sum / n) * (sum / n)) - 20) < 2);
	hwsim_host_close(h);
	rm_tmp();
}
END_TEST

static Suite *hwsim_suite(void)
{
	Suite *s = suite_create("hwsim");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, clock_model);
	tcase_add_test(tc, seeds);
	tcase_add_test(tc, host_shared);
	tcase_add_test(tc, stamps);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(hwsim_suite)
