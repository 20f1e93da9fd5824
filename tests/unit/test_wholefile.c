/* test_wholefile.c — whole files: through stdio or a descriptor, PATH.part
 * becomes PATH only at the end; a discarded file leaves nothing; a
 * writer's own error or a failed rename removes PATH.part, or keeps it
 * untouched with WHOLEFILE_KEEP_PART, never under PATH; the descriptor
 * open is exclusive and leaves another writer's PATH.part alone. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/wholefile.h"
#include "unit.h"

static char dir[64], path[128], part[140];

static void setup(void)
{
	unit_tmpdir(dir, "wholefile");
	snprintf(path, sizeof(path), "%s/out", dir);
	snprintf(part, sizeof(part), "%s.part", path);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

/* The file's text, or "(none)" when it does not exist. */
static const char *text(const char *p)
{
	static char buf[64];
	FILE *f = fopen(p, "r");
	size_t n;

	if (!f)
		return "(none)";
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

START_TEST(stdio_whole)
{
	struct wholefile w;

	ck_assert_int_eq(wholefile_open(&w, path), 0);
	ck_assert_int_ge(fputs("abc", w.f), 0);
	ck_assert_int_eq(w.fd, fileno(w.f));
	ck_assert_str_eq(text(path), "(none)");
	ck_assert_int_eq(wholefile_close(&w, false), 0);
	ck_assert_str_eq(text(path), "abc");
	ck_assert_str_eq(text(part), "(none)");
	ck_assert_ptr_null(w.path);
	/* Discarded: nothing, and the older PATH is left as it was. */
	ck_assert_int_eq(wholefile_open(&w, path), 0);
	ck_assert_int_ge(fputs("new", w.f), 0);
	ck_assert_int_eq(wholefile_close(&w, true), 0);
	ck_assert_str_eq(text(path), "abc");
	ck_assert_str_eq(text(part), "(none)");
}
END_TEST

START_TEST(fd_whole)
{
	struct wholefile w;
	struct stat st;
	mode_t old = umask(022);

	ck_assert_int_eq(wholefile_open_fd(&w, path), 0);
	umask(old);
	ck_assert_ptr_null(w.f);
	ck_assert_int_eq(write(w.fd, "xyz", 3), 3);
	ck_assert_int_eq(stat(part, &st), 0);
	ck_assert_int_eq(st.st_mode & 0777, 0644);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_KEEP_PART, 0), 0);
	ck_assert_str_eq(text(path), "xyz");
	ck_assert_str_eq(text(part), "(none)");
	ck_assert_int_eq(w.fd, -1);
	ck_assert_int_eq(wholefile_open_fd(&w, path), 0);
	ck_assert_int_eq(write(w.fd, "gone", 4), 4);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_DISCARD, 0), 0);
	ck_assert_str_eq(text(path), "xyz");
	ck_assert_str_eq(text(part), "(none)");
}
END_TEST

START_TEST(fd_exclusive)
{
	struct wholefile w;

	unit_write_file(part, "other");
	ck_assert_int_eq(wholefile_open_fd(&w, path), -EEXIST);
	ck_assert_int_eq(w.fd, -1);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_DISCARD, -EEXIST), -EEXIST);
	ck_assert_str_eq(text(part), "other");
	/* stdio in a folder that is not there: the same safety. */
	snprintf(path, sizeof(path), "%s/no/out", dir);
	ck_assert_int_eq(wholefile_open(&w, path), -ENOENT);
	ck_assert_int_eq(wholefile_close(&w, false), 0);
}
END_TEST

START_TEST(writer_error)
{
	struct wholefile w;

	/* The writer's own error: kept as .part, or removed. */
	ck_assert_int_eq(wholefile_open_fd(&w, path), 0);
	ck_assert_int_eq(write(w.fd, "12", 2), 2);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_KEEP_PART, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(text(path), "(none)");
	ck_assert_str_eq(text(part), "12");
	ck_assert_int_eq(unlink(part), 0);
	ck_assert_int_eq(wholefile_open_fd(&w, path), 0);
	ck_assert_int_eq(write(w.fd, "12", 2), 2);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_RENAME, -ENOSPC), -ENOSPC);
	ck_assert_str_eq(text(path), "(none)");
	ck_assert_str_eq(text(part), "(none)");
}
END_TEST

/* A PATH that is a device or a pipe is written in place: /dev/null stays
 * the device (renamed over, as root, it would become a file), a FIFO gets
 * the bytes. (A folder is not: rename_error.) */
START_TEST(not_regular)
{
	struct wholefile w;
	struct stat st;
	char fifo[160], buf[8] = "";
	int rfd;

	ck_assert_int_eq(wholefile_open(&w, "/dev/null"), 0);
	ck_assert(w.direct);
	ck_assert_int_ge(fputs("abc", w.f), 0);
	ck_assert_int_eq(wholefile_close(&w, false), 0);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));
	ck_assert_int_eq(access("/dev/null.part", F_OK), -1);
	ck_assert_int_eq(wholefile_open_fd(&w, "/dev/null"), 0);
	ck_assert_int_eq(write(w.fd, "x", 1), 1);
	ck_assert_int_eq(wholefile_end(&w, WHOLEFILE_KEEP_PART, 0), 0);
	ck_assert_int_eq(stat("/dev/null", &st), 0);
	ck_assert(S_ISCHR(st.st_mode));

	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	rfd = open(fifo, O_RDONLY | O_NONBLOCK);
	ck_assert_int_ge(rfd, 0);
	ck_assert_int_eq(wholefile_open(&w, fifo), 0);
	ck_assert_int_ge(fputs("xyz", w.f), 0);
	ck_assert_int_eq(wholefile_close(&w, false), 0);
	ck_assert_int_eq(read(rfd, buf, sizeof(buf) - 1), 3);
	ck_assert_str_eq(buf, "xyz");
	close(rfd);
	ck_assert_int_eq(stat(fifo, &st), 0);
	ck_assert(S_ISFIFO(st.st_mode));
}
END_TEST

START_TEST(rename_error)
{
	struct wholefile w;
	char inside[160];
	int err;

	/* PATH a folder that is not empty: the rename fails. */
	ck_assert_int_eq(mkdir(path, 0755), 0);
	snprintf(inside, sizeof(inside), "%s/x", path);
	unit_write_file(inside, "x");
	ck_assert_int_eq(wholefile_open_fd(&w, path), 0);
	ck_assert_int_eq(write(w.fd, "34", 2), 2);
	err = wholefile_end(&w, WHOLEFILE_KEEP_PART, 0);
	ck_assert(err == -EISDIR || err == -ENOTEMPTY || err == -EEXIST);
	ck_assert_str_eq(text(part), "34");
	ck_assert_int_eq(unlink(part), 0);
	ck_assert_int_eq(wholefile_open(&w, path), 0);
	ck_assert_int_ge(fputs("56", w.f), 0);
	ck_assert_int_lt(wholefile_close(&w, false), 0);
	ck_assert_str_eq(text(part), "(none)");
}
END_TEST

static Suite *wholefile_suite(void)
{
	Suite *s = suite_create("wholefile");
	TCase *tc = tcase_create("wholefile");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, stdio_whole);
	tcase_add_test(tc, fd_whole);
	tcase_add_test(tc, fd_exclusive);
	tcase_add_test(tc, writer_error);
	tcase_add_test(tc, rename_error);
	tcase_add_test(tc, not_regular);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(wholefile_suite)
