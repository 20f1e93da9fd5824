/* test_journal.c — the sync journal: what the writer writes the reader
 * reads back field for field ("-" for unknown values too); a torn last line
 * is dropped, not reported; a bad line is reported as PATH:LINE and the
 * lines after it still read; a reader follows a growing file, reading a
 * torn line again once it is whole. Reading bounds back (ptp/bound.c) is
 * test_bound.c's. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ptp/journal.h"
#include "unit.h"

#define S 1000000000LL
#define T0 1700000000000000000LL

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "journal");
	snprintf(path, sizeof(path), "%s/sync.journal", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* Append raw bytes to path. */
static void put(const char *bytes, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, bytes, len), (ssize_t)len);
	close(fd);
}

static void puts_file(const char *s)
{
	put(s, strlen(s));
}

static struct journal_sample sample(int64_t ts, const char *clock, int i)
{
	struct journal_sample s = {
		.ts_ns = ts, .offset_ns = -17 * i, .delay_ns = 300 + i,
		.freq_ppb = -1234.5 + i * 0.125, .steps = i % 3,
		.in_sync = i % 2, .bound_ns = 40 + i,
		.gm_class = i % 4 ? 6 + i : 0,
	};

	snprintf(s.clock, sizeof(s.clock), "%s", clock);
	snprintf(s.state, sizeof(s.state), "%s", i % 2 ? "SLAVE" : "UNCALIBRATED");
	snprintf(s.gm, sizeof(s.gm), "001122.fffe.33445%d", i % 10);
	snprintf(s.servo, sizeof(s.servo), "s%d", i % 3);
	return s;
}

static void expect_sample(const struct journal_record *r,
			  const struct journal_sample *w)
{
	const struct journal_sample *s = &r->sample;

	ck_assert_int_eq(r->type, JOURNAL_SAMPLE);
	ck_assert_int_eq(s->ts_ns, w->ts_ns);
	ck_assert_str_eq(s->clock, w->clock[0] ? w->clock : "-");
	ck_assert_str_eq(s->state, w->state[0] ? w->state : "-");
	ck_assert_int_eq(s->offset_ns, w->offset_ns);
	ck_assert_int_eq(s->delay_ns, w->delay_ns);
	if (isnan(w->freq_ppb))
		ck_assert(isnan(s->freq_ppb));
	else
		ck_assert_double_eq(s->freq_ppb, w->freq_ppb);
	ck_assert_str_eq(s->gm, w->gm[0] ? w->gm : "-");
	ck_assert_int_eq(s->steps, w->steps);
	ck_assert_str_eq(s->servo, w->servo[0] ? w->servo : "-");
	ck_assert_int_eq(s->in_sync, w->in_sync);
	ck_assert_int_eq(s->holdover, w->holdover);
	ck_assert_int_eq(s->bound_ns, w->bound_ns);
	ck_assert_int_eq(s->gm_class, w->gm_class);
}

static void expect_event(const struct journal_record *r, int64_t ts,
			 const char *clock, const char *name, const char *text)
{
	ck_assert_int_eq(r->type, JOURNAL_EVENT);
	ck_assert_int_eq(r->event.ts_ns, ts);
	ck_assert_str_eq(r->event.clock, clock);
	ck_assert_str_eq(r->event.name, name);
	ck_assert_str_eq(r->event.text, text);
}

START_TEST(round_trip)
{
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	struct journal_sample s[6];
	char err[JOURNAL_ERRBUF];

	ck_assert_int_eq(journal_writer_open(&w, path, "algo1"), 0);
	for (int i = 0; i < 4; i++) {
		s[i] = sample(T0 + i * S, i % 2 ? "phc0" : "sys", i);
		ck_assert_int_eq(journal_write_sample(w, &s[i]), 0);
	}
	ck_assert_int_eq(journal_write_event(w, T0 + 5, "phc0", "port_state",
					     "UNCALIBRATED to SLAVE on\nMASTER_CLOCK_SELECTED"), 0);
	ck_assert_int_eq(journal_write_event(w, T0 + 6, NULL, "ptp4l_exit", NULL), 0);
	journal_writer_close(w);
	/* Reopened for appending: no second header. */
	ck_assert_int_eq(journal_writer_open(&w, path, "other"), 0);
	/* Every value unknown. */
	memset(&s[4], 0, sizeof(s[4]));
	s[4].ts_ns = -5;	/* before 1970: still a time */
	snprintf(s[4].clock, sizeof(s[4].clock), "phc12");
	s[4].offset_ns = s[4].delay_ns = s[4].bound_ns = JOURNAL_NONE;
	s[4].freq_ppb = NAN;
	s[4].steps = -1;
	ck_assert_int_eq(journal_write_sample(w, &s[4]), 0);
	/* Extremes that still fit. */
	s[5] = sample(INT64_MAX, "sys", 1);
	s[5].offset_ns = INT64_MIN + 1;
	s[5].delay_ns = INT64_MAX;
	s[5].steps = 255;
	s[5].freq_ppb = 99999999.875;
	ck_assert_int_eq(journal_write_sample(w, &s[5]), 0);
	ck_assert_int_eq(journal_write_event(w, T0 + 7, "sys", "utc_offset", "37"), 0);
	journal_writer_close(w);

	ck_assert_int_eq(journal_open(&r, path, err), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(journal_next(r, &rec), 1);
		expect_sample(&rec, &s[i]);
	}
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, T0 + 5, "phc0", "port_state",
		     "UNCALIBRATED to SLAVE on MASTER_CLOCK_SELECTED");
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, T0 + 6, "-", "ptp4l_exit", "");
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_sample(&rec, &s[4]);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_sample(&rec, &s[5]);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, T0 + 7, "sys", "utc_offset", "37");
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_str_eq(journal_host(r), "algo1");
	ck_assert_uint_eq(journal_bad_lines(r), 0);
	ck_assert(!journal_torn(r));
	journal_close(r);
}
END_TEST

START_TEST(format_and_host)
{
	struct journal_sample s = sample(T0, "sys", 1);
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	char buf[256], err[JOURNAL_ERRBUF];
	int n;

	n = journal_format_sample(buf, sizeof(buf), &s);
	ck_assert_int_gt(n, 0);
	ck_assert_uint_eq(strlen(buf), (size_t)n);
	ck_assert_str_eq(buf, "1700000000000000000 sample sys SLAVE -17 301 "
			 "-1234.375 001122.fffe.334451 1 s1 1 41 7\n");
	ck_assert_int_eq(journal_format_sample(buf, (unsigned)n, &s), -ENOSPC);
	/* No host: the header says "-", the reader gives "". */
	ck_assert_int_eq(journal_writer_open(&w, path, NULL), 0);
	ck_assert_int_eq(journal_write_sample(w, &s), 0);
	journal_writer_close(w);
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	ck_assert_str_eq(journal_host(r), "");
	journal_close(r);
	/* A missing file: -ENOENT, the path named. */
	char missing[160];
	snprintf(missing, sizeof(missing), "%s/none", dir);
	ck_assert_int_eq(journal_open(&r, missing, err), -ENOENT);
	ck_assert_ptr_null(r);
	ck_assert_ptr_nonnull(strstr(err, missing));
	ck_assert_int_eq(journal_writer_open(&w, "/nonexistent-dir/j", "h"), -ENOENT);
}
END_TEST

START_TEST(torn_last_line)
{
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF];
	struct journal_sample s = sample(T0, "sys", 3);

	ck_assert_int_eq(journal_writer_open(&w, path, "h"), 0);
	ck_assert_int_eq(journal_write_sample(w, &s), 0);
	journal_writer_close(w);
	/* A crash in the middle of the next line: a whole-looking sample
	 * without its newline is still torn. */
	puts_file("1700000001000000000 sample sys SLAVE -3 300 1.000 - 1 s2 1 40");
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_sample(&rec, &s);
	ck_assert(!journal_torn(r));
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(journal_torn(r));
	ck_assert_uint_eq(journal_bad_lines(r), 0);
	ck_assert_str_eq(journal_error(r), "");
	journal_close(r);
}
END_TEST

static void expect_bad(struct journal_reader *r, unsigned line)
{
	struct journal_record rec;
	char want[256];

	snprintf(want, sizeof(want), "%s:%u: ", path, line);
	ck_assert_int_eq(journal_next(r, &rec), -EBADMSG);
	ck_assert_msg(!strncmp(journal_error(r), want, strlen(want)),
		      "error '%s', want '%s...'", journal_error(r), want);
	ck_assert_uint_gt(strlen(journal_error(r)), strlen(want));
}

/* The daemon restarted after the crash: its first line must not be glued
 * to the torn one. The torn line becomes one bad line, reported. */
START_TEST(reopen_after_torn)
{
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF];
	struct journal_sample a = sample(T0, "sys", 1), b = sample(T0 + S, "sys", 2);

	ck_assert_int_eq(journal_writer_open(&w, path, "h"), 0);
	ck_assert_int_eq(journal_write_sample(w, &a), 0);
	journal_writer_close(w);
	puts_file("1700000000500000000 sample sys SLA");
	ck_assert_int_eq(journal_writer_open(&w, path, "h"), 0);
	ck_assert_int_eq(journal_write_sample(w, &b), 0);
	journal_writer_close(w);
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_sample(&rec, &a);
	expect_bad(r, 4);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_sample(&rec, &b);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(!journal_torn(r));
	journal_close(r);
}
END_TEST

static unsigned count_rotated(void)
{
	char cmd[256];
	unsigned n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls %s | grep -c '^sync.journal\\.'", dir);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%u", &n), 1);
	pclose(f);
	return n;
}

/* Rotation renames the file to PATH.STAMP, starts PATH with a header,
 * keeps the newest `keep`, and loses no line. */
START_TEST(rotate)
{
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF], old[256], first[256] = "";
	uint64_t size;

	ck_assert_int_eq(journal_writer_open(&w, path, "h"), 0);
	for (int i = 0; i < 5; i++) {
		struct journal_sample s = sample(T0 + i * 3600 * S, "sys", i);

		ck_assert_int_eq(journal_write_sample(w, &s), 0);
		size = journal_writer_size(w);
		ck_assert_uint_gt(size, 100);
		ck_assert_int_eq(journal_writer_rotate(w, s.ts_ns, 3, old,
						       sizeof(old)), 0);
		if (!i)
			snprintf(first, sizeof(first), "%s", old);
		ck_assert(strstr(old, "sync.journal.2023"));
		ck_assert_uint_lt(journal_writer_size(w), size);
		/* The rotated file holds the sample whole. */
		ck_assert_int_eq(journal_open(&r, old, err), 0);
		ck_assert_int_eq(journal_next(r, &rec), 1);
		expect_sample(&rec, &s);
		ck_assert_str_eq(journal_host(r), "h");
		journal_close(r);
	}
	journal_writer_close(w);
	ck_assert_uint_eq(count_rotated(), 3);
	ck_assert_int_ne(access(first, F_OK), 0);	/* the oldest went */
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);	/* header only */
	journal_close(r);
}
END_TEST

static void expect_ts(struct journal_reader *r, int64_t ts)
{
	struct journal_record rec;

	ck_assert_int_eq(journal_next(r, &rec), 1);
	ck_assert_int_eq(rec.sample.ts_ns, ts);	/* ts_ns first in both */
	ck_assert_int_eq(rec.event.ts_ns, ts);
}

START_TEST(bad_lines)
{
	static const char nul_line[] = "17 sample sys\0 SLAVE\n";
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF], longline[3000];

	puts_file("# tapless-journal 1 host venue\n"			/* 1 */
		  "10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40\n"		/* 2 */
		  "11 sample sys SLAVE five 300 1.5 gm 1 s2 1 40\n"	/* 3 */
		  "12 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40\n"		/* 4 */
		  "\n"							/* 5 */
		  "   # a comment\n"					/* 6 */
		  "13 event phc0 link_down  eth1 went down \n"		/* 7 */
		  "garbage\n");						/* 8 */
	/* A line with a NUL byte (what a crash can leave), then a good one. */
	put(nul_line, sizeof(nul_line) - 1);				/* 9 */
	puts_file("14 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40\n");	/* 10 */
	memset(longline, 'x', sizeof(longline) - 2);
	longline[sizeof(longline) - 2] = '\n';
	longline[sizeof(longline) - 1] = '\0';
	puts_file(longline);						/* 11 */
	puts_file("15 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40\n");	/* 12 */
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	expect_ts(r, 10);
	expect_bad(r, 3);
	expect_ts(r, 12);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, 13, "phc0", "link_down", "eth1 went down ");
	expect_bad(r, 8);
	expect_bad(r, 9);
	expect_ts(r, 14);
	expect_bad(r, 11);
	expect_ts(r, 15);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_uint_eq(journal_bad_lines(r), 4);
	ck_assert(!journal_torn(r));
	ck_assert_str_eq(journal_host(r), "venue");
	journal_close(r);
}
END_TEST

/* Each malformed field is rejected by the line parser. */
START_TEST(parse_line)
{
	static const char *const bad[] = {
		"x sample sys SLAVE 5 300 1.5 gm 1 s2 1 40",
		"- sample sys SLAVE 5 300 1.5 gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 41 42",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 0",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 256",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 x",
		"10 sample sys SLAVE 5 3x0 1.5 gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 fast gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 inf gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm 256 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm -1 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 2 40",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 -40",
		"10 sample sys SLAVE -9223372036854775808 300 1.5 gm 1 s2 1 40",
		"10 sample sys SLAVE 9223372036854775808 300 1.5 gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2toolong 1 40",
		"10 sample clock_name_too_long SLAVE 5 300 1.5 gm 1 s2 1 40",
		"10 sample sys SLAVE 5 300 1.5 gm_name_that_is_far_far_too_long_x 1 s2 1 40",
		"10 event phc0",
		"10 event phc0 a_name_that_is_longer_than_31_chars",
		"10 record phc0 x",
		"10",
	};
	struct journal_record rec;
	const char *why;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why = NULL;
		ck_assert_msg(journal_parse_line(bad[i], &rec, &why) == -EBADMSG,
			      "accepted: %s", bad[i]);
		ck_assert_ptr_nonnull(why);
	}
	ck_assert_int_eq(journal_parse_line("", &rec, &why), 1);
	ck_assert_int_eq(journal_parse_line(" \t# x", &rec, &why), 1);
	/* servo holds 7 characters. */
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2toolon 1 40", &rec, &why),
		-EBADMSG);
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2tolon 1 40", &rec, &why), 0);
	ck_assert_str_eq(rec.sample.servo, "s2tolon");
	ck_assert_int_eq(journal_parse_line("10\tsample sys - - - - - - - 0 -",
					    &rec, &why), 0);
	ck_assert_int_eq(rec.sample.steps, -1);
	ck_assert(!rec.sample.in_sync);
	ck_assert_int_eq(rec.sample.bound_ns, JOURNAL_NONE);
}
END_TEST

/* Version 3 added CLASS at the end of a sample line: a version 2 file,
 * 12 fields a sample, still reads whole, its class not known; a version 3
 * line gives it back, "-" as not known. */
START_TEST(old_journal_reads)
{
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF];
	const char *why;

	puts_file("# tapless-journal 2 host algo\n"
		  "# time_ns sample clock state offset_ns delay_ns freq_ppb gm "
		  "steps servo sync bound_ns\n"
		  "10 event sys rules threshold_ns=1000 drift_ppb=1000\n"
		  "20 sample sys SLAVE 5 300 1.5 001122.fffe.334455 1 s2 1 40\n"
		  "30 sample sys SLAVE 6 301 1.5 001122.fffe.334455 1 s2 h 41\n");
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, 10, "sys", "rules",
		     "threshold_ns=1000 drift_ppb=1000");
	ck_assert_int_eq(journal_next(r, &rec), 1);
	ck_assert_int_eq(rec.type, JOURNAL_SAMPLE);
	ck_assert(rec.sample.in_sync);
	ck_assert_int_eq(rec.sample.bound_ns, 40);
	ck_assert_int_eq(rec.sample.gm_class, 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	ck_assert(rec.sample.holdover);
	ck_assert_int_eq(rec.sample.gm_class, 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_uint_eq(journal_bad_lines(r), 0);
	ck_assert_str_eq(journal_host(r), "algo");
	journal_close(r);

	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 248", &rec, &why), 0);
	ck_assert_int_eq(rec.sample.gm_class, 248);
	ck_assert_int_eq(rec.sample.bound_ns, 40);
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 40 -", &rec, &why), 0);
	ck_assert_int_eq(rec.sample.gm_class, 0);
}
END_TEST

/* Holdover: written "h" (in_sync false), read back as holdover with its
 * bound, through the writer and the reader and through one line; a sync
 * that is none of 0, 1, h is a bad line, and says so. */
START_TEST(holdover_sync)
{
	struct journal_writer *w;
	struct journal_reader *r;
	struct journal_record rec;
	struct journal_sample s[3];
	char err[JOURNAL_ERRBUF], line[256];
	const char *why = NULL;

	for (int i = 0; i < 3; i++) {
		s[i] = sample(T0 + i * S, "phc0", 1);
		s[i].in_sync = i == 0;
		s[i].holdover = i == 1;
		s[i].bound_ns = i == 2 ? JOURNAL_NONE : 1000 + i;
	}
	ck_assert_int_gt(journal_format_sample(line, sizeof(line), &s[1]), 0);
	ck_assert_ptr_nonnull(strstr(line, " h 1001 7\n"));
	ck_assert_int_eq(journal_writer_open(&w, path, "algo1"), 0);
	ck_assert_int_eq(journal_write_event(w, T0, "phc0", "rules",
					     "drift_ppb=1000"), 0);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(journal_write_sample(w, &s[i]), 0);
	journal_writer_close(w);
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, T0, "phc0", "rules", "drift_ppb=1000");
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(journal_next(r, &rec), 1);
		expect_sample(&rec, &s[i]);
	}
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_uint_eq(journal_bad_lines(r), 0);
	journal_close(r);

	line[strlen(line) - 1] = 0;
	ck_assert_int_eq(journal_parse_line(line, &rec, &why), 0);
	ck_assert(rec.sample.holdover);
	ck_assert(!rec.sample.in_sync);
	ck_assert_int_eq(rec.sample.bound_ns, 1001);
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 x 40", &rec, &why),
		-EBADMSG);
	ck_assert_str_eq(why, "sync is not 0, 1 or h");
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 H 40", &rec, &why),
		-EBADMSG);
	ck_assert_int_eq(journal_parse_line(
		"10 sample sys SLAVE 5 300 1.5 gm 1 s2 hh 40", &rec, &why),
		-EBADMSG);
}
END_TEST

/* Following a growing file: journal_resume() reads what was appended; a
 * torn line is read again whole once its rest is written, under its own
 * line number; journal_offset() stays where the whole lines end, a line
 * over 1024 bytes included; journal_fd() is the file read. */
START_TEST(resume_growing)
{
	struct journal_reader *r;
	struct journal_record rec;
	char err[JOURNAL_ERRBUF], big[1601];
	const char *head = "# tapless-journal 1 host g\n";
	const char *l1 = "10 sample sys SLAVE 5 300 1.5 gm 1 s2 1 7\n";
	struct stat a, b;

	puts_file(head);
	ck_assert_int_eq(journal_open(&r, path, err), 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert_uint_eq(journal_offset(r), strlen(head));
	ck_assert_str_eq(journal_host(r), "g");
	/* Nothing new. */
	ck_assert_int_eq(journal_resume(r), 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(!journal_torn(r));
	/* Half a line: torn, its bytes not counted read. */
	put(l1, 20);
	ck_assert_int_eq(journal_resume(r), 0);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(journal_torn(r));
	ck_assert_uint_eq(journal_offset(r), strlen(head));
	/* The rest: the whole line, then a bad one on line 3, a long one on
	 * line 4 and a torn one. */
	puts_file(l1 + 20);
	puts_file("20 sample sys\n");
	memset(big, 'x', sizeof(big) - 1);
	big[sizeof(big) - 2] = '\n';
	big[sizeof(big) - 1] = '\0';
	puts_file(big);
	puts_file("30 event sys ste");
	ck_assert_int_eq(journal_resume(r), 0);
	ck_assert(!journal_torn(r));
	ck_assert_int_eq(journal_next(r, &rec), 1);
	ck_assert_int_eq(rec.sample.ts_ns, 10);
	ck_assert_int_eq(rec.sample.bound_ns, 7);
	expect_bad(r, 3);
	expect_bad(r, 4);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(journal_torn(r));
	ck_assert_uint_eq(journal_offset(r), strlen(head) + strlen(l1) + 14 +
			  strlen(big));
	puts_file("p +5 ns\n40 event sys x\n");
	ck_assert_int_eq(journal_resume(r), 0);
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, 30, "sys", "step", "+5 ns");
	ck_assert_int_eq(journal_next(r, &rec), 1);
	expect_event(&rec, 40, "sys", "x", "");
	puts_file("50 nonsense\n");
	ck_assert_int_eq(journal_resume(r), 0);
	expect_bad(r, 7);
	ck_assert_int_eq(journal_next(r, &rec), 0);
	ck_assert(!journal_torn(r));
	ck_assert_uint_eq(journal_bad_lines(r), 3);
	ck_assert_int_eq(fstat(journal_fd(r), &a), 0);
	ck_assert_int_eq(stat(path, &b), 0);
	ck_assert(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
	ck_assert_uint_eq(journal_offset(r), (uint64_t)b.st_size);
	journal_close(r);
}
END_TEST

static Suite *journal_suite(void)
{
	Suite *s = suite_create("journal");
	TCase *tc = tcase_create("journal");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, format_and_host);
	tcase_add_test(tc, torn_last_line);
	tcase_add_test(tc, reopen_after_torn);
	tcase_add_test(tc, rotate);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, parse_line);
	tcase_add_test(tc, resume_growing);
	tcase_add_test(tc, holdover_sync);
	tcase_add_test(tc, old_journal_reads);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(journal_suite)
