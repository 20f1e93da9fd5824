/* test_phccheck.c — the PHC check: resolution from constructed readings,
 * offset figures from constructed offset readings, the verdicts on
 * constructed results, the device list (here and in a directory made for
 * it), the read loop on the system clocks, the errors of phccheck_run, and
 * the printed figures. The live run needs a PHC and is skipped, saying so,
 * where there is none (veth and loopback machines). */
#include <errno.h>
#include <glob.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "validate/phccheck.h"
#include "base/print.h"
#include "unit.h"
#include "validate/verdict.h"

#define NS 1000000000LL
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* ---- phccheck_gcd_step ---- */

START_TEST(gcd_steps_of_8)
{
	/* A clock counting in 8 ns, read at uneven intervals. */
	static const int64_t v[] = { 1000, 1008, 1024, 1032, 1056, 1064, 1144 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 8);
}
END_TEST

START_TEST(gcd_mixed_8_12)
{
	static const int64_t v[] = { 0, 8, 20, 28, 40 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 4);
}
END_TEST

START_TEST(gcd_equal_values)
{
	static const int64_t v[] = { 77, 77, 77, 77 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 0);
}
END_TEST

START_TEST(gcd_zeros_ignored)
{
	/* Repeated readings between steps of 6 and 9. */
	static const int64_t v[] = { 0, 0, 6, 6, 6, 15, 15 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 3);
}
END_TEST

START_TEST(gcd_negative_differences)
{
	static const int64_t v[] = { 100, 90, 70, 80, 30 };
	static const int64_t w[] = { -5, -35, -20 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 10);
	ck_assert_int_eq(phccheck_gcd_step(w, N(w)), 15);
}
END_TEST

START_TEST(gcd_single_and_none)
{
	static const int64_t v[] = { 123456789 };

	ck_assert_int_eq(phccheck_gcd_step(v, 1), 0);
	ck_assert_int_eq(phccheck_gcd_step(v, 0), 0);
	ck_assert_int_eq(phccheck_gcd_step(NULL, 0), 0);
}
END_TEST

START_TEST(gcd_extremes)
{
	/* Differences computed without signed overflow at either end. */
	static const int64_t hi[] = { INT64_MAX, INT64_MAX - 8, INT64_MAX - 24 };
	static const int64_t lo[] = { INT64_MIN, INT64_MIN + 12, INT64_MIN + 4 };
	static const int64_t span[] = { INT64_MIN, INT64_MAX };
	static const int64_t half[] = { INT64_MIN, 0 };

	ck_assert_int_eq(phccheck_gcd_step(hi, N(hi)), 8);
	ck_assert_int_eq(phccheck_gcd_step(lo, N(lo)), 4);
	ck_assert_int_eq(phccheck_gcd_step(span, N(span)), INT64_MAX);
	ck_assert_int_eq(phccheck_gcd_step(half, N(half)), INT64_MAX);
}
END_TEST

START_TEST(gcd_one)
{
	/* Nanosecond steps: 1, however long the run. */
	static const int64_t v[] = { 10, 18, 27, 35, 44 };

	ck_assert_int_eq(phccheck_gcd_step(v, N(v)), 1);
}
END_TEST

/* ---- phccheck_offsets ---- */

/* n readings 20 ms apart from a 2023 epoch, the PHC on TAI drifting by
 * ppb, with noise[i % nn] added to each offset. */
static void offsets_make(struct phc_offset *o, size_t n, double ppb,
			 const int64_t *noise, size_t nn, enum phc_method m)
{
	int64_t t0 = 1700000000LL * NS + 123456789;

	for (size_t i = 0; i < n; i++) {
		int64_t dt = (int64_t)i * 20000000;

		o[i].sys_ns = t0 + dt;
		o[i].offset_ns = 37 * NS + llround(ppb * (double)dt / 1e9) +
				 (nn ? noise[i % nn] : 0);
		o[i].phc_ns = o[i].sys_ns + o[i].offset_ns;
		o[i].window_ns = m == PHC_METHOD_PRECISE ? 0 : 400 + (int64_t)(i % 7) * 10;
		o[i].method = m;
	}
}

START_TEST(offsets_linear)
{
	struct phc_offset o[100];
	struct phccheck_result r;

	/* 50 ppb over 2 s is 99 ns in all: exactly a line but for rounding
	 * to whole ns. */
	memset(&r, 0, sizeof(r));
	offsets_make(o, N(o), 50, NULL, 0, PHC_METHOD_EXTENDED);
	phccheck_offsets(o, N(o), &r);
	ck_assert_uint_eq(r.offsets, 100);
	ck_assert_int_eq(r.method, PHC_METHOD_EXTENDED);
	ck_assert_double_eq(r.offset_ns, 37.0 * NS);
	ck_assert_double_eq_tol(r.offset_drift_ppb, 50, 0.5);
	ck_assert(r.offset_sd_ns < 0.5);
	ck_assert_uint_eq(r.window_ns.n, 100);
	ck_assert_int_eq(r.window_ns.min, 400);
	ck_assert_int_eq(r.window_ns.max, 460);
}
END_TEST

START_TEST(offsets_noise)
{
	static const int64_t noise[] = { 300, -300, 0, 150, -150 };
	struct phc_offset o[200];
	struct phccheck_result r;

	/* Noise of SD sqrt((2*300^2 + 2*150^2) / 5) = 212 ns about a line
	 * falling 2000 ppb (8 us over the 4 s). */
	memset(&r, 0, sizeof(r));
	offsets_make(o, N(o), -2000, noise, N(noise), PHC_METHOD_BASIC);
	phccheck_offsets(o, N(o), &r);
	ck_assert_int_eq(r.method, PHC_METHOD_BASIC);
	ck_assert_double_eq_tol(r.offset_drift_ppb, -2000, 5);
	ck_assert_double_eq_tol(r.offset_sd_ns, 212.1, 5);
	ck_assert_double_eq(r.offset_ns, 37.0 * NS + 300);
}
END_TEST

START_TEST(offsets_few)
{
	struct phc_offset o[2];
	struct phccheck_result r;

	offsets_make(o, N(o), 0, NULL, 0, PHC_METHOD_PRECISE);
	memset(&r, 0, sizeof(r));
	phccheck_offsets(o, 2, &r);
	ck_assert_int_eq(r.method, PHC_METHOD_PRECISE);
	ck_assert_double_eq_tol(r.offset_drift_ppb, 0, 1e-9);
	ck_assert(isnan(r.offset_sd_ns));
	ck_assert_int_eq(r.window_ns.max, 0);

	phccheck_offsets(o, 1, &r);
	ck_assert_uint_eq(r.offsets, 1);
	ck_assert(isnan(r.offset_drift_ppb));
	ck_assert_double_eq(r.offset_ns, 37.0 * NS);

	phccheck_offsets(o, 0, &r);
	ck_assert_uint_eq(r.offsets, 0);
	ck_assert_uint_eq(r.window_ns.n, 0);
	ck_assert(isnan(r.offset_ns));
}
END_TEST

/* ---- phccheck_judge ---- */

/* A result every default limit passes. */
static void good(struct phccheck_result *r)
{
	memset(r, 0, sizeof(*r));
	r->index = 0;
	r->method = PHC_METHOD_EXTENDED;
	r->window_ns.n = 100;
	r->window_ns.min = 500;
	r->offsets = 100;
	r->offset_ns = 37.0 * NS + 12;
	r->offset_drift_ppb = 3;
	r->offset_sd_ns = 100;
	r->freq_ppb = -1500;
	r->reads = 10000;
	r->resolution_ns = 1;
}

static struct verdict_limits lim;

static void judge(const struct phccheck_result *r, struct verdict_check *c)
{
	verdict_limits_init(&lim);
	verdict_check_init(c, "phc", "ptp0");
	phccheck_judge(r, &lim, c);
}

/* The item of a limit; fails the test when there is none. */
static const struct verdict_item *item(const struct verdict_check *c,
				       const char *limit)
{
	for (unsigned i = 0; i < c->n; i++)
		if (c->item[i].limit && !strcmp(c->item[i].limit, limit))
			return &c->item[i];
	ck_abort_msg("no item for %s", limit);
	return NULL;
}

/* The note (item without a limit) whose text has s; NULL if none. */
static const struct verdict_item *note(const struct verdict_check *c,
				       const char *s)
{
	for (unsigned i = 0; i < c->n; i++)
		if (!c->item[i].limit && strstr(c->item[i].text, s))
			return &c->item[i];
	return NULL;
}

START_TEST(judge_all_pass)
{
	struct phccheck_result r;
	struct verdict_check c;

	good(&r);
	judge(&r, &c);
	ck_assert_int_eq(c.v, VERDICT_PASS);
	ck_assert_uint_eq(c.n, 6);
	ck_assert_int_eq(item(&c, "phc.read_window_ns")->v, VERDICT_PASS);
	ck_assert_double_eq(item(&c, "phc.read_window_ns")->value, 500);
	ck_assert_int_eq(item(&c, "phc.offset_sd_ns")->v, VERDICT_PASS);
	ck_assert_int_eq(item(&c, "phc.freq_ppb")->v, VERDICT_PASS);
	ck_assert_double_eq(item(&c, "phc.freq_ppb")->value, 1500);
	ck_assert_int_eq(item(&c, "phc.backwards")->v, VERDICT_PASS);
	ck_assert_int_eq(item(&c, "phc.resolution_ns")->v, VERDICT_PASS);
	ck_assert_ptr_null(note(&c, "cross-stamps"));
}
END_TEST

/* Each limit: a value between warn and fail warns, above fail fails. */
START_TEST(judge_levels)
{
	static const struct {
		const char *limit;
		double warn, fail;
	} cases[] = {
		{ "phc.read_window_ns", 6000, 60000 },
		{ "phc.offset_sd_ns", 2000, 20000 },
		{ "phc.freq_ppb", 200000, 2000000 },
		{ "phc.freq_ppb", -200000, -2000000 },	/* absolute */
		{ "phc.resolution_ns", 20, 200 },
	};
	struct phccheck_result r;
	struct verdict_check c;

	for (size_t k = 0; k < N(cases); k++)
		for (int lvl = 0; lvl < 2; lvl++) {
			double x = lvl ? cases[k].fail : cases[k].warn;
			enum verdict want = lvl ? VERDICT_FAIL : VERDICT_WARN;

			good(&r);
			if (!strcmp(cases[k].limit, "phc.read_window_ns"))
				r.window_ns.min = (int64_t)x;
			else if (!strcmp(cases[k].limit, "phc.offset_sd_ns"))
				r.offset_sd_ns = x;
			else if (!strcmp(cases[k].limit, "phc.freq_ppb"))
				r.freq_ppb = x;
			else
				r.resolution_ns = (int64_t)x;
			judge(&r, &c);
			ck_assert_msg(item(&c, cases[k].limit)->v == want,
				      "%s = %g: %s", cases[k].limit, x,
				      verdict_name(item(&c, cases[k].limit)->v));
			ck_assert_int_eq(c.v, want);
		}
}
END_TEST

START_TEST(judge_backwards)
{
	struct phccheck_result r;
	struct verdict_check c;

	good(&r);
	r.backwards = 1;
	r.max_backstep_ns = 8;
	judge(&r, &c);
	ck_assert_int_eq(item(&c, "phc.backwards")->v, VERDICT_FAIL);
	ck_assert_double_eq(item(&c, "phc.backwards")->value, 1);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
}
END_TEST

START_TEST(judge_precise)
{
	struct phccheck_result r;
	struct verdict_check c;
	const struct verdict_item *it;

	good(&r);
	r.method = PHC_METHOD_PRECISE;
	r.window_ns.min = 0;
	judge(&r, &c);
	ck_assert_int_eq(c.v, VERDICT_PASS);
	it = note(&c, "cross-stamps");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->v, VERDICT_PASS);
	ck_assert_ptr_nonnull(strstr(it->text, "window 0 ns"));
	for (unsigned i = 0; i < c.n; i++)
		ck_assert(!c.item[i].limit ||
			  strcmp(c.item[i].limit, "phc.read_window_ns"));
}
END_TEST

START_TEST(judge_not_measured)
{
	struct phccheck_result r;
	struct verdict_check c;

	/* No offsets: window and SD not measured, both fail. */
	good(&r);
	r.window_ns.n = 0;
	r.offset_sd_ns = NAN;
	judge(&r, &c);
	ck_assert_int_eq(item(&c, "phc.read_window_ns")->v, VERDICT_FAIL);
	ck_assert_int_eq(item(&c, "phc.offset_sd_ns")->v, VERDICT_FAIL);

	/* A clock that never moved. */
	good(&r);
	r.resolution_ns = 0;
	judge(&r, &c);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
	ck_assert_ptr_nonnull(note(&c, "did not move over 10000"));
	ck_assert_int_eq(note(&c, "did not move")->v, VERDICT_FAIL);
}
END_TEST

START_TEST(judge_freq_unreadable)
{
	struct phccheck_result r;
	struct verdict_check c;
	const struct verdict_item *it;

	/* A kernel refusing the query on a read-only descriptor: not judged,
	 * and the check still passes. */
	good(&r);
	r.freq_ppb = NAN;
	r.freq_err = -EACCES;
	judge(&r, &c);
	it = note(&c, "frequency adjustment not read");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->v, VERDICT_SKIP);
	ck_assert_ptr_nonnull(strstr(it->text, "read-only"));
	ck_assert_int_eq(c.v, VERDICT_PASS);

	/* Any other failure to read it fails. */
	r.freq_err = -EIO;
	judge(&r, &c);
	ck_assert_int_eq(item(&c, "phc.freq_ppb")->v, VERDICT_FAIL);
	ck_assert_int_eq(c.v, VERDICT_FAIL);
}
END_TEST

START_TEST(judge_offset_note)
{
	struct phccheck_result r;
	struct verdict_check c;
	const struct verdict_item *it;

	good(&r);
	judge(&r, &c);
	it = note(&c, "CLOCK_REALTIME");
	ck_assert_ptr_nonnull(it);
	ck_assert_int_eq(it->v, VERDICT_PASS);
	ck_assert_ptr_nonnull(strstr(it->text, "+37.000000012 s"));
	ck_assert_ptr_nonnull(strstr(it->text, "TAI, as under ptp4l"));
	ck_assert_ptr_nonnull(strstr(it->text, "+3.0 ppb"));

	r.offset_ns = -250;
	judge(&r, &c);
	ck_assert_ptr_nonnull(strstr(note(&c, "CLOCK_REALTIME")->text,
				     "keeps UTC"));

	/* A free-running PHC, counting from boot. */
	r.offset_ns = -1.7e18;
	judge(&r, &c);
	ck_assert_ptr_nonnull(strstr(note(&c, "CLOCK_REALTIME")->text,
				     "neither UTC"));
}
END_TEST

/* ---- phccheck_list ---- */

/* /dev/ptp<N> counted here without the library: glob, then the same
 * rule (decimal, no leading zero). */
static int count_dev_ptp(void)
{
	glob_t g;
	int n = 0;

	if (glob("/dev/ptp[0-9]*", 0, NULL, &g))
		return 0;
	for (size_t i = 0; i < g.gl_pathc; i++) {
		const char *d = g.gl_pathv[i] + strlen("/dev/ptp");

		if (strspn(d, "0123456789") == strlen(d) &&
		    (d[0] != '0' || !d[1]))
			n++;
	}
	globfree(&g);
	return n;
}

START_TEST(list_here)
{
	int idx[PHCCHECK_MAX], n, want = count_dev_ptp();

	n = phccheck_list(idx, PHCCHECK_MAX);
	printf("phccheck: %d PHC(s) in /dev\n", n);
	ck_assert_int_ge(n, 0);
	ck_assert_int_eq(n, want < PHCCHECK_MAX ? want : PHCCHECK_MAX);
	for (int i = 1; i < n; i++)
		ck_assert_int_lt(idx[i - 1], idx[i]);
	ck_assert_int_eq(phccheck_list(idx, -1), -EINVAL);
}
END_TEST

static char tmp[64];

static void tmp_setup(void)
{
	unit_tmpdir(tmp, "phccheck");
}

static void tmp_teardown(void)
{
	unit_rmdir(tmp);
}

static void touch(const char *name)
{
	char path[128];

	snprintf(path, sizeof(path), "%s/%s", tmp, name);
	unit_write_file(path, "");
}

START_TEST(list_dir_rules)
{
	static const char *const names[] = {
		"ptp10", "ptp2", "ptp0", "ptp_ocp", "ptpx", "ptp", "ptp3a",
		"xptp1", "ptp01", "ptp-1", "ptp1234567890", "pps0", "ptp7",
	};
	int idx[8] = { -1, -1, -1, -1, -1, -1, -1, -1 };

	ck_assert_int_eq(phccheck_list_dir(tmp, idx, 8), 0);
	ck_assert_int_eq(idx[0], -1);
	for (size_t i = 0; i < N(names); i++)
		touch(names[i]);
	ck_assert_int_eq(phccheck_list_dir(tmp, idx, 8), 4);
	ck_assert_int_eq(idx[0], 0);
	ck_assert_int_eq(idx[1], 2);
	ck_assert_int_eq(idx[2], 7);
	ck_assert_int_eq(idx[3], 10);
	ck_assert_int_eq(idx[4], -1);

	/* Room for two: the lowest two, whatever the directory order. */
	memset(idx, 0xff, sizeof(idx));
	ck_assert_int_eq(phccheck_list_dir(tmp, idx, 2), 2);
	ck_assert_int_eq(idx[0], 0);
	ck_assert_int_eq(idx[1], 2);
	ck_assert_int_eq(idx[2], -1);
	ck_assert_int_eq(phccheck_list_dir(tmp, idx, 0), 0);
}
END_TEST

START_TEST(list_dir_missing)
{
	int idx[4];

	ck_assert_int_eq(phccheck_list_dir("/nonexistent-tapless", idx, 4),
			 -ENOENT);
}
END_TEST

/* ---- phccheck_reads on the system clocks ---- */

START_TEST(reads_monotonic)
{
	struct phccheck_result r;
	struct timespec res;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(phccheck_reads(CLOCK_MONOTONIC, 10000, &r), 0);
	ck_assert_uint_eq(r.reads, 10000);
	ck_assert_uint_eq(r.backwards, 0);
	ck_assert_int_eq(r.max_backstep_ns, 0);
	ck_assert_uint_eq(r.read_cost_ns.n, 10000);
	ck_assert_int_ge(r.read_cost_ns.min, 0);
	ck_assert_int_le(r.read_cost_ns.min, r.read_cost_ns.p50);
	/* It moved, in steps that are multiples of what it claims. */
	ck_assert_int_eq(clock_getres(CLOCK_MONOTONIC, &res), 0);
	ck_assert_int_ge(r.resolution_ns, 1);
	ck_assert_int_eq(r.resolution_ns % (res.tv_sec * NS + res.tv_nsec), 0);
	printf("phccheck: CLOCK_MONOTONIC read cost p50 %lld ns, "
	       "resolution %lld ns\n", (long long)r.read_cost_ns.p50,
	       (long long)r.resolution_ns);
}
END_TEST

START_TEST(reads_realtime)
{
	struct phccheck_result r;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(phccheck_reads(CLOCK_REALTIME, 2, &r), 0);
	ck_assert_uint_eq(r.reads, 2);
	ck_assert_uint_eq(r.read_cost_ns.n, 2);
	/* Only read, so the other figures are as they were. */
	ck_assert_uint_eq(r.offsets, 0);
	ck_assert_int_eq(r.window_ns.n, 0);
}
END_TEST

START_TEST(reads_errors)
{
	struct phccheck_result r;

	memset(&r, 0, sizeof(r));
	ck_assert_int_eq(phccheck_reads(CLOCK_MONOTONIC, 1, &r), -EINVAL);
	ck_assert_int_eq(phccheck_reads(CLOCK_MONOTONIC, 0, &r), -EINVAL);
	/* No such clock; and the dynamic clock id of a closed descriptor. */
	ck_assert_int_eq(phccheck_reads((clockid_t)4242, 10, &r), -EINVAL);
	ck_assert_int_eq(phccheck_reads((clockid_t)((~987u << 3) | 3), 10, &r),
			 -EINVAL);
	ck_assert_uint_eq(r.reads, 0);
}
END_TEST

/* ---- phccheck_run ---- */

START_TEST(config_defaults)
{
	struct phccheck_config cfg;

	phccheck_config_init(&cfg, 3);
	ck_assert_int_eq(cfg.index, 3);
	ck_assert_double_eq(cfg.duration_s, 2);
	ck_assert_uint_eq(cfg.samples, 100);
	ck_assert_uint_eq(cfg.reads, 10000);
}
END_TEST

START_TEST(run_no_device)
{
	struct phccheck_config cfg;
	struct phccheck_result r;
	char err[PHCCHECK_ERRBUF] = "";

	/* No /dev/ptp9999 here (nor, surely, anywhere). */
	ck_assert_int_ne(access("/dev/ptp9999", F_OK), 0);
	phccheck_config_init(&cfg, 9999);
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -ENOENT);
	ck_assert_msg(strstr(err, "/dev/ptp9999"), "err: %s", err);
	ck_assert_msg(strstr(err, "open"), "err: %s", err);
}
END_TEST

START_TEST(run_bad_config)
{
	struct phccheck_config cfg;
	struct phccheck_result r;
	char err[PHCCHECK_ERRBUF];

	phccheck_config_init(&cfg, 0);
	cfg.reads = 1;
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -EINVAL);
	ck_assert_msg(strstr(err, "/dev/ptp0") && strstr(err, "reads"), "%s", err);

	phccheck_config_init(&cfg, 0);
	cfg.samples = 2;
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -EINVAL);
	ck_assert_msg(strstr(err, "samples"), "%s", err);

	phccheck_config_init(&cfg, 0);
	cfg.duration_s = 0;
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -EINVAL);
	cfg.duration_s = NAN;
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -EINVAL);
	ck_assert_msg(strstr(err, "duration"), "%s", err);

	phccheck_config_init(&cfg, -1);
	ck_assert_int_eq(phccheck_run(&cfg, &r, err), -EINVAL);
	ck_assert_msg(strstr(err, "-1"), "%s", err);
}
END_TEST

START_TEST(run_live)
{
	struct phccheck_config cfg;
	struct phccheck_result r;
	struct verdict_check c;
	char err[PHCCHECK_ERRBUF];
	int idx[PHCCHECK_MAX], n, rc;

	n = phccheck_list(idx, PHCCHECK_MAX);
	if (n <= 0) {
		printf("phccheck: no PHC, live run skipped\n");
		return;
	}
	phccheck_config_init(&cfg, idx[0]);
	cfg.duration_s = 0.2;
	cfg.samples = 10;
	rc = phccheck_run(&cfg, &r, err);
	if (rc == -EACCES) {
		printf("phccheck: %s, live run skipped\n", err);
		return;
	}
	ck_assert_msg(rc == 0, "%s", err);
	ck_assert_int_eq(r.index, idx[0]);
	ck_assert_uint_eq(r.reads, cfg.reads);
	ck_assert_uint_eq(r.offsets + r.offsets_skipped, cfg.samples);
	ck_assert_int_ge(r.resolution_ns, 1);
	ck_assert(!isnan(r.offset_sd_ns));
	ck_assert(r.freq_err || !isnan(r.freq_ppb));
	judge(&r, &c);
	ck_assert_int_ne(c.v, VERDICT_SKIP);
	printf("phccheck: ptp%d %s via %s, window min %lld ns, sd %.1f ns, "
	       "ifaces %s\n", r.index, r.clock_name, phc_method_name(r.method),
	       (long long)r.window_ns.min, r.offset_sd_ns, r.ifaces);
}
END_TEST

/* ---- phccheck_print ---- */

static char *print_json(const struct phccheck_result *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct printer *p;

	ck_assert_ptr_nonnull(f);
	p = print_create(f, PRINT_JSON, 0);
	print_array_begin(p, "phc");
	phccheck_print(p, r);
	print_array_end(p);
	ck_assert_int_eq(print_destroy(p), 0);
	ck_assert_int_eq(fclose(f), 0);
	return buf;
}

START_TEST(print_figures)
{
	struct phccheck_result r;
	char *s;

	good(&r);
	r.index = 3;
	r.resolution_ns = 8;
	snprintf(r.ifaces, sizeof(r.ifaces), "eth1,eth2");
	s = print_json(&r);
	ck_assert_msg(strstr(s, "\"device\":\"/dev/ptp3\""), "%s", s);
	ck_assert_msg(strstr(s, "\"ifaces\":\"eth1,eth2\""), "%s", s);
	ck_assert_msg(strstr(s, "\"clock_name\":null"), "%s", s);
	ck_assert_msg(strstr(s, "\"resolution_ns\":8"), "%s", s);
	ck_assert_msg(strstr(s, "\"method\":\"extended\""), "%s", s);
	ck_assert_msg(strstr(s, "\"freq_ppb\":-1500"), "%s", s);
	ck_assert_msg(strstr(s, "\"freq_error\":null"), "%s", s);
	ck_assert_msg(strstr(s, "\"read_cost_ns\":{"), "%s", s);
	free(s);

	r.freq_err = -EACCES;
	r.freq_ppb = NAN;
	s = print_json(&r);
	ck_assert_msg(strstr(s, "\"freq_ppb\":null"), "%s", s);
	ck_assert_msg(strstr(s, "\"freq_error\":\"Permission denied\""), "%s", s);
	free(s);
}
END_TEST

static Suite *phccheck_suite(void)
{
	Suite *s = suite_create("phccheck");
	TCase *gcd = tcase_create("gcd");
	TCase *off = tcase_create("offsets");
	TCase *jdg = tcase_create("judge");
	TCase *lst = tcase_create("list");
	TCase *dir = tcase_create("list_dir");
	TCase *rd = tcase_create("reads");
	TCase *run = tcase_create("run");

	tcase_add_test(gcd, gcd_steps_of_8);
	tcase_add_test(gcd, gcd_mixed_8_12);
	tcase_add_test(gcd, gcd_equal_values);
	tcase_add_test(gcd, gcd_zeros_ignored);
	tcase_add_test(gcd, gcd_negative_differences);
	tcase_add_test(gcd, gcd_single_and_none);
	tcase_add_test(gcd, gcd_extremes);
	tcase_add_test(gcd, gcd_one);
	suite_add_tcase(s, gcd);

	tcase_add_test(off, offsets_linear);
	tcase_add_test(off, offsets_noise);
	tcase_add_test(off, offsets_few);
	suite_add_tcase(s, off);

	tcase_add_test(jdg, judge_all_pass);
	tcase_add_test(jdg, judge_levels);
	tcase_add_test(jdg, judge_backwards);
	tcase_add_test(jdg, judge_precise);
	tcase_add_test(jdg, judge_not_measured);
	tcase_add_test(jdg, judge_freq_unreadable);
	tcase_add_test(jdg, judge_offset_note);
	suite_add_tcase(s, jdg);

	tcase_add_test(lst, list_here);
	suite_add_tcase(s, lst);
	tcase_add_checked_fixture(dir, tmp_setup, tmp_teardown);
	tcase_add_test(dir, list_dir_rules);
	tcase_add_test(dir, list_dir_missing);
	suite_add_tcase(s, dir);

	tcase_add_test(rd, reads_monotonic);
	tcase_add_test(rd, reads_realtime);
	tcase_add_test(rd, reads_errors);
	suite_add_tcase(s, rd);

	tcase_add_test(run, config_defaults);
	tcase_add_test(run, run_no_device);
	tcase_add_test(run, run_bad_config);
	tcase_add_test(run, run_live);
	tcase_add_test(run, print_figures);
	suite_add_tcase(s, run);
	return s;
}

UNIT_MAIN(phccheck_suite)
