/* test_bound.c — a host's clock error read back from its sync journal
 * (ptp/bound.c): bound_at() takes the last sample of the clock at or
 * before t (journals out of time order are sorted; of two samples at one
 * instant the later line counts); in sync with that sample's bound while
 * the sample says so and is at most max_age old, out of sync otherwise,
 * before the first sample, for a negative max_age and for a journal
 * without samples; unknown for a clock the journal does not know (unless
 * it knows only one), beyond the 16 clocks it keeps, and without a
 * journal. Ages and bounds hold at the ends of int64_t. utc_offset events
 * count when 0..999, the last one wins; bad lines are counted and the
 * first one named. */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "ptp/bound.h"
#include "ptp/journal.h"
#include "unit.h"

#define S 1000000000LL
#define T0 1700000000000000000LL

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "bound");
	snprintf(path, sizeof(path), "%s/sync.journal", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* Append text to path. */
static void puts_file(const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
	size_t len = strlen(text);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, text, len), (ssize_t)len);
	close(fd);
}

static struct journal_sample sample(int64_t ts, const char *clock, int i)
{
	struct journal_sample s = {
		.ts_ns = ts, .offset_ns = -17 * i, .delay_ns = 300 + i,
		.freq_ppb = -1234.5, .steps = 1, .in_sync = true,
		.bound_ns = 40 + i,
	};

	snprintf(s.clock, sizeof(s.clock), "%s", clock);
	snprintf(s.state, sizeof(s.state), "SLAVE");
	snprintf(s.gm, sizeof(s.gm), "001122.fffe.334455");
	snprintf(s.servo, sizeof(s.servo), "s2");
	return s;
}

/* A two-clock journal: sys and phc0, a sample a second from T0 to T0+99 s;
 * phc0 out of sync for [40, 50) s; sys silent for [60, 80) s; phc0's
 * samples written out of time order. */
static void write_two_clocks(void)
{
	struct journal_writer *w;

	ck_assert_int_eq(journal_writer_open(&w, path, "algo1"), 0);
	ck_assert_int_eq(journal_write_event(w, T0 - S, "sys", "utc_offset", "37"), 0);
	for (int i = 0; i < 100; i++) {
		struct journal_sample s = sample(T0 + i * S, "sys", 0);

		s.in_sync = true;
		s.bound_ns = 1000 + i;
		if (i < 60 || i >= 80)
			ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	for (int i = 99; i >= 0; i--) {
		struct journal_sample s = sample(T0 + i * S, "phc0", 0);

		s.in_sync = i < 40 || i >= 50;
		s.bound_ns = i == 90 ? JOURNAL_NONE : 20 + i;
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(journal_write_event(w, T0, "phc0", "step", "-1500"), 0);
	journal_writer_close(w);
}

static enum bound_state at(const struct bound *b, const char *clock,
			   int64_t t, int64_t *bound)
{
	*bound = 12345;		/* must be overwritten */
	return bound_at(b, clock, t, bound);
}

START_TEST(bound_two_clocks)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;
	int utc = 0;

	write_two_clocks();
	ck_assert_int_eq(bound_open(&b, path, 2500000000LL, err), 0);
	ck_assert_uint_eq(bound_samples(b), 80 + 100);
	ck_assert_uint_eq(bound_events(b), 2);
	ck_assert_uint_eq(bound_bad_lines(b), 0);
	ck_assert_str_eq(bound_error(b), "");
	ck_assert_str_eq(bound_host(b), "algo1");
	ck_assert(!bound_torn(b));
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 37);
	/* In sync, with the bound of the last sample at or before t. */
	ck_assert_int_eq(at(b, "phc0", T0 + 10 * S + S / 2, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 30);
	ck_assert_int_eq(at(b, "phc0", T0 + 11 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 31);
	ck_assert_int_eq(at(b, "phc0", T0 + 11 * S - 1, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 30);
	ck_assert_int_eq(at(b, "sys", T0 + 10 * S + S / 2, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 1010);
	/* The sync-0 stretch, its edges. */
	ck_assert_int_eq(at(b, "phc0", T0 + 40 * S, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "phc0", T0 + 45 * S, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc0", T0 + 40 * S - 1, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(at(b, "phc0", T0 + 50 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 70);
	/* sys is in sync at 45 s: clocks are judged apart. */
	ck_assert_int_eq(at(b, "sys", T0 + 45 * S, &bn), BOUND_IN_SYNC);
	/* The gap: the 59 s sample vouches for 2.5 s, no more. */
	ck_assert_int_eq(at(b, "sys", T0 + 61 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 1059);
	ck_assert_int_eq(at(b, "sys", T0 + 61 * S + S / 2, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(at(b, "sys", T0 + 61 * S + S / 2 + 1, &bn),
			 BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "sys", T0 + 70 * S, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", T0 + 80 * S, &bn), BOUND_IN_SYNC);
	/* After the last sample, and long after. */
	ck_assert_int_eq(at(b, "phc0", T0 + 101 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(at(b, "phc0", T0 + 102 * S, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc0", INT64_MAX, &bn), BOUND_OUT_OF_SYNC);
	/* Before the first sample. */
	ck_assert_int_eq(at(b, "phc0", T0 - 1, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", INT64_MIN, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc0", T0, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 20);
	/* In sync without a bound. */
	ck_assert_int_eq(at(b, "phc0", T0 + 90 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, -1);
	/* A clock this two-clock journal does not know. */
	ck_assert_int_eq(at(b, "phc1", T0 + 10 * S, &bn), BOUND_UNKNOWN);
	ck_assert_int_eq(bn, -1);
	bound_destroy(b);
	ck_assert_int_eq(at(NULL, "sys", T0, &bn), BOUND_UNKNOWN);
}
END_TEST

START_TEST(bound_one_clock)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;
	int utc = -1;

	/* A bad line, a torn tail; no utc_offset event. */
	puts_file("# tapless-journal 1 host h2\n"
		  "100 sample phc2 SLAVE 5 300 1.5 gm 1 s2 1 77\n"
		  "200 sample phc2 SLAVE 5 300 1.5 gm 1 s2 x 77\n"
		  "300 sample phc2 SLAVE 5 300 1.5 gm 1 s2 0 77\n"
		  "400 event phc2 utc_offset not-a-number\n"
		  "500 sample phc2 SLAVE 5 300 1.5 gm 1 s2 1 88\n"
		  "600 sample phc2 SLAVE 5 300 1.5 gm");
	ck_assert_int_eq(bound_open(&b, path, 1000, err), 0);
	ck_assert_uint_eq(bound_samples(b), 3);
	ck_assert_uint_eq(bound_events(b), 1);
	ck_assert_uint_eq(bound_bad_lines(b), 1);
	ck_assert(bound_torn(b));
	ck_assert_int_eq(bound_utc_offset(b, &utc), -ENOENT);
	ck_assert_int_eq(utc, -1);
	char want[200];
	snprintf(want, sizeof(want), "%s:3: ", path);
	ck_assert_msg(!strncmp(bound_error(b), want, strlen(want)),
		      "error '%s'", bound_error(b));
	/* Any clock name falls back to the only one. */
	ck_assert_int_eq(at(b, "sys", 150, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 77);
	ck_assert_int_eq(at(b, "phc2", 250, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(at(b, "phc0", 350, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc2", 550, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 88);
	/* The torn 600 sample does not count. */
	ck_assert_int_eq(at(b, "phc2", 1501, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc2", 99, &bn), BOUND_OUT_OF_SYNC);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_missing)
{
	struct bound *b = (struct bound *)1;
	char err[JOURNAL_ERRBUF], missing[160];

	snprintf(missing, sizeof(missing), "%s/none", dir);
	ck_assert_int_eq(bound_open(&b, missing, S, err), -ENOENT);
	ck_assert_ptr_null(b);
	ck_assert_ptr_nonnull(strstr(err, missing));
	/* An empty journal vouches for nothing: out of sync. */
	puts_file("# tapless-journal 1 host h3\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	int64_t bn;
	ck_assert_int_eq(at(b, "sys", T0, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_uint_eq(bound_samples(b), 0);
	bound_destroy(b);
}
END_TEST

/* A line "TS sample CLOCK ... SYNC BOUND" (BOUND "-": none). */
static void put_sample(const char *ts, const char *clock, int sync,
		       const char *bound)
{
	char line[256];

	snprintf(line, sizeof(line), "%s sample %s SLAVE 5 300 1.5 gm 1 s2 %d %s\n",
		 ts, clock, sync, bound);
	puts_file(line);
}

START_TEST(bound_no_samples)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;
	int utc = -1;

	/* Events only: nothing vouches for any clock, named or not. */
	puts_file("# tapless-journal 1 host h4\n"
		  "5 event sys utc_offset 37\n"
		  "6 event - ptp4l_exit killed\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_uint_eq(bound_samples(b), 0);
	ck_assert_uint_eq(bound_events(b), 2);
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 37);
	ck_assert_int_eq(at(b, "sys", 6, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "phc9", 6, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", INT64_MAX, &bn), BOUND_OUT_OF_SYNC);
	bound_destroy(b);
	bound_destroy(NULL);
}
END_TEST

START_TEST(bound_utc_values)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int utc;

	/* The last good one wins; not a number, negative, 1000 and over,
	 * empty: ignored. */
	puts_file("1 event sys utc_offset 5\n"
		  "2 event sys utc_offset 7\n"
		  "3 event sys utc_offset x\n"
		  "4 event sys utc_offset -1\n"
		  "5 event sys utc_offset 1000\n"
		  "6 event sys utc_offset\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_uint_eq(bound_events(b), 6);
	utc = -5;
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 7);
	bound_destroy(b);
	/* The ends of the range. */
	unit_write_file(path, "1 event sys utc_offset 0\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	utc = -5;
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 0);
	bound_destroy(b);
	unit_write_file(path, "1 event sys utc_offset 999 (leap second due)\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 999);
	bound_destroy(b);
	unit_write_file(path, "1 event sys utc_offset 1000\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	utc = -5;
	ck_assert_int_eq(bound_utc_offset(b, &utc), -ENOENT);
	ck_assert_int_eq(utc, -5);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_max_age)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;

	put_sample("100", "phc0", 1, "5");
	put_sample("200", "phc0", 1, "6");
	/* max_age 0: only the sample's own instant. */
	ck_assert_int_eq(bound_open(&b, path, 0, err), 0);
	ck_assert_int_eq(at(b, "phc0", 100, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 5);
	ck_assert_int_eq(at(b, "phc0", 101, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "phc0", 200, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 6);
	bound_destroy(b);
	/* A negative max_age vouches for nothing. */
	ck_assert_int_eq(bound_open(&b, path, -1, err), 0);
	ck_assert_int_eq(at(b, "phc0", 100, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc0", 200, &bn), BOUND_OUT_OF_SYNC);
	bound_destroy(b);
	/* Exactly max_age old still counts, one ns more does not. */
	ck_assert_int_eq(bound_open(&b, path, 100, err), 0);
	ck_assert_int_eq(at(b, "phc0", 199, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 5);
	ck_assert_int_eq(at(b, "phc0", 300, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 6);
	ck_assert_int_eq(at(b, "phc0", 301, &bn), BOUND_OUT_OF_SYNC);
	bound_destroy(b);
}
END_TEST

/* The largest terms: times at both ends of int64_t, the largest bound and
 * max_age; an age of up to 2^64 - 2 ns must not wrap into "young". */
START_TEST(bound_largest)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;

	put_sample("-9223372036854775807", "sys", 1, "9223372036854775807");
	put_sample("0", "phc1", 1, "0");
	ck_assert_int_eq(bound_open(&b, path, INT64_MAX, err), 0);
	ck_assert_uint_eq(bound_samples(b), 2);
	ck_assert_int_eq(at(b, "sys", INT64_MIN + 1, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, INT64_MAX);
	/* Age INT64_MAX: in; INT64_MAX + 1 and 2^64 - 2: out. */
	ck_assert_int_eq(at(b, "sys", 0, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, INT64_MAX);
	ck_assert_int_eq(at(b, "sys", 1, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", INT64_MAX, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "sys", INT64_MIN, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "phc1", INT64_MAX, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 0);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_many_clocks)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF], clock[16], bound[16];
	int64_t bn;

	/* 17 clocks: the 17th is not kept, nor counted. */
	for (int i = 0; i < 17; i++) {
		snprintf(clock, sizeof(clock), "c%d", i);
		snprintf(bound, sizeof(bound), "%d", 100 + i);
		put_sample("10", clock, 1, bound);
	}
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_uint_eq(bound_samples(b), 16);
	ck_assert_int_eq(at(b, "c0", 10, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 100);
	ck_assert_int_eq(at(b, "c15", 10, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 115);
	ck_assert_int_eq(at(b, "c16", 10, &bn), BOUND_UNKNOWN);
	ck_assert_int_eq(bn, -1);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_order)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;

	/* Two samples at one instant: the later line counts. */
	put_sample("10", "sys", 1, "5");
	put_sample("10", "sys", 0, "-");
	put_sample("20", "sys", 1, "7");
	put_sample("20", "sys", 1, "8");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_int_eq(at(b, "sys", 10, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", 15, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", 20, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 8);
	bound_destroy(b);
	/* Out of time order, interleaved with another clock: sorted. */
	unit_write_file(path, "");
	put_sample("30", "sys", 1, "3");
	put_sample("25", "phc0", 1, "99");
	put_sample("10", "sys", 1, "1");
	put_sample("20", "sys", 1, "2");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_int_eq(at(b, "sys", 9, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(at(b, "sys", 15, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 1);
	ck_assert_int_eq(at(b, "sys", 25, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 2);
	ck_assert_int_eq(at(b, "sys", 35, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 3);
	ck_assert_int_eq(at(b, "phc0", 25, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 99);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_first_error)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF], want[200];

	puts_file("# tapless-journal 1 host h5\n"
		  "10 sample sys\n"
		  "20 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40\n"
		  "30 nonsense sys\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_uint_eq(bound_bad_lines(b), 2);
	ck_assert_uint_eq(bound_samples(b), 1);
	ck_assert(!bound_torn(b));
	ck_assert_str_eq(bound_host(b), "h5");
	snprintf(want, sizeof(want), "%s:2: ", path);
	ck_assert_msg(!strncmp(bound_error(b), want, strlen(want)),
		      "error '%s'", bound_error(b));
	bound_destroy(b);
}
END_TEST

static Suite *bound_suite(void)
{
	Suite *s = suite_create("bound");
	TCase *tc = tcase_create("bound");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, bound_two_clocks);
	tcase_add_test(tc, bound_one_clock);
	tcase_add_test(tc, bound_missing);
	tcase_add_test(tc, bound_no_samples);
	tcase_add_test(tc, bound_utc_values);
	tcase_add_test(tc, bound_max_age);
	tcase_add_test(tc, bound_largest);
	tcase_add_test(tc, bound_many_clocks);
	tcase_add_test(tc, bound_order);
	tcase_add_test(tc, bound_first_error);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(bound_suite)
