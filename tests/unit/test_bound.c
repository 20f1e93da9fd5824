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
 * first one named. Holdover samples (sync h) give BOUND_HOLDOVER with
 * their bound grown on to t at the drift_ppb of the clock's last rules
 * event before them (the default without one), out of sync past max_age. */
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

/* A clock phc2sys keeps (state "phc2sys"): its offsets read off stamps,
 * on the line between two fresh readings, the bound's share of them taken
 * out; a ptp4l clock's offsets (SLAVE), an out-of-sync reading and a
 * stale one are not used. phc1: readings a quarter second apart, offsets
 * 100, 300, -200, out of sync, 40; bound |offset| + 50. */
START_TEST(bound_offset_kept)
{
	static const int64_t off[] = { 100, 300, -200, 999, 40 };
	struct journal_writer *w;
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t o, part, bn;

	ck_assert_int_eq(journal_writer_open(&w, path, "h"), 0);
	for (int i = 0; i < 5; i++) {
		struct journal_sample s = sample(T0 + i * (S / 4), "phc1", 0);

		snprintf(s.state, sizeof(s.state), "phc2sys");
		s.offset_ns = off[i];
		s.in_sync = i != 3;
		s.bound_ns = (off[i] < 0 ? -off[i] : off[i]) + 50;
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
		s = sample(T0 + i * (S / 4), "phc0", 0);
		s.offset_ns = 77;
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	journal_writer_close(w);
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	/* At a reading: its offset, its |offset| out of the bound. */
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + S / 4, &o, &part), 0);
	ck_assert_int_eq(o, 300);
	ck_assert_int_eq(part, 300);
	ck_assert_int_eq(at(b, "phc1", T0 + S / 4, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn - part, 50);
	/* Halfway from 100 to 300: 200 on the line, 100 off the reading:
	 * 100 - 100 out of the bound. */
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + S / 8, &o, &part), 0);
	ck_assert_int_eq(o, 200);
	ck_assert_int_eq(part, 0);
	/* A quarter of the way from 300 to -200: 175, 125 off: 300 - 125. */
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + S / 4 + S / 16,
					 &o, &part), 0);
	ck_assert_int_eq(o, 175);
	ck_assert_int_eq(part, 175);
	/* Before an out-of-sync reading: the last reading's own, no line
	 * to it. */
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + S / 2 + S / 8,
					 &o, &part), 0);
	ck_assert_int_eq(o, -200);
	ck_assert_int_eq(part, 200);
	/* Out of sync, before the journal, ptp4l's clock, an unknown one,
	 * too old: none. */
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + 3 * S / 4 + 1, &o,
					 &part), -ENOENT);
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 - 1, &o, &part), -ENOENT);
	ck_assert_int_eq(bound_offset_at(b, "phc0", T0 + S / 8, &o, &part),
			 -ENOENT);
	ck_assert_int_eq(bound_offset_at(b, "sys", T0 + S / 8, &o, &part),
			 -ENOENT);
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + S + 1, &o, &part), 0);
	ck_assert_int_eq(o, 40);
	ck_assert_int_eq(bound_offset_at(b, "phc1", T0 + 2 * S + 1, &o,
					 &part), -ENOENT);
	bound_destroy(b);
}
END_TEST

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

/* Following a journal that grows (bound_refresh), and forgetting behind a
 * watermark (bound_forget). */

/* Append len bytes to file f. */
static void append(const char *f, const char *bytes, size_t len)
{
	int fd = open(f, O_WRONLY | O_CREAT | O_APPEND, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
}

static void append_str(const char *f, const char *text)
{
	append(f, text, strlen(text));
}

/* "TS sample CLOCK ... SYNC BOUND\n" into buf; returns its length. */
static int sample_line(char *buf, size_t len, int64_t ts, const char *clock,
		       int sync, int64_t bound)
{
	char bs[24];

	if (bound < 0)
		snprintf(bs, sizeof(bs), "-");
	else
		snprintf(bs, sizeof(bs), "%lld", (long long)bound);
	return snprintf(buf, len, "%lld sample %s SLAVE 5 300 1.5 gm 1 s2 %d %s\n",
			(long long)ts, clock, sync, bs);
}

/* A journal of about 14 KB into buf: the header, sys and phc0 sampled
 * each second for 120 s, with out-of-sync stretches, gaps longer than
 * max_age, late lines (a phc0 sample 5 s old, a sys sample at the instant
 * of the one before it, the later line counting), bad lines (one over
 * 1024 bytes), utc_offset events, and a torn last line. */
static size_t journal_text(char *buf, size_t cap)
{
	size_t n = 0;

	n += snprintf(buf + n, cap - n, "# tapless-journal 1 host follow1\n"
		      "# time_ns sample clock ...\n"
		      "%lld event sys utc_offset 36\n", (long long)T0);
	for (int i = 0; i < 120; i++) {
		int64_t t = T0 + i * S;

		if (i < 30 || i >= 36)
			n += sample_line(buf + n, cap - n, t, "sys",
					 i % 17 != 3, 1000 + i);
		if (i < 70 || i >= 74)
			n += sample_line(buf + n, cap - n, t + 7, "phc0",
					 i < 50 || i >= 55,
					 i % 11 == 5 ? -1 : 20 + i);
		if (i == 40)
			n += sample_line(buf + n, cap - n, T0 + 35 * S + 7,
					 "phc0", 0, 5);
		if (i == 60)
			n += sample_line(buf + n, cap - n, t, "sys", 0, 9);
		if (i == 80)
			n += snprintf(buf + n, cap - n, "%lld sample sys\n",
				      (long long)t);
		if (i == 90) {
			memset(buf + n, 'x', 1500);
			n += 1500;
			buf[n++] = '\n';
		}
		if (i == 100)
			n += snprintf(buf + n, cap - n,
				      "%lld event sys utc_offset 37\n",
				      (long long)t);
	}
	n += snprintf(buf + n, cap - n, "%lld sample phc0 SLAVE 5",
		      (long long)(T0 + 120 * S));
	ck_assert_uint_lt(n, cap);
	return n;
}

/* Both give the same answer at every moment of interest from "from" on:
 * every sample's time and the ns around it, half a second on, and the
 * edges of max_age (2.5 s). */
static void same_answers(const struct bound *want, const struct bound *got,
			 int64_t from)
{
	static const char *const clocks[] = { "sys", "phc0", "phc9" };
	static const int64_t d[] = { -1, 0, 1, S / 2, 5 * S / 2,
				     5 * S / 2 + 1, 5 * S / 2 + 8 };

	for (int64_t i = -2; i < 130; i++)
		for (size_t k = 0; k < sizeof(d) / sizeof(d[0]); k++)
			for (int c = 0; c < 3; c++) {
				int64_t t = T0 + i * S + d[k], bw, bg;
				enum bound_state sw, sg;

				if (t < from)
					continue;
				sw = at(want, clocks[c], t, &bw);
				sg = at(got, clocks[c], t, &bg);
				ck_assert_msg(sw == sg && bw == bg,
					      "%s at T0%+lld: state %d bound %lld, "
					      "want %d %lld", clocks[c],
					      (long long)(t - T0), sg,
					      (long long)bg, sw, (long long)bw);
			}
}

/* The message of the first bad line, without its path. */
static const char *first_error(const struct bound *b, const char *file)
{
	const char *e = bound_error(b);

	ck_assert_msg(!strncmp(e, file, strlen(file)), "error '%s'", e);
	return e + strlen(file);
}

START_TEST(bound_follow_pieces)
{
	static char text[32768];
	char err[JOURNAL_ERRBUF], full[160];
	struct bound *want, *b;
	size_t len = journal_text(text, sizeof(text)), off = 0;
	uint32_t seed = 12345;
	int got = 0, ret, utc;

	snprintf(full, sizeof(full), "%s/full.journal", dir);
	append(full, text, len);
	ck_assert_int_eq(bound_open(&want, full, 5 * S / 2, err), 0);
	ck_assert_uint_eq(bound_samples(want), 114 + 116 + 2);
	ck_assert_uint_eq(bound_bad_lines(want), 2);
	ck_assert(bound_torn(want));

	/* The same bytes appended in pieces of 1 to 97 bytes, most lines
	 * cut somewhere, read after each piece. */
	append(path, "", 0);
	ck_assert_int_eq(bound_open(&b, path, 5 * S / 2, err), 0);
	ck_assert_uint_eq(bound_samples(b), 0);
	while (off < len) {
		size_t piece;

		seed = seed * 1103515245 + 12345;
		piece = 1 + (seed >> 16) % 97;
		if (piece > len - off)
			piece = len - off;
		append(path, text + off, piece);
		off += piece;
		ret = bound_refresh(b, err);
		ck_assert_msg(ret >= 0, "refresh: %d %s", ret, err);
		got += ret;
		/* What is read is only ever what is whole. */
		ck_assert_uint_le(bound_samples(b), bound_samples(want));
	}
	ck_assert_int_eq(got, (int)bound_samples(want));
	ck_assert_uint_eq(bound_samples(b), bound_samples(want));
	ck_assert_uint_eq(bound_kept(b), bound_samples(want));
	ck_assert_uint_eq(bound_events(b), bound_events(want));
	ck_assert_uint_eq(bound_bad_lines(b), bound_bad_lines(want));
	ck_assert_str_eq(first_error(b, path), first_error(want, full));
	ck_assert(bound_torn(b));
	ck_assert_str_eq(bound_host(b), "follow1");
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 37);
	same_answers(want, b, INT64_MIN);

	/* Nothing appended: nothing read, nothing read twice. */
	ck_assert_int_eq(bound_refresh(b, err), 0);
	ck_assert_uint_eq(bound_samples(b), bound_samples(want));
	/* The torn tail completed: one more sample, no bad line. */
	append_str(path, " 300 1.5 gm 1 s2 1 66\n");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert(!bound_torn(b));
	ck_assert_uint_eq(bound_bad_lines(b), 2);
	int64_t bn;
	ck_assert_int_eq(at(b, "phc0", T0 + 121 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 66);
	bound_destroy(b);
	bound_destroy(want);
}
END_TEST

/* A sample older than the newest of its clock, brought by a refresh, is
 * sorted in as bound_open() of the whole file would have it; of two
 * lines at one instant the later still counts. */
START_TEST(bound_follow_late)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn, t;

	put_sample("100", "sys", 1, "1");
	put_sample("300", "sys", 1, "3");
	ck_assert_int_eq(bound_open(&b, path, 1000, err), 0);
	put_sample("200", "sys", 1, "2");
	put_sample("300", "sys", 0, "-");
	ck_assert_int_eq(bound_refresh(b, err), 2);
	ck_assert_int_eq(at(b, "sys", 250, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 2);
	ck_assert_int_eq(at(b, "sys", 150, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 1);
	ck_assert_int_eq(at(b, "sys", 300, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bound_newest(b, "sys", &t), 0);
	ck_assert_int_eq(t, 300);
	put_sample("50", "sys", 1, "0");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert_int_eq(at(b, "sys", 60, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 0);
	ck_assert_int_eq(bound_newest(b, "sys", &t), 0);
	ck_assert_int_eq(t, 300);
	bound_destroy(b);
}
END_TEST

/* The file truncated in place and written again from its header: read
 * from its beginning, the samples of the first kept. */
START_TEST(bound_follow_truncate)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn;

	puts_file("# tapless-journal 1 host before\n");
	for (int i = 0; i < 20; i++) {
		char ts[24];

		snprintf(ts, sizeof(ts), "%d", 100 * i);
		put_sample(ts, "sys", 1, "5");
	}
	ck_assert_int_eq(bound_open(&b, path, 150, err), 0);
	ck_assert_uint_eq(bound_samples(b), 20);
	unit_write_file(path, "# tapless-journal 1 host after\n"
			"5000 sample sys SLAVE 5 300 1.5 gm 1 s2 1 6\n");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert_str_eq(bound_host(b), "after");
	ck_assert_uint_eq(bound_bad_lines(b), 0);
	ck_assert_uint_eq(bound_samples(b), 21);
	ck_assert_int_eq(at(b, "sys", 5100, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 6);
	ck_assert_int_eq(at(b, "sys", 1950, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 5);
	ck_assert_int_eq(at(b, "sys", 3000, &bn), BOUND_OUT_OF_SYNC);
	/* And it goes on from there. */
	put_sample("5100", "sys", 1, "7");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert_int_eq(at(b, "sys", 5100, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 7);
	bound_destroy(b);
}
END_TEST

/* Rotation as tapless-syncd does it (journal_writer_rotate: rename, new
 * file with its header), then a file renamed over the path: the file held
 * is read to its end (what was written to it after the last refresh,
 * although it has another name or none), then the new one from its
 * header. */
START_TEST(bound_follow_rotate)
{
	struct journal_writer *w;
	struct journal_sample s;
	struct bound *b;
	char err[JOURNAL_ERRBUF], rotated[256], tmp[160], line[128];
	int64_t bn, t;
	int fd;

	ck_assert_int_eq(journal_writer_open(&w, path, "rot1"), 0);
	for (int i = 0; i < 10; i++) {
		s = sample(T0 + i * S, "phc0", i);
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(bound_open(&b, path, 3 * S / 2, err), 0);
	ck_assert_uint_eq(bound_samples(b), 10);
	for (int i = 10; i < 15; i++) {
		s = sample(T0 + i * S, "phc0", i);
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(journal_writer_rotate(w, T0 + 15 * S, 0, rotated,
					       sizeof(rotated)), 0);
	for (int i = 15; i < 18; i++) {
		s = sample(T0 + i * S, "phc0", i);
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(bound_refresh(b, err), 5 + 3);
	ck_assert_uint_eq(bound_bad_lines(b), 0);
	for (int i = 0; i < 18; i++) {
		ck_assert_int_eq(at(b, "phc0", T0 + i * S + S / 2, &bn),
				 BOUND_IN_SYNC);
		ck_assert_int_eq(bn, 40 + i);
	}
	ck_assert_int_eq(bound_newest(b, "phc0", &t), 0);
	ck_assert_int_eq(t, T0 + 17 * S);
	/* The rotated file is not read again. */
	append_str(rotated, "9 sample phc0 SLAVE 5 300 1.5 gm 1 s2 1 1\n");
	ck_assert_int_eq(bound_refresh(b, err), 0);

	/* Renamed over: the writer's file (held) gets two more lines after
	 * the rename, then the writer moves on to the new file. */
	snprintf(tmp, sizeof(tmp), "%s/new.journal", dir);
	append_str(tmp, "# tapless-journal 1 host rot2\n");
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(rename(tmp, path), 0);
	s = sample(T0 + 18 * S, "phc0", 18);
	ck_assert_int_eq(journal_write_sample(w, &s), 0);
	s = sample(T0 + 19 * S, "phc0", 19);
	ck_assert_int_eq(journal_write_sample(w, &s), 0);
	journal_writer_close(w);
	close(fd);
	append_str(path, "# a comment\n");
	sample_line(line, sizeof(line), T0 + 20 * S, "phc0", 1, 60);
	puts_file(line);
	ck_assert_int_eq(bound_refresh(b, err), 3);
	ck_assert_str_eq(bound_host(b), "rot2");
	ck_assert_uint_eq(bound_bad_lines(b), 0);
	ck_assert_int_eq(at(b, "phc0", T0 + 19 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 59);
	ck_assert_int_eq(at(b, "phc0", T0 + 20 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 60);
	bound_destroy(b);
}
END_TEST

/* The path removed: -ENOENT while it is gone, the file held still read to
 * its end (a writer may still hold it too); recreated: read from its
 * beginning. */
START_TEST(bound_follow_removed)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF], want[200];
	int64_t bn, t;
	int fd;

	put_sample("100", "sys", 1, "1");
	ck_assert_int_eq(bound_open(&b, path, 100, err), 0);
	fd = open(path, O_WRONLY | O_APPEND);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unlink(path), 0);
	const char *line = "200 sample sys SLAVE 5 300 1.5 gm 1 s2 1 2\n";
	ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
	close(fd);
	err[0] = '\0';
	ck_assert_int_eq(bound_refresh(b, err), -ENOENT);
	snprintf(want, sizeof(want), "%s: ", path);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "err '%s'", err);
	ck_assert_uint_eq(bound_samples(b), 2);
	ck_assert_int_eq(at(b, "sys", 250, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 2);
	ck_assert_int_eq(bound_refresh(b, err), -ENOENT);
	ck_assert_uint_eq(bound_samples(b), 2);
	/* Back, with another clock. */
	put_sample("300", "phc1", 1, "3");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert_int_eq(at(b, "phc1", 300, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 3);
	ck_assert_int_eq(at(b, "sys", 300, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 2);
	/* Two clocks now: no falling back to the only one. */
	ck_assert_int_eq(bound_newest(b, "phc0", &t), -ENOENT);
	ck_assert_int_eq(bound_newest(b, "sys", &t), 0);
	ck_assert_int_eq(t, 200);
	put_sample("400", "phc1", 1, "4");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	ck_assert_int_eq(bound_newest(b, "phc1", &t), 0);
	ck_assert_int_eq(t, 400);
	bound_destroy(b);
}
END_TEST

START_TEST(bound_newest_clock)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t t = 12345;

	puts_file("# tapless-journal 1 host h6\n5 event sys utc_offset 37\n");
	ck_assert_int_eq(bound_open(&b, path, S, err), 0);
	ck_assert_int_eq(bound_newest(b, "sys", &t), -ENOENT);
	ck_assert_int_eq(t, 12345);
	put_sample("10", "phc2", 1, "5");
	ck_assert_int_eq(bound_refresh(b, err), 1);
	/* The only clock stands in for any. */
	ck_assert_int_eq(bound_newest(b, "sys", &t), 0);
	ck_assert_int_eq(t, 10);
	ck_assert_int_eq(bound_newest(NULL, "sys", &t), -ENOENT);
	bound_destroy(b);
}
END_TEST

/* After a forget, every lookup at or after the cut is answered as before
 * it, whether the cut falls on a sample, between two, in a gap longer
 * than max_age, before a clock's first sample or after its last. */
START_TEST(bound_forget_cuts)
{
	static char text[32768];
	static const int64_t cuts[] = {
		INT64_MIN, T0 - S, T0, T0 + 7, T0 + 8, T0 + 10 * S + S / 2,
		T0 + 33 * S, T0 + 35 * S + 7, T0 + 72 * S, T0 + 119 * S + 7,
		T0 + 200 * S, INT64_MAX,
	};
	char err[JOURNAL_ERRBUF];
	struct bound *want, *b;
	size_t len = journal_text(text, sizeof(text));
	unsigned kept;

	append(path, text, len);
	ck_assert_int_eq(bound_open(&want, path, 5 * S / 2, err), 0);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		ck_assert_int_eq(bound_open(&b, path, 5 * S / 2, err), 0);
		bound_forget(b, cuts[i]);
		same_answers(want, b, cuts[i]);
		/* Forgetting again at the same cut changes nothing. */
		kept = bound_kept(b);
		bound_forget(b, cuts[i]);
		ck_assert_uint_eq(bound_kept(b), kept);
		bound_destroy(b);
	}
	/* Cut after cut, each later, on one bound. */
	ck_assert_int_eq(bound_open(&b, path, 5 * S / 2, err), 0);
	for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
		bound_forget(b, cuts[i]);
		same_answers(want, b, cuts[i]);
	}
	/* Only the last sample of each clock is left; what was read is
	 * still counted, and the utc_offset still holds. */
	ck_assert_uint_eq(bound_kept(b), 2);
	ck_assert_uint_eq(bound_samples(b), bound_samples(want));
	int utc = 0;
	ck_assert_int_eq(bound_utc_offset(b, &utc), 0);
	ck_assert_int_eq(utc, 37);
	bound_destroy(b);
	bound_destroy(want);
}
END_TEST

/* Following for 2,000 s, sys and phc0 sampled each second, forgetting
 * 10 s behind: what is kept stays at 10 s of samples and the one before,
 * per clock, however long it runs. */
START_TEST(bound_forget_memory)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF], line[128];
	int64_t bn;

	puts_file("# tapless-journal 1 host mem\n");
	ck_assert_int_eq(bound_open(&b, path, 3 * S / 2, err), 0);
	for (int i = 0; i < 2000; i++) {
		int64_t t = T0 + i * S;

		sample_line(line, sizeof(line), t, "sys", 1, i);
		puts_file(line);
		sample_line(line, sizeof(line), t + 1, "phc0", 1, i + 1);
		puts_file(line);
		ck_assert_int_eq(bound_refresh(b, err), 2);
		bound_forget(b, t - 10 * S);
		ck_assert_uint_le(bound_kept(b), 2 * (10 + 1 + 1));
		/* phc0's samples are 1 ns after sys's: the first at or
		 * before the cut comes in at i = 11. */
		ck_assert_int_eq(at(b, "phc0", t - 10 * S, &bn),
				 (i < 11 ? BOUND_OUT_OF_SYNC : BOUND_IN_SYNC));
		ck_assert_int_eq(at(b, "sys", t, &bn), BOUND_IN_SYNC);
		ck_assert_int_eq(bn, i);
	}
	ck_assert_uint_eq(bound_samples(b), 4000);
	bound_destroy(b);
}
END_TEST

/* Holdover (sync h): phc0 has a rules event drift_ppb=1000, in-sync
 * samples a second apart with bound 50 for [0, 10) s, holdover samples
 * for [10, 15) s whose bounds grow (as a writer grows them: 50 + 1000 ns
 * per second since the last fresh one), out of sync for [15, 17) s, in
 * sync again from 17 s. sys has no rules event: its holdover sample at
 * 10 s grows by the default drift. The last phc0 sample, at 30 s, is in
 * holdover again after a second rules event (drift_ppb=7000). */
#define HOLD_FRESH 50
#define HOLD_DRIFT 1000
#define HOLD_DRIFT2 7000

static int64_t hold_bound(int i)
{
	return HOLD_FRESH + (int64_t)(i - 9) * HOLD_DRIFT;
}

/* ceil(age * drift / 1e9), in integers. */
static int64_t grown(int64_t age, int64_t drift)
{
	return (age * drift + S - 1) / S;
}

static void write_holdover(void)
{
	struct journal_writer *w;

	ck_assert_int_eq(journal_writer_open(&w, path, "algo1"), 0);
	ck_assert_int_eq(journal_write_event(w, T0 - S, "phc0", "rules",
					     "drift_ppb=1000 threshold_ns=4500"), 0);
	for (int i = 0; i < 25; i++) {
		struct journal_sample s = sample(T0 + i * S, "phc0", 0);

		s.in_sync = i < 10 || i >= 17;
		s.holdover = i >= 10 && i < 15;
		s.bound_ns = s.holdover ? hold_bound(i) :
			     s.in_sync ? HOLD_FRESH : JOURNAL_NONE;
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(journal_write_event(w, T0 + 29 * S, "phc0", "rules",
					     "drift_ppb=7000"), 0);
	struct journal_sample h = sample(T0 + 30 * S, "phc0", 0);

	h.in_sync = false;
	h.holdover = true;
	h.bound_ns = 900;
	ck_assert_int_eq(journal_write_sample(w, &h), 0);
	for (int i = 0; i < 12; i++) {
		struct journal_sample s = sample(T0 + i * S, "sys", 0);

		s.in_sync = i != 10;
		s.holdover = i == 10;
		s.bound_ns = i == 10 ? 300 : 100;
		ck_assert_int_eq(journal_write_sample(w, &s), 0);
	}
	journal_writer_close(w);
}

START_TEST(bound_holdover)
{
	struct bound *b;
	char err[JOURNAL_ERRBUF];
	int64_t bn, prev = 0;

	write_holdover();
	ck_assert_int_eq(bound_open(&b, path, 5 * S / 2, err), 0);
	ck_assert_uint_eq(bound_samples(b), 25 + 1 + 12);
	ck_assert_uint_eq(bound_holdover_samples(b), 5 + 1 + 1);
	ck_assert_uint_eq(bound_bad_lines(b), 0);
	/* Fresh: the sample's bound as it is. */
	ck_assert_int_eq(at(b, "phc0", T0 + 9 * S + S / 2, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, HOLD_FRESH);
	/* At a holdover sample's own time: its bound. */
	ck_assert_int_eq(at(b, "phc0", T0 + 10 * S, &bn), BOUND_HOLDOVER);
	ck_assert_int_eq(bn, hold_bound(10));
	/* Grown on from it, rounded up: 7 ns past half a second is 500.000007
	 * ns at 1000 ppb, 501. */
	ck_assert_int_eq(at(b, "phc0", T0 + 10 * S + S / 2 + 7, &bn),
			 BOUND_HOLDOVER);
	ck_assert_int_eq(bn, hold_bound(10) + grown(S / 2 + 7, HOLD_DRIFT));
	ck_assert_int_eq(bn, hold_bound(10) + 501);
	/* Through the outage, in steps of 0.1 s: never below the last fresh
	 * bound, never shrinking, exactly the sample's grown on. */
	for (int64_t t = T0 + 10 * S; t < T0 + 15 * S; t += S / 10) {
		int i = (int)((t - T0) / S);

		ck_assert_int_eq(at(b, "phc0", t, &bn), BOUND_HOLDOVER);
		ck_assert_int_eq(bn, hold_bound(i) +
				 grown(t - (T0 + i * S), HOLD_DRIFT));
		ck_assert_int_gt(bn, HOLD_FRESH);
		ck_assert_int_ge(bn, prev);
		prev = bn;
	}
	/* The journal says 0: out of sync, no bound. */
	ck_assert_int_eq(at(b, "phc0", T0 + 15 * S, &bn), BOUND_OUT_OF_SYNC);
	ck_assert_int_eq(bn, -1);
	ck_assert_int_eq(at(b, "phc0", T0 + 17 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, HOLD_FRESH);
	/* The drift of the last rules event before the sample. */
	ck_assert_int_eq(at(b, "phc0", T0 + 31 * S, &bn), BOUND_HOLDOVER);
	ck_assert_int_eq(bn, 900 + grown(S, HOLD_DRIFT2));
	/* Older than max_age: out of sync, holdover or not. */
	ck_assert_int_eq(at(b, "phc0", T0 + 30 * S + 5 * S / 2, &bn),
			 BOUND_HOLDOVER);
	ck_assert_int_eq(bn, 900 + grown(5 * S / 2, HOLD_DRIFT2));
	ck_assert_int_eq(at(b, "phc0", T0 + 30 * S + 5 * S / 2 + 1, &bn),
			 BOUND_OUT_OF_SYNC);
	/* Split: the clock's part is the fresh bound the outage began from,
	 * the rest what holdover grew; in sync, all the clock's. */
	{
		int64_t fresh;

		ck_assert_int_eq(bound_at_split(b, "phc0", T0 + 12 * S + S / 2,
						&bn, &fresh), BOUND_HOLDOVER);
		ck_assert_int_eq(bn, hold_bound(12) + grown(S / 2, HOLD_DRIFT));
		ck_assert_int_eq(fresh, HOLD_FRESH);
		ck_assert_int_eq(bound_at_split(b, "phc0", T0 + 9 * S, &bn,
						&fresh), BOUND_IN_SYNC);
		ck_assert_int_eq(bn, HOLD_FRESH);
		ck_assert_int_eq(fresh, HOLD_FRESH);
		/* The second holdover began from the in-sync samples of
		 * [17, 25) s. */
		ck_assert_int_eq(bound_at_split(b, "phc0", T0 + 30 * S + S,
						&bn, &fresh), BOUND_HOLDOVER);
		ck_assert_int_eq(fresh, HOLD_FRESH);
		ck_assert_int_eq(bn, 900 + grown(S, HOLD_DRIFT2));
		/* sys's holdover at 10 s began from its in-sync 100 ns. */
		ck_assert_int_eq(bound_at_split(b, "sys", T0 + 10 * S, &bn,
						&fresh), BOUND_HOLDOVER);
		ck_assert_int_eq(bn, 300);
		ck_assert_int_eq(fresh, 100);
		/* Out of sync: neither. */
		ck_assert_int_eq(bound_at_split(b, "phc0", T0 + 15 * S, &bn,
						&fresh), BOUND_OUT_OF_SYNC);
		ck_assert_int_eq(bn, -1);
		ck_assert_int_eq(fresh, -1);
	}
	/* No rules event for sys: the default drift. */
	ck_assert_int_eq(at(b, "sys", T0 + 10 * S + S / 4, &bn), BOUND_HOLDOVER);
	ck_assert_int_eq(bn, 300 + grown(S / 4, BOUND_DEFAULT_DRIFT_PPB));
	ck_assert_int_eq(at(b, "sys", T0 + 11 * S, &bn), BOUND_IN_SYNC);
	ck_assert_int_eq(bn, 100);
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
	tcase_add_test(tc, bound_follow_pieces);
	tcase_add_test(tc, bound_follow_late);
	tcase_add_test(tc, bound_follow_truncate);
	tcase_add_test(tc, bound_follow_rotate);
	tcase_add_test(tc, bound_follow_removed);
	tcase_add_test(tc, bound_newest_clock);
	tcase_add_test(tc, bound_forget_cuts);
	tcase_add_test(tc, bound_forget_memory);
	tcase_add_test(tc, bound_holdover);
	tcase_add_test(tc, bound_offset_kept);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(bound_suite)
