/* test_capset.c — several captures as one time-ordered stream: rotated files
 * in a directory, a .part file, a damaged file, and what is not a capture. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files/capset.h"
#include "files/pcapng.h"
#include "stamp/ts.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "capset");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* n packets at first, first + step, ...; leaves name.part if !finish. */
static void write_file(const char *name, int64_t first, int64_t step, int n,
		       bool finish)
{
	struct pcapng_section sec = { .hostname = "h" };
	struct pcapng_iface ifc = { "eth0", 1, 0, { false, -1, TS_SCALE_UTC, "" }, false };
	struct pcapng_writer *w;
	unsigned char f[60] = { 0 };
	char path[160];
	uint32_t id;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	ck_assert_int_eq(pcapng_open(&w, path, &sec), 0);
	ck_assert_int_eq(pcapng_add_iface(w, &ifc, &id), 0);
	for (int i = 0; i < n; i++)
		ck_assert_int_eq(pcapng_write_packet(w, id, first + i * step, f,
						     60, 60, PCAPNG_DIR_IN), 0);
	if (finish) {
		ck_assert_int_eq(pcapng_close(w, false), 0);
	} else {
		/* As after a crash: flushed, never renamed. */
		ck_assert_int_eq(pcapng_flush(w), 0);
		ck_assert_int_eq(pcapng_close(w, true) , 0);
	}
}

START_TEST(rotated_directory_in_time_order)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF], p[160];
	struct capset_packet pk;
	struct capset *s;
	int64_t last = -1;
	int count = 0;
	FILE *f;

	/* Three files whose packets interleave in time. */
	write_file("a-0001.pcapng", 0, 3, 100, true);
	write_file("a-0002.pcapng", 1, 3, 100, true);
	write_file("a-0003.pcap.pcapng", 2, 3, 100, true);
	snprintf(p, sizeof(p), "%s/notes.txt", dir);
	f = fopen(p, "w");
	fputs("not a capture\n", f);
	fclose(f);

	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	ck_assert_uint_eq(capset_files(s), 3);
	while (capset_next(s, &pk) == 1) {
		ck_assert(pk.pkt.ts_ns == last + 1);
		ck_assert_uint_eq(pk.file, (unsigned)(pk.pkt.ts_ns % 3));
		ck_assert_uint_eq(pk.pkt.caplen, 60);
		last = pk.pkt.ts_ns;
		count++;
	}
	ck_assert_int_eq(count, 300);
	ck_assert_str_eq(capset_error(s), "");
	ck_assert_ptr_nonnull(capset_reader(s, 2));
	ck_assert_ptr_null(capset_reader(s, 3));
	capset_close(s);
}
END_TEST

START_TEST(damaged_file_ends_only_itself)
{
	const char *paths[2];
	char err[CAP_ERRBUF], a[160], b[160];
	struct capset_packet pk;
	struct capset *s;
	struct stat st;
	int count = 0;

	write_file("a.pcapng", 0, 2, 50, true);
	write_file("b.pcapng", 1, 2, 50, true);
	snprintf(a, sizeof(a), "%s/a.pcapng", dir);
	snprintf(b, sizeof(b), "%s/b.pcapng", dir);
	ck_assert_int_eq(stat(b, &st), 0);
	ck_assert_int_eq(truncate(b, st.st_size / 2), 0);
	paths[0] = a;
	paths[1] = b;
	ck_assert_int_eq(capset_open(&s, paths, 2, err), 0);
	while (capset_next(s, &pk) == 1)
		count++;
	/* All 50 of a, and the whole packets of b before the cut. */
	ck_assert_int_gt(count, 50);
	ck_assert_int_lt(count, 100);
	ck_assert_uint_eq(capset_damaged(s), 1);
	ck_assert_msg(strstr(capset_error(s), "b.pcapng: offset"), "%s",
		      capset_error(s));
	capset_close(s);
}
END_TEST

START_TEST(part_file_is_read)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset_packet pk;
	struct capset *s;
	int count = 0;

	write_file("crashed.pcapng", 0, 1, 40, false);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), -ENOENT);
	ck_assert_msg(strstr(err, "no .pcapng"), "%s", err);
	/* The writer removed it on discard: write one left behind by hand. */
	write_file("ok.pcapng", 0, 1, 40, true);
	{
		char from[160], to[160];

		snprintf(from, sizeof(from), "%s/ok.pcapng", dir);
		snprintf(to, sizeof(to), "%s/ok.pcapng.part", dir);
		ck_assert_int_eq(rename(from, to), 0);
	}
	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	while (capset_next(s, &pk) == 1)
		count++;
	ck_assert_int_eq(count, 40);
	capset_close(s);
}
END_TEST

START_TEST(bad_paths)
{
	const char *missing[] = { "/nonexistent/tapless" };
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset *s;

	ck_assert_int_eq(capset_open(&s, missing, 1, err), -ENOENT);
	ck_assert_msg(strstr(err, "/nonexistent/tapless"), "%s", err);
	ck_assert_ptr_null(s);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), -ENOENT);
}
END_TEST

START_TEST(equal_times_stable)
{
	const char *paths[] = { dir };
	char err[CAP_ERRBUF];
	struct capset_packet pk;
	struct capset *s;
	unsigned prev_file = 0;
	int64_t prev_ts = -1;

	write_file("1.pcapng", 0, 1, 20, true);
	write_file("2.pcapng", 0, 1, 20, true);
	ck_assert_int_eq(capset_open(&s, paths, 1, err), 0);
	while (capset_next(s, &pk) == 1) {
		if (pk.pkt.ts_ns == prev_ts)
			ck_assert_uint_gt(pk.file, prev_file);
		prev_ts = pk.pkt.ts_ns;
		prev_file = pk.file;
	}
	capset_close(s);
}
END_TEST

static Suite *capset_suite(void)
{
	Suite *s = suite_create("capset");
	TCase *t = tcase_create("capset");

	tcase_add_checked_fixture(t, setup, teardown);
	tcase_add_test(t, rotated_directory_in_time_order);
	tcase_add_test(t, damaged_file_ends_only_itself);
	tcase_add_test(t, part_file_is_read);
	tcase_add_test(t, bad_paths);
	tcase_add_test(t, equal_times_stable);
	suite_add_tcase(s, t);
	return s;
}

UNIT_MAIN(capset_suite)
