/* test_metrics_text.c — the exposition helpers a renderer calls.
 *
 * metrics_family(), metrics_sample() and metrics_histogram() write into a
 * memstream here, no server involved (that is test_metrics.c). Checked:
 * the helpers' output, escaping and number formatting, what they refuse
 * (writing nothing), and histograms in both formats with their bounds
 * spelt as OpenMetrics asks. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "base/metrics.h"
#include "unit.h"

/* The helpers write into a memstream; out_str() closes it. */
static char *obuf;
static size_t olen;

static FILE *out_open(void)
{
	FILE *f = open_memstream(&obuf, &olen);

	ck_assert_ptr_nonnull(f);
	return f;
}

static const char *out_str(FILE *f)
{
	static char copy[4096];

	ck_assert_int_eq(fclose(f), 0);
	ck_assert_uint_lt(olen, sizeof(copy));
	memcpy(copy, obuf, olen + 1);
	free(obuf);
	obuf = NULL;
	return copy;
}

START_TEST(family_lines)
{
	FILE *f;

	f = out_open();
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "a_seconds",
					METRICS_GAUGE, "H", "seconds"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "b", METRICS_COUNTER,
					"x\\y \"q\"\nz", NULL), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "c_bytes",
					METRICS_COUNTER, NULL, "bytes"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "ns:d", METRICS_GAUGE,
					"", ""), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "e_seconds",
					METRICS_HISTOGRAM, "E", "seconds"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_TEXT, "f", METRICS_HISTOGRAM,
					NULL, NULL), 0);
	ck_assert_str_eq(out_str(f),
			 "# HELP a_seconds H\n"
			 "# TYPE a_seconds gauge\n"
			 "# HELP b_total x\\\\y \"q\"\\nz\n"
			 "# TYPE b_total counter\n"
			 "# TYPE c_bytes_total counter\n"
			 "# TYPE ns:d gauge\n"
			 "# HELP e_seconds E\n"
			 "# TYPE e_seconds histogram\n"
			 "# TYPE f histogram\n");

	f = out_open();
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "a_seconds",
					METRICS_GAUGE, "H", "seconds"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "b",
					METRICS_COUNTER, "x\\y \"q\"\nz", NULL), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "c_bytes",
					METRICS_COUNTER, NULL, "bytes"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "ns:d",
					METRICS_GAUGE, "", ""), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "e_seconds",
					METRICS_HISTOGRAM, "E", "seconds"), 0);
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "f",
					METRICS_HISTOGRAM, NULL, NULL), 0);
	ck_assert_str_eq(out_str(f),
			 "# TYPE a_seconds gauge\n"
			 "# UNIT a_seconds seconds\n"
			 "# HELP a_seconds H\n"
			 "# TYPE b counter\n"
			 "# HELP b x\\\\y \\\"q\\\"\\nz\n"
			 "# TYPE c_bytes counter\n"
			 "# UNIT c_bytes bytes\n"
			 "# TYPE ns:d gauge\n"
			 "# TYPE e_seconds histogram\n"
			 "# UNIT e_seconds seconds\n"
			 "# HELP e_seconds E\n"
			 "# TYPE f histogram\n");
}
END_TEST

START_TEST(family_refused)
{
	static const struct {
		const char *name, *unit;
		enum metrics_type type;
	} bad[] = {
		{ "1abc", NULL, METRICS_GAUGE },
		{ "a-b", NULL, METRICS_GAUGE },
		{ "", NULL, METRICS_GAUGE },
		{ NULL, NULL, METRICS_GAUGE },
		{ "a b", NULL, METRICS_GAUGE },
		{ "foo_total", NULL, METRICS_COUNTER },
		{ "foo_seconds", "bytes", METRICS_GAUGE },
		{ "seconds", "seconds", METRICS_GAUGE },
		{ "_seconds", "seconds", METRICS_GAUGE },
		{ "fooseconds", "seconds", METRICS_GAUGE },
		{ "foo_sec-onds", "sec-onds", METRICS_GAUGE },
		{ "foo", NULL, (enum metrics_type)7 },
		{ "foo", NULL, (enum metrics_type)-1 },
		{ "foo_seconds", "bytes", METRICS_HISTOGRAM },
		{ "9foo", NULL, METRICS_HISTOGRAM },
	};
	FILE *f = out_open();

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(metrics_family(f, METRICS_TEXT, bad[i].name,
					     bad[i].type, "h", bad[i].unit)
			      == -EINVAL, "accepted %zu", i);
	ck_assert_int_eq(metrics_family(f, (enum metrics_format)5, "foo",
					METRICS_GAUGE, "h", NULL), -EINVAL);
	/* A gauge may end in _total; a counter's family may not. */
	ck_assert_int_eq(metrics_family(f, METRICS_OPENMETRICS, "x_total",
					METRICS_GAUGE, NULL, NULL), 0);
	ck_assert_str_eq(out_str(f), "# TYPE x_total gauge\n");
}
END_TEST

START_TEST(sample_lines)
{
	FILE *f = out_open();

	ck_assert_int_eq(metrics_sample(f, "a", NULL, 1), 0);
	ck_assert_int_eq(metrics_sample(f, "b", (const char *[]){ NULL }, 2), 0);
	ck_assert_int_eq(metrics_sample(f, "c_total",
					(const char *[]){ "k", "v", "_x2", "",
							  NULL }, 0.5), 0);
	ck_assert_int_eq(metrics_sample(f, "d:e",
					(const char *[]){ "path",
							  "C:\\DIR\\F \"x\"\nend",
							  NULL }, -3), 0);
	ck_assert_int_eq(metrics_sample(f, "u", (const char *[]){
					"gm", "ü{},=\t", NULL }, NAN), 0);
	ck_assert_str_eq(out_str(f),
			 "a 1\n"
			 "b 2\n"
			 "c_total{k=\"v\",_x2=\"\"} 0.5\n"
			 "d:e{path=\"C:\\\\DIR\\\\F \\\"x\\\"\\nend\"} -3\n"
			 "u{gm=\"ü{},=\t\"} NaN\n");
}
END_TEST

START_TEST(sample_refused)
{
	const char *const *const bad[] = {
		(const char *[]){ "k", NULL },
		(const char *[]){ "k", "v", "j", NULL },
		(const char *[]){ "1k", "v", NULL },
		(const char *[]){ "a:b", "v", NULL },
		(const char *[]){ "", "v", NULL },
		(const char *[]){ "k-", "v", NULL },
		(const char *[]){ "k", "v", "j", "w", "k", "x", NULL },
	};
	FILE *f = out_open();

	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
		ck_assert_msg(metrics_sample(f, "m", bad[i], 1) == -EINVAL,
			      "accepted %zu", i);
	ck_assert_int_eq(metrics_sample(f, "9m", NULL, 1), -EINVAL);
	ck_assert_int_eq(metrics_sample(f, "m-x", NULL, 1), -EINVAL);
	ck_assert_int_eq(metrics_sample(f, NULL, NULL, 1), -EINVAL);
	ck_assert_str_eq(out_str(f), "");
}
END_TEST

static const struct {
	double v;
	const char *text;
} values[] = {
	{ 0, "0" },
	{ 3, "3" },
	{ -42, "-42" },
	{ 9007199254740992.0, "9007199254740992" },		/* 2^53 */
	{ 9007199254740994.0, "9007199254740994" },
	{ 4611686018427387904.0, "4611686018427387904" },	/* 2^62 */
	{ -9223372036854775807.0 - 1, "-9223372036854775808" },
	{ 9223372036854775808.0, "9.223372036854776e+18" },	/* 2^63 */
	{ 1e300, "1e+300" },
	{ 0.1, "0.1" },
	{ 0.25, "0.25" },
	{ -1.5e-8, "-1.5e-08" },
	{ 1.0 / 3, "0.3333333333333333" },
	{ 0.1 + 0.2, "0.30000000000000004" },
	{ 123456.789, "123456.789" },
	{ 5e-324, "4.94065645841247e-324" },
	{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	{ NAN, "NaN" },
	{ INFINITY, "+Inf" },
	{ -INFINITY, "-Inf" },
};

START_TEST(value_format)
{
	char buf[32];

	metrics_format_value(buf, values[_i].v);
	ck_assert_str_eq(buf, values[_i].text);
	if (isfinite(values[_i].v))
		ck_assert(strtod(buf, NULL) == values[_i].v);
}
END_TEST

START_TEST(value_roundtrip)
{
	char buf[32];
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	/* Deterministic doubles of every magnitude read back exactly, in at
	 * most 17 significant digits. */
	for (int i = 0; i < 100000; i++) {
		double v;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		metrics_format_value(buf, v);
		ck_assert_msg(strtod(buf, NULL) == v, "%s", buf);
		ck_assert_uint_le(strlen(buf), 24);
	}
}
END_TEST

/* got equals want, compared line by line so a failure names the line. */
static void expect_lines(const char *got, const char *want)
{
	int line = 1;

	while (*got || *want) {
		size_t lg = strcspn(got, "\n"), lw = strcspn(want, "\n");

		ck_assert_msg(lg == lw && !memcmp(got, want, lg),
			      "line %d: got '%.*s', want '%.*s'", line,
			      (int)lg, got, (int)lw, want);
		ck_assert_msg(got[lg] == want[lw], "line %d: newline", line);
		got += lg + (got[lg] != '\0');
		want += lw + (want[lw] != '\0');
		line++;
	}
}

/* The caller's bounds (issue 22): 1-2-5 from 100 ns to 10 ms. */
static const double bounds[] = {
	1e-07, 2e-07, 5e-07, 1e-06, 2e-06, 5e-06, 1e-05, 2e-05, 5e-05,
	0.0001, 0.0002, 0.0005, 0.001, 0.002, 0.005, 0.01,
};
static const uint64_t bcum[] = {
	0, 0, 3, 10, 10, 250, 1000, 1001, 1001,
	1001, 1001, 1001, 1001, 1002, 1002, 1002,
};

#define B(le, n) "tapless_latency_seconds_bucket{path=\"a\\\"b\",le=\"" \
	le "\"} " #n "\n"
/* No bound, no label: the +Inf bucket alone, last. */
#define HIST_SAMPLES \
	B("1e-07", 0) B("2e-07", 0) B("5e-07", 3) B("1e-06", 10) \
	B("2e-06", 10) B("5e-06", 250) B("1e-05", 1000) B("2e-05", 1001) \
	B("5e-05", 1001) B("0.0001", 1001) B("0.0002", 1001) \
	B("0.0005", 1001) B("0.001", 1001) B("0.002", 1002) \
	B("0.005", 1002) B("0.01", 1002) B("+Inf", 1003) \
	"tapless_latency_seconds_count{path=\"a\\\"b\"} 1003\n" \
	"tapless_latency_seconds_sum{path=\"a\\\"b\"} 0.0125\n" \
	"tapless_latency_seconds_bucket{le=\"+Inf\"} 0\n" \
	"tapless_latency_seconds_count 0\n" \
	"tapless_latency_seconds_sum 0\n"

static void write_histograms(FILE *f, enum metrics_format fmt)
{
	const unsigned n = sizeof(bounds) / sizeof(*bounds);

	ck_assert_uint_eq(n, sizeof(bcum) / sizeof(*bcum));
	ck_assert_int_eq(metrics_family(f, fmt, "tapless_latency_seconds",
					METRICS_HISTOGRAM, "One-way latency.",
					"seconds"), 0);
	ck_assert_int_eq(metrics_histogram(f, "tapless_latency_seconds",
					   (const char *[]){ "path", "a\"b",
							     NULL },
					   bounds, bcum, n, 1003, 0.0125), 0);
	ck_assert_int_eq(metrics_histogram(f, "tapless_latency_seconds",
					   NULL, NULL, NULL, 0, 0, 0), 0);
}

START_TEST(histogram_text)
{
	FILE *f = out_open();

	write_histograms(f, METRICS_TEXT);
	expect_lines(out_str(f),
		     "# HELP tapless_latency_seconds One-way latency.\n"
		     "# TYPE tapless_latency_seconds histogram\n"
		     HIST_SAMPLES);
}
END_TEST

START_TEST(histogram_openmetrics)
{
	FILE *f = out_open();

	write_histograms(f, METRICS_OPENMETRICS);
	expect_lines(out_str(f),
		     "# TYPE tapless_latency_seconds histogram\n"
		     "# UNIT tapless_latency_seconds seconds\n"
		     "# HELP tapless_latency_seconds One-way latency.\n"
		     HIST_SAMPLES);
}
END_TEST

/* OpenMetrics 1.0, "Canonical Numbers": Go's %g (shortest digits,
 * exponent below 1e-4 and from 1e+6 on) with ".0" when there is neither a
 * point nor an exponent; the spec's own examples first. */
static const struct {
	double v;
	const char *text;
} les[] = {
	{ 0, "0.0" }, { 0.001, "0.001" }, { 0.002, "0.002" }, { 0.01, "0.01" },
	{ 0.1, "0.1" }, { 0.9, "0.9" }, { 0.95, "0.95" }, { 0.99, "0.99" },
	{ 0.999, "0.999" }, { 1, "1.0" }, { 1.7, "1.7" }, { 10, "10.0" },
	{ 1e-10, "1e-10" }, { 1e-09, "1e-09" }, { 1e-05, "1e-05" },
	{ 0.0001, "0.0001" }, { 100000, "100000.0" }, { 1e+06, "1e+06" },
	{ 1e+10, "1e+10" }, { 1e+23, "1e+23" }, { 1.1e+23, "1.1e+23" },
	{ -0.0, "0.0" }, { 2.5e-07, "2.5e-07" }, { 0.00011, "0.00011" },
	{ 1.1e-05, "1.1e-05" }, { 123456, "123456.0" },
	{ 999999, "999999.0" }, { 1234567, "1.234567e+06" },
	{ 123.45, "123.45" }, { 0.1 + 0.2, "0.30000000000000004" },
	{ 1e+100, "1e+100" }, { 5e-324, "5e-324" },
	{ 1.7976931348623157e308, "1.7976931348623157e+308" },
	{ 9007199254740993.0, "9.007199254740992e+15" },
};

START_TEST(histogram_le)
{
	const uint64_t zero = 0;
	char want[128];
	FILE *f = out_open();

	ck_assert_int_eq(metrics_histogram(f, "h", NULL, &les[_i].v, &zero, 1,
					   0, 0), 0);
	snprintf(want, sizeof(want), "h_bucket{le=\"%s\"} 0\n"
		 "h_bucket{le=\"+Inf\"} 0\nh_count 0\nh_sum 0\n", les[_i].text);
	expect_lines(out_str(f), want);
	ck_assert(strtod(les[_i].text, NULL) == les[_i].v);
}
END_TEST

START_TEST(histogram_le_roundtrip)
{
	uint64_t x = 0x2545f4914f6cdd1dULL, zero = 0;

	/* Deterministic non-negative doubles of every magnitude: the bound
	 * reads back exactly, and is a float in the spec's sense (a point or
	 * an exponent), never an integer. */
	for (int i = 0; i < 50000; i++) {
		char *text, *q;
		double v;
		FILE *f;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		v = fabs(v);
		if (!isfinite(v))
			continue;
		f = out_open();
		ck_assert_int_eq(metrics_histogram(f, "h", NULL, &v, &zero, 1,
						   0, 0), 0);
		text = (char *)out_str(f) + strlen("h_bucket{le=\"");
		q = strchr(text, '"');
		*q = '\0';
		ck_assert_msg(strtod(text, NULL) == v, "%s", text);
		ck_assert_msg(strpbrk(text, ".e"), "%s", text);
		ck_assert_uint_le(strlen(text), 23);
	}
}
END_TEST

START_TEST(histogram_refused)
{
	const double le3[] = { 1e-07, 2e-07, 5e-07 };
	const double eq[] = { 1e-07, 1e-07 }, down[] = { 2e-07, 1e-07 };
	const double nan1[] = { NAN }, inf1[] = { INFINITY };
	const double neg[] = { -1e-07, 1e-07 }, nonzero[] = { 1 };
	const uint64_t c3[] = { 1, 2, 3 }, cdown[] = { 2, 1, 3 };
	const uint64_t c0[] = { 0, 0 }, c1[] = { 0 };
	const char *const *const badlab[] = {
		(const char *[]){ "le", "1", NULL },
		(const char *[]){ "k", "v", "le", "x", NULL },
		(const char *[]){ "k", NULL },
		(const char *[]){ "1k", "v", NULL },
		(const char *[]){ "k", "v", "k", "w", NULL },
	};
	FILE *f = out_open();

	/* The good call these vary. */
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, c3, 3, 3, 1), 0);
	ck_assert_int_eq(fflush(f), 0);
	ck_assert_uint_gt(olen, 0);
	fclose(f);
	free(obuf);
	obuf = NULL;

	f = out_open();
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, eq, c0, 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, down, c0, 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, nan1, c1, 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, inf1, c1, 1, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, neg, c0, 2, 0, 0),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, cdown, 3, 3, 1),
			 -EINVAL);
	/* A bucket above the count; the last bucket at it is fine (above). */
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, c3, 3, 2, 1),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, nonzero, (uint64_t[]){ 1 },
					   1, 0, 1), -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, NULL, c3, 3, 3, 1),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, NULL, 3, 3, 1),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, c3, 3, 3, NAN),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h", NULL, le3, c3, 3, 3, -1e-9),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "9h", NULL, le3, c3, 3, 3, 1),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, NULL, NULL, le3, c3, 3, 3, 1),
			 -EINVAL);
	ck_assert_int_eq(metrics_histogram(f, "h-x", NULL, le3, c3, 3, 3, 1),
			 -EINVAL);
	for (size_t i = 0; i < sizeof(badlab) / sizeof(*badlab); i++)
		ck_assert_msg(metrics_histogram(f, "h", badlab[i], le3, c3, 3,
						3, 1) == -EINVAL,
			      "accepted labels %zu", i);
	/* Nothing written by a refused call. */
	ck_assert_str_eq(out_str(f), "");
}
END_TEST
static Suite *metrics_text_suite(void)
{
	Suite *s = suite_create("metrics_text");
	TCase *tx = tcase_create("text");

	tcase_add_test(tx, family_lines);
	tcase_add_test(tx, family_refused);
	tcase_add_test(tx, sample_lines);
	tcase_add_test(tx, sample_refused);
	tcase_add_loop_test(tx, value_format, 0,
			    sizeof(values) / sizeof(*values));
	tcase_add_test(tx, value_roundtrip);
	tcase_add_test(tx, histogram_text);
	tcase_add_test(tx, histogram_openmetrics);
	tcase_add_loop_test(tx, histogram_le, 0, sizeof(les) / sizeof(*les));
	tcase_add_test(tx, histogram_le_roundtrip);
	tcase_add_test(tx, histogram_refused);
	suite_add_tcase(s, tx);
	return s;
}

UNIT_MAIN(metrics_text_suite)
