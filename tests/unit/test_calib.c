/* test_calib.c — the stamp calibration file, tapless-calibration(5): what
 * calib_write() writes reads back the same, in the documented order; a
 * file of comments calibrates nothing; a negative offset is a value, a
 * negative spread an error; every kind of bad line is refused with
 * PATH:LINE naming it; a write never leaves a half file under the final
 * name nor its temporary file behind. */
#include <errno.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/calib.h"
#include "unit.h"

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "calib");
	snprintf(path, sizeof(path), "%s/host.cal", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static void slurp(const char *p, char *out, size_t len)
{
	FILE *f = fopen(p, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(out, 1, len - 1, f);
	out[n] = '\0';
	fclose(f);
}

static void term_eq(const struct calib_term *a, const struct calib_term *b)
{
	ck_assert_int_eq(a->set, b->set);
	ck_assert_int_eq(a->offset_ns, b->offset_ns);
	ck_assert_int_eq(a->spread_ns, b->spread_ns);
	ck_assert_uint_eq(a->samples, b->samples);
}

static void calib_eq(const struct calib *a, const struct calib *b)
{
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int s = 0; s < CALIB_SRCS; s++)
			term_eq(&a->t[d][s], &b->t[d][s]);
	ck_assert_str_eq(a->host, b->host);
	ck_assert_str_eq(a->measured, b->measured);
}

START_TEST(names)
{
	ck_assert_str_eq(calib_dir_name(CALIB_TX), "tx");
	ck_assert_str_eq(calib_dir_name(CALIB_RX), "rx");
	ck_assert_str_eq(calib_src_name(CALIB_HW), "hw");
	ck_assert_str_eq(calib_src_name(CALIB_SW), "sw");
}
END_TEST

START_TEST(round_trip)
{
	struct calib c = { 0 }, r;
	char err[CALIB_ERRBUF] = "", text[2048], part[160];
	struct stat st;

	snprintf(c.host, sizeof(c.host), "algo1");
	snprintf(c.measured, sizeof(c.measured), "2026-11-29T10:00:00Z tapless "
		 "validate --loopback a:b, 1000 frames each way");
	c.t[CALIB_RX][CALIB_SW] = (struct calib_term){ true, 9000, 4000, 2000 };
	c.t[CALIB_TX][CALIB_HW] = (struct calib_term){ true, -12, 8, 0 };
	c.t[CALIB_RX][CALIB_HW] = (struct calib_term){ true, CALIB_MAX_NS,
						       CALIB_MAX_NS, UINT64_MAX };
	c.t[CALIB_TX][CALIB_SW] = (struct calib_term){ true, -CALIB_MAX_NS, 0, 1 };
	ck_assert_int_eq(calib_write(&c, path, err), 0);
	snprintf(part, sizeof(part), "%s.part", path);
	ck_assert_int_ne(stat(part, &st), 0);
	slurp(path, text, sizeof(text));
	ck_assert_str_eq(text,
		"# tapless calibration (tapless-calibration(5))\n"
		"host algo1\n"
		"measured 2026-11-29T10:00:00Z tapless validate --loopback "
		"a:b, 1000 frames each way\n"
		"stamp tx hw offset -12 spread 8\n"
		"stamp tx sw offset -1000000000 spread 0 samples 1\n"
		"stamp rx hw offset 1000000000 spread 1000000000 samples "
		"18446744073709551615\n"
		"stamp rx sw offset 9000 spread 4000 samples 2000\n");
	memset(&r, 0x5a, sizeof(r));
	ck_assert_int_eq(calib_read(&r, path, err), 0);
	calib_eq(&c, &r);

	/* Only some terms, no host, no measured: written over the first. */
	memset(&c, 0, sizeof(c));
	c.t[CALIB_RX][CALIB_SW] = (struct calib_term){ true, 0, 0, 0 };
	ck_assert_int_eq(calib_write(&c, path, err), 0);
	slurp(path, text, sizeof(text));
	ck_assert_str_eq(text, "# tapless calibration (tapless-calibration(5))\n"
			 "stamp rx sw offset 0 spread 0\n");
	ck_assert_int_eq(calib_read(&r, path, err), 0);
	calib_eq(&c, &r);
}
END_TEST

/* Comments, blanks, tabs, CRLF, fields in any spacing, a last line with
 * no newline. */
START_TEST(layout)
{
	struct calib c;
	char err[CALIB_ERRBUF] = "";

	unit_write_file(path, "# only\n\n   # comments\n\t\n");
	memset(&c, 0x5a, sizeof(c));
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	for (int d = 0; d < CALIB_DIRS; d++)
		for (int s = 0; s < CALIB_SRCS; s++)
			ck_assert(!c.t[d][s].set);
	ck_assert_str_eq(c.host, "");
	ck_assert_str_eq(c.measured, "");
	unit_write_file(path, "");
	ck_assert_int_eq(calib_read(&c, path, err), 0);

	unit_write_file(path, "  host\tbox-7 # the name\r\n"
			"measured \t by  hand,\tin the lab   # not this\r\n"
			"stamp\ttx  sw offset -250 spread 1200   samples 0\n"
			"stamp rx sw offset -0 spread 10");
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	ck_assert_str_eq(c.host, "box-7");
	ck_assert_str_eq(c.measured, "by  hand,\tin the lab");
	ck_assert(c.t[CALIB_TX][CALIB_SW].set);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, -250);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].spread_ns, 1200);
	ck_assert_uint_eq(c.t[CALIB_TX][CALIB_SW].samples, 0);
	ck_assert(c.t[CALIB_RX][CALIB_SW].set);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].offset_ns, 0);
	ck_assert_int_eq(c.t[CALIB_RX][CALIB_SW].spread_ns, 10);
	ck_assert(!c.t[CALIB_TX][CALIB_HW].set);
	ck_assert(!c.t[CALIB_RX][CALIB_HW].set);
}
END_TEST

START_TEST(missing_file)
{
	struct calib c;
	char err[CALIB_ERRBUF];

	ck_assert_int_eq(calib_read(&c, path, err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, path));
}
END_TEST

/* Each bad line, after two good ones, at line 3 (or as given). */
static void expect_bad(const char *body, unsigned line, const char *why)
{
	struct calib c;
	char err[CALIB_ERRBUF], text[4096], want[256];

	snprintf(text, sizeof(text), "host a\n# fine\n%s", body);
	unit_write_file(path, text);
	memset(&c, 0x5a, sizeof(c));
	ck_assert_int_eq(calib_read(&c, path, err), -EINVAL);
	ck_assert_msg(!c.t[0][0].set && !c.host[0], "not zeroed for '%s'", body);
	snprintf(want, sizeof(want), "%s:%u: ", path, line);
	ck_assert_msg(!strncmp(err, want, strlen(want)), "'%s' for '%s', want '%s'",
		      err, body, want);
	ck_assert_msg(strstr(err, why), "'%s' for '%s', want '%s'", err, body, why);
}

START_TEST(bad_lines)
{
	char longline[1100], name[80];

	expect_bad("offset 5\n", 3, "expected host, measured or stamp");
	expect_bad("Stamp tx hw offset 1 spread 1\n", 3, "expected host");
	expect_bad("stamp\n", 3, "stamp: expected");
	expect_bad("stamp tx\n", 3, "stamp: expected");
	expect_bad("stamp up hw offset 1 spread 1\n", 3, "not tx or rx");
	expect_bad("stamp tx phc offset 1 spread 1\n", 3, "not hw or sw");
	expect_bad("stamp tx hw\n", 3, "expected 'offset NS'");
	expect_bad("stamp tx hw spread 1 offset 1\n", 3, "expected 'offset NS'");
	expect_bad("stamp tx hw offset\n", 3, "offset: no value");
	expect_bad("stamp tx hw offset 1\n", 3, "expected 'spread NS'");
	expect_bad("stamp tx hw offset 1 2\n", 3, "expected 'spread NS'");
	expect_bad("stamp tx hw offset 1 spread\n", 3, "spread: no value");
	expect_bad("stamp tx hw offset 1.5 spread 1\n", 3, "offset: not a whole");
	expect_bad("stamp tx hw offset +1 spread 1\n", 3, "offset: not a whole");
	expect_bad("stamp tx hw offset - spread 1\n", 3, "offset: not a whole");
	expect_bad("stamp tx hw offset 1ns spread 1\n", 3, "offset: not a whole");
	expect_bad("stamp tx hw offset 1000000001 spread 1\n", 3,
		   "offset: out of range");
	expect_bad("stamp tx hw offset -1000000001 spread 1\n", 3,
		   "offset: out of range");
	expect_bad("stamp tx hw offset 99999999999999999999999 spread 1\n", 3,
		   "offset: out of range");
	expect_bad("stamp tx hw offset 1 spread -1\n", 3, "spread: negative");
	expect_bad("stamp tx hw offset 1 spread 1000000001\n", 3,
		   "spread: out of range");
	expect_bad("stamp tx hw offset 1 spread 0x10\n", 3, "spread: not a whole");
	expect_bad("stamp tx hw offset 1 spread 1 count 5\n", 3,
		   "expected 'samples N'");
	expect_bad("stamp tx hw offset 1 spread 1 samples\n", 3,
		   "samples: no value");
	expect_bad("stamp tx hw offset 1 spread 1 samples -5\n", 3,
		   "samples: not a whole");
	expect_bad("stamp tx hw offset 1 spread 1 samples 18446744073709551616\n",
		   3, "samples: out of range");
	expect_bad("stamp tx hw offset 1 spread 1 samples 5 extra\n", 3,
		   "too many fields");
	expect_bad("stamp tx hw offset 1 spread 1 samples 5 a b c d e f\n", 3,
		   "too many fields");
	expect_bad("stamp rx sw offset 1 spread 1\n\nstamp rx sw offset 2 spread 2\n",
		   5, "a second line for this direction and source");
	expect_bad("host\n", 3, "host: expected");
	expect_bad("host a b\n", 3, "host: too many fields");
	expect_bad("host b\n", 3, "a second host line");
	expect_bad("measured\n", 3, "measured: expected");
	expect_bad("measured   # nothing\n", 3, "measured: expected");
	expect_bad("measured x\nmeasured y\n", 4, "a second measured line");
	expect_bad("stamp tx hw offset 1 spread 1\x01\n", 3, "a control character");
	expect_bad("measured a\rb\n", 3, "a control character");
	/* 64 characters: one too many. */
	memset(name, 'h', 64);
	name[64] = '\0';
	snprintf(longline, sizeof(longline), "\nhost %s\n", name);
	/* After "host a": a second host line, unless the name is refused
	 * first (it is: the length is checked before). */
	expect_bad(longline, 4, "name too long");
	/* A line of 1023 characters; 1022 is still read. */
	memset(longline, ' ', 1023);
	memcpy(longline, "#", 1);
	longline[1023] = '\n';
	longline[1024] = '\0';
	expect_bad(longline, 3, "line too long");
}
END_TEST

START_TEST(limits)
{
	struct calib c;
	char err[CALIB_ERRBUF], text[2048], name[64];
	size_t n;

	/* 1022 characters and a newline: read. */
	memset(text, ' ', 1022);
	memcpy(text, "# x", 3);
	text[1022] = '\n';
	text[1023] = '\0';
	unit_write_file(path, text);
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	/* A 63-character host. */
	memset(name, 'h', 63);
	name[63] = '\0';
	snprintf(text, sizeof(text), "host %s\n", name);
	unit_write_file(path, text);
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	ck_assert_str_eq(c.host, name);
	/* A long measured text keeps its first 255 characters. */
	n = (size_t)snprintf(text, sizeof(text), "measured ");
	for (int i = 0; i < 40; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "word%02d ", i);
	snprintf(text + n, sizeof(text) - n, "\n");
	unit_write_file(path, text);
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	ck_assert_uint_eq(strlen(c.measured), 255);
	ck_assert(!strncmp(c.measured, text + 9, 255));
	/* Nor does it cut a UTF-8 character in two: 254 bytes then "é". */
	memset(text, 'x', sizeof(text));
	memcpy(text, "measured ", 9);
	memcpy(text + 9 + 254, "\xc3\xa9\n", 4);
	unit_write_file(path, text);
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	ck_assert_uint_eq(strlen(c.measured), 254);
	/* A NUL byte is not text. */
	{
		static const char bin[] = "host a\nstamp tx\0 hw\n";

		ck_assert_int_eq(calib_parse(&c, bin, sizeof(bin) - 1, "buf", err),
				 -EINVAL);
		ck_assert_str_eq(err, "buf:2: a NUL byte: not a text file");
	}
}
END_TEST

START_TEST(negative_offset)
{
	struct calib c;
	char err[CALIB_ERRBUF];

	unit_write_file(path, "stamp tx sw offset -4000 spread 900 samples 12\n");
	ck_assert_int_eq(calib_read(&c, path, err), 0);
	ck_assert_int_eq(c.t[CALIB_TX][CALIB_SW].offset_ns, -4000);
	unit_write_file(path, "stamp tx sw offset 4000 spread -900\n");
	ck_assert_int_eq(calib_read(&c, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, ":1: stamp: spread: negative"));
}
END_TEST

/* Nothing the file could not read back is written. */
START_TEST(write_refuses)
{
	struct calib c = { 0 };
	char err[CALIB_ERRBUF];

	c.t[CALIB_TX][CALIB_HW] = (struct calib_term){ true, 0, -1, 0 };
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	c.t[CALIB_TX][CALIB_HW] = (struct calib_term){ true, CALIB_MAX_NS + 1, 0, 0 };
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	c.t[CALIB_TX][CALIB_HW] = (struct calib_term){ true, 0, 0, 0 };
	snprintf(c.host, sizeof(c.host), "two words");
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	snprintf(c.host, sizeof(c.host), "one");
	snprintf(c.measured, sizeof(c.measured), "a\nstamp rx hw offset 1 spread 1");
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	snprintf(c.measured, sizeof(c.measured), "50 # frames");
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	snprintf(c.measured, sizeof(c.measured), " lead");
	ck_assert_int_eq(calib_write(&c, path, err), -EINVAL);
	ck_assert_ptr_nonnull(strstr(err, path));
	ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

/* A write that fails leaves nothing under the final name and no
 * temporary file; one that succeeds replaces the old file whole and
 * leaves no temporary file, even over a stale one. */
START_TEST(write_whole)
{
	struct calib c = { 0 }, r;
	char err[CALIB_ERRBUF], p[192], part[200], text[512];

	c.t[CALIB_RX][CALIB_HW] = (struct calib_term){ true, 40, 8, 100 };
	/* No such directory. */
	snprintf(p, sizeof(p), "%s/nodir/host.cal", dir);
	ck_assert_int_eq(calib_write(&c, p, err), -ENOENT);
	ck_assert_ptr_nonnull(strstr(err, "nodir"));
	/* The final name is a directory: the rename fails, the .part goes. */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(p, sizeof(p), "%s/x", path);
	unit_write_file(p, "keep\n");
	ck_assert_int_lt(calib_write(&c, path, err), 0);
	snprintf(part, sizeof(part), "%s.part", path);
	ck_assert_int_ne(access(part, F_OK), 0);
	slurp(p, text, sizeof(text));
	ck_assert_str_eq(text, "keep\n");
	ck_assert_int_eq(unlink(p), 0);
	ck_assert_int_eq(rmdir(path), 0);
	/* Over an old file and a stale .part. */
	unit_write_file(path, "stamp tx hw offset 1 spread 1\n");
	unit_write_file(part, "stamp tx hw offset 1 spread 1\nhalf a li");
	ck_assert_int_eq(calib_write(&c, path, err), 0);
	ck_assert_int_ne(access(part, F_OK), 0);
	ck_assert_int_eq(calib_read(&r, path, err), 0);
	calib_eq(&c, &r);
}
END_TEST

static Suite *calib_suite(void)
{
	Suite *s = suite_create("calib");
	TCase *tc = tcase_create("calib");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, names);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, layout);
	tcase_add_test(tc, missing_file);
	tcase_add_test(tc, bad_lines);
	tcase_add_test(tc, limits);
	tcase_add_test(tc, negative_offset);
	tcase_add_test(tc, write_refuses);
	tcase_add_test(tc, write_whole);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(calib_suite)
