/* test_samples.c — the samples file (files/samples.h): what the writer
 * puts on a line the parser gives back, field for field; the header is a
 * comment to the parser; the rate bucket is written whole; lines that are
 * not samples are refused, blank lines and comments passed over. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "files/samples.h"
#include "unit.h"

/* Write r with samples_write() into buf (a memory stream). */
static void write_line(const struct samples_rec *r, char *buf, size_t len)
{
	FILE *f = fmemopen(buf, len, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(samples_write(f, r), 0);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(round_trip)
{
	const struct samples_rec in[] = {
		{ "main", "hop", "venue", "algo", 1763990000123456789LL, 2471,
		  SAMPLES_SYNC_IN, 113, 5000.0, "-", { 80, 0, 32, 1 } },
		{ "baseline", "switch", "venue", "algo", 1, -45,
		  SAMPLES_SYNC_OUT, -1, 0.0, "arista-7124sx", { -1, -1, -1, -1 } },
		{ "main", "tick_to_trade", "algo", "algo", 42, 3364,
		  SAMPLES_SYNC_NONE, -1, 100000.0, "-", { -1, -1, -1, -1 } },
		{ "main", "hop", "algo", "venue", 43, 2600,
		  SAMPLES_SYNC_HOLDOVER, 4113, 0.0, "-", { 100, 4013, -1, 0 } },
	};

	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char buf[256];
		struct samples_rec out;

		write_line(&in[i], buf, sizeof(buf));
		ck_assert_int_eq(samples_parse(buf, &out), 0);
		ck_assert_str_eq(out.run, in[i].run);
		ck_assert_str_eq(out.kind, in[i].kind);
		ck_assert_str_eq(out.from, in[i].from);
		ck_assert_str_eq(out.to, in[i].to);
		ck_assert_int_eq(out.time_ns, in[i].time_ns);
		ck_assert_int_eq(out.latency_ns, in[i].latency_ns);
		ck_assert_int_eq(out.sync, in[i].sync);
		ck_assert_int_eq(out.bound_ns, in[i].bound_ns);
		ck_assert(out.rate == in[i].rate);
		ck_assert_str_eq(out.sw, in[i].sw);
		for (int k = 0; k < SAMPLES_TERMS; k++)
			ck_assert_int_eq(out.term_ns[k], in[i].term_ns[k]);
	}
}
END_TEST

START_TEST(exact_text)
{
	struct samples_rec r = { "main", "hop", "v", "a", 10, -20,
				 SAMPLES_SYNC_OUT, 5, 1999.6, "-", { 2, 0, 3, 0 } };
	char buf[256];

	/* The rate is a bucket centre, written whole (rounded). */
	write_line(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "main hop v a 10 -20 out 5 2000 - 2 0 3 0\n");
	r.sync = SAMPLES_SYNC_HOLDOVER;
	write_line(&r, buf, sizeof(buf));
	ck_assert_str_eq(buf, "main hop v a 10 -20 holdover 5 2000 - 2 0 3 0\n");
	/* A file written before the terms: ten fields, the terms unknown. */
	snprintf(buf, sizeof(buf), "main hop v a 10 -20 in 5 0 -\n");
	ck_assert_int_eq(samples_parse(buf, &r), 0);
	ck_assert_int_eq(r.bound_ns, 5);
	for (int k = 0; k < SAMPLES_TERMS; k++)
		ck_assert_int_eq(r.term_ns[k], -1);
}
END_TEST

START_TEST(header_is_comment)
{
	char buf[256];
	struct samples_rec r;
	FILE *f = fmemopen(buf, sizeof(buf), "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(samples_write_header(f), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(buf[0], '#');
	ck_assert_ptr_nonnull(strstr(buf, "run kind from to time_ns latency_ns "
				     "sync bound_ns rate switch"));
	ck_assert_int_eq(samples_parse(buf, &r), 1);
}
END_TEST

START_TEST(not_samples)
{
	static const char *const bad[] = {
		"main hop v a 1 2 in 5 0",		/* nine fields */
		"main hop v a 1 2 in 5 0 - extra",	/* eleven */
		"other hop v a 1 2 in 5 0 -",		/* run */
		"main hop v a 1 2 maybe 5 0 -",		/* sync */
		"main hop v a 1 2 hold 5 0 -",
		"main hop v a 1 2 h 5 0 -",
		"main hop v a 1 2.5 in 5 0 -",		/* not whole */
		"main hop v a 1 2 in 5 1e3 -",
		"main hop v a 99999999999999999999 2 in 5 0 -",	/* range */
		"main hop v a 1 2 in 5 0 - 1 2 3",	/* three terms */
		"main hop v a 1 2 in 5 0 - 1 2 3 x",	/* a term not a number */
		"main hop v a 1 2 in 5 0 - 1 2 3 4 5",	/* fifteen fields */
	};
	struct samples_rec r;
	char line[160];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line), "%s", bad[i]);
		ck_assert_msg(samples_parse(line, &r) == -EBADMSG, "%s", bad[i]);
	}
	snprintf(line, sizeof(line), "  \t\r\n");
	ck_assert_int_eq(samples_parse(line, &r), 1);
	ck_assert_str_eq(samples_sync_name(SAMPLES_SYNC_NONE), "none");
	ck_assert_str_eq(samples_sync_name(SAMPLES_SYNC_HOLDOVER), "holdover");
	ck_assert_str_eq(samples_sync_name((enum samples_sync)7), "none");
}
END_TEST

static Suite *samples_suite(void)
{
	Suite *s = suite_create("samples");
	TCase *tc = tcase_create("samples");

	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, exact_text);
	tcase_add_test(tc, header_is_comment);
	tcase_add_test(tc, not_samples);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(samples_suite)
