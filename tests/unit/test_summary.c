/* test_summary.c — latency summaries: nearest-rank percentiles, mean, SD,
 * and the latency_ns object every report prints. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/print.h"
#include "base/summary.h"
#include "unit.h"

START_TEST(ranks_1_to_1000)
{
	static int64_t v[1000];
	struct summary s;

	/* Shuffled on purpose: summary_of sorts. */
	for (int i = 0; i < 1000; i++)
		v[i] = (i * 7919) % 1000 + 1;
	summary_of(v, 1000, &s);
	ck_assert_uint_eq(s.n, 1000);
	ck_assert_int_eq(s.min, 1);
	ck_assert_int_eq(s.max, 1000);
	ck_assert_int_eq(s.p50, 500);
	ck_assert_int_eq(s.p90, 900);
	ck_assert_int_eq(s.p99, 990);
	ck_assert_int_eq(s.p999, 999);
	ck_assert(fabs(s.mean - 500.5) < 1e-9);
}
END_TEST

START_TEST(ranks_small)
{
	int64_t v[] = { 30, 10, 20 };
	struct summary s;

	summary_of(v, 3, &s);
	/* Nearest rank of 3 samples: p50 is the 2nd, p90 and up the 3rd. */
	ck_assert_int_eq(s.p50, 20);
	ck_assert_int_eq(s.p90, 30);
	ck_assert_int_eq(s.p999, 30);
	ck_assert_int_eq(summary_rank(v, 3, 33.4), 20);
	ck_assert_int_eq(summary_rank(v, 3, 33.3), 10);
}
END_TEST

/* The one nearest-rank definition (hist.h and the report take theirs
 * from it): ceil(pct/100 n) within [1, n], a product a rounding above a
 * whole number kept on it. */
START_TEST(nearest_rank)
{
	ck_assert_uint_eq(summary_nearest_rank(1000, 99.9), 999);
	ck_assert_uint_eq(summary_nearest_rank(1000, 99.95), 1000);
	ck_assert_uint_eq(summary_nearest_rank(100, 1), 1);
	ck_assert_uint_eq(summary_nearest_rank(100, 0.001), 1);	/* at least 1 */
	ck_assert_uint_eq(summary_nearest_rank(7, 100), 7);
	ck_assert_uint_eq(summary_nearest_rank(4, 50), 2);	/* the lower median */
	ck_assert_uint_eq(summary_nearest_rank(5, 50), 3);
	/* In doubles 29 / 100 * 100 is 28.999999999999996, 57 / 100 * 100
	 * is 56.99999999999999 and 1.1 / 100 * 1000 is 11.000000000000002. */
	ck_assert_uint_eq(summary_nearest_rank(100, 29), 29);
	ck_assert_uint_eq(summary_nearest_rank(100, 57), 57);
	ck_assert_uint_eq(summary_nearest_rank(1000, 1.1), 11);
}
END_TEST

START_TEST(mean_and_sd)
{
	int64_t v[] = { 2, 4, 4, 4, 5, 5, 7, 9 };
	struct summary s;

	summary_of(v, 8, &s);
	ck_assert(fabs(s.mean - 5.0) < 1e-12);
	ck_assert(fabs(s.sd - sqrt(32.0 / 7.0)) < 1e-12);
}
END_TEST

START_TEST(large_common_part)
{
	/* Nanosecond stamps around 1.7e18 with a 1 ns spread: the SD must
	 * still come out right (one pass would lose it). */
	int64_t base = 1700000000000000000LL;
	int64_t v[] = { base + 1, base + 2, base + 3 };
	struct summary s;

	summary_of(v, 3, &s);
	ck_assert(fabs(s.sd - 1.0) < 1e-3);
}
END_TEST

START_TEST(empty_and_single)
{
	int64_t one = -42;
	struct summary s;

	summary_of(NULL, 0, &s);
	ck_assert_uint_eq(s.n, 0);
	summary_of(&one, 1, &s);
	ck_assert_int_eq(s.min, -42);
	ck_assert_int_eq(s.p999, -42);
	ck_assert(s.sd == 0);
}
END_TEST

START_TEST(print_json)
{
	int64_t v[] = { 100, 200, 300, 400 };
	struct summary s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct printer *p = print_create(f, PRINT_JSON, 0);

	summary_of(v, 4, &s);
	summary_print(p, "latency_ns", &s);
	summary_of(NULL, 0, &s);
	summary_print(p, "empty", &s);
	ck_assert_int_eq(print_destroy(p), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "\"latency_ns\":{\"count\":4,\"min\":100,"
			     "\"mean\":250,\"p50\":200,\"p90\":400,\"p99\":400,"
			     "\"p999\":400,\"max\":400,\"sd\":"), "got %s", buf);
	ck_assert_msg(strstr(buf, "\"empty\":{\"count\":0,\"min\":null,"), "got %s", buf);
	free(buf);
}
END_TEST

static Suite *summary_suite(void)
{
	Suite *s = suite_create("summary");
	TCase *t = tcase_create("summary");

	tcase_add_test(t, ranks_1_to_1000);
	tcase_add_test(t, ranks_small);
	tcase_add_test(t, nearest_rank);
	tcase_add_test(t, mean_and_sd);
	tcase_add_test(t, large_common_part);
	tcase_add_test(t, empty_and_single);
	tcase_add_test(t, print_json);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(summary_suite)
