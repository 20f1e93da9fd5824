/* test_nstime.c — nstime_iso(): ISO-8601 UTC with nanoseconds, against
 * dates whose calendar is known (leap days, century rules) and against
 * gmtime_r over a sweep of the range tapless meets. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "base/nstime.h"
#include "unit.h"

/* ns for a civil date via timegm, the C library's own calendar. */
static int64_t civil_ns(int y, int mon, int d, int h, int mi, int s, long ns)
{
	struct tm tm = { .tm_year = y - 1900, .tm_mon = mon - 1, .tm_mday = d,
			 .tm_hour = h, .tm_min = mi, .tm_sec = s };

	return (int64_t)timegm(&tm) * NS_PER_S + ns;
}

START_TEST(epoch_and_digits)
{
	char b[NSTIME_ISO_BUF];

	ck_assert_str_eq(nstime_iso(0, b), "1970-01-01T00:00:00.000000000Z");
	/* Every nanosecond digit, leading zeros kept. */
	ck_assert_str_eq(nstime_iso(1, b), "1970-01-01T00:00:00.000000001Z");
	ck_assert_str_eq(nstime_iso(civil_ns(2026, 11, 29, 2, 3, 4, 123456789),
				    b), "2026-11-29T02:03:04.123456789Z");
	ck_assert_str_eq(nstime_iso(civil_ns(2026, 11, 29, 2, 3, 4, 1000), b),
			 "2026-11-29T02:03:04.000001000Z");
}
END_TEST

START_TEST(leap_years)
{
	char b[NSTIME_ISO_BUF];

	/* 2000 is a leap year (divisible by 400), 2100 and 1900 are not. */
	ck_assert_str_eq(nstime_iso(civil_ns(2000, 2, 28, 23, 59, 59, 999999999)
				    + 1, b), "2000-02-29T00:00:00.000000000Z");
	ck_assert_str_eq(nstime_iso(civil_ns(2100, 2, 28, 23, 59, 59, 0)
				    + NS_PER_S, b),
			 "2100-03-01T00:00:00.000000000Z");
	ck_assert_str_eq(nstime_iso(civil_ns(2024, 12, 31, 0, 0, 0, 0), b),
			 "2024-12-31T00:00:00.000000000Z");
	ck_assert_str_eq(nstime_iso(civil_ns(1900, 2, 28, 12, 0, 0, 0)
				    + 86400 * NS_PER_S, b),
			 "1900-03-01T12:00:00.000000000Z");
}
END_TEST

START_TEST(negative)
{
	char b[NSTIME_ISO_BUF];

	/* Before 1970 the fraction still counts forward from the second
	 * before: -1 ns is the last nanosecond of 1969. */
	ck_assert_str_eq(nstime_iso(-1, b), "1969-12-31T23:59:59.999999999Z");
	ck_assert_str_eq(nstime_iso(-NS_PER_S, b),
			 "1969-12-31T23:59:59.000000000Z");
	ck_assert_str_eq(nstime_iso(-NS_PER_S - 1, b),
			 "1969-12-31T23:59:58.999999999Z");
	ck_assert_str_eq(nstime_iso(-86400 * NS_PER_S, b),
			 "1969-12-31T00:00:00.000000000Z");
}
END_TEST

START_TEST(against_gmtime)
{
	char b[NSTIME_ISO_BUF], want[NSTIME_ISO_BUF];

	/* From 1901 to 2262 (the int64_t ns range), a step that is no
	 * multiple of a day, so every time of day and every date kind is hit. */
	for (int64_t ns = -2145916800LL * NS_PER_S; ns < 9200000000LL * NS_PER_S;
	     ns += 86413LL * NS_PER_S * 7 + 123456789) {
		int64_t s = ns / NS_PER_S, frac = ns % NS_PER_S;
		struct tm tm;
		time_t t;

		if (frac < 0) {
			frac += NS_PER_S;
			s--;
		}
		t = (time_t)s;
		ck_assert_ptr_nonnull(gmtime_r(&t, &tm));
		snprintf(want, sizeof(want),
			 "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec, (long long)frac);
		ck_assert_str_eq(nstime_iso(ns, b), want);
	}
	/* The ends of int64_t do not overflow the buffer. */
	ck_assert_uint_lt(strlen(nstime_iso(INT64_MIN, b)), NSTIME_ISO_BUF);
	ck_assert_uint_lt(strlen(nstime_iso(INT64_MAX, b)), NSTIME_ISO_BUF);
}
END_TEST

static Suite *nstime_suite(void)
{
	Suite *s = suite_create("nstime");
	TCase *tc = tcase_create("iso");

	tcase_add_test(tc, epoch_and_digits);
	tcase_add_test(tc, leap_years);
	tcase_add_test(tc, negative);
	tcase_add_test(tc, against_gmtime);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(nstime_suite)
