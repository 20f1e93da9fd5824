/* test_pidfile.c — one instance per path: a second taker is refused and
 * told the holder's pid and note; a file left by a dead holder is taken
 * over; release removes the file so the next taker starts clean.
 */
#include <errno.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/pidfile.h"
#include "unit.h"

static char dir[64], path[128];

static void setup(void)
{
	unit_tmpdir(dir, "pidfile");
	snprintf(path, sizeof(path), "%s/x.pid", dir);
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static void read_file(const char *p, char *buf, size_t size)
{
	FILE *f = fopen(p, "r");
	size_t n;

	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = 0;
	fclose(f);
}

START_TEST(second_refused)
{
	struct pidfile *a, *b;
	struct pidfile_holder h;
	char buf[256], want[64];

	ck_assert_int_eq(pidfile_take(&a, path, "/etc/a.conf", NULL), 0);
	ck_assert_str_eq(pidfile_path(a), path);
	snprintf(want, sizeof(want), "%ld\n/etc/a.conf\n", (long)getpid());
	read_file(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
	/* flock belongs to the open file: a second open in the same process
	 * is refused like another process would be. */
	ck_assert_int_eq(pidfile_take(&b, path, "/etc/b.conf", &h), -EWOULDBLOCK);
	ck_assert_ptr_null(b);
	ck_assert_int_eq(h.pid, getpid());
	ck_assert_str_eq(h.note, "/etc/a.conf");
	/* The refused taker wrote nothing. */
	read_file(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
	ck_assert_int_eq(pidfile_holder(path, &h), 1);
	ck_assert_int_eq(h.pid, getpid());
	pidfile_release(a);
	ck_assert_int_eq(access(path, F_OK), -1);
	ck_assert_int_eq(pidfile_holder(path, &h), 0);
	ck_assert_int_eq(pidfile_take(&b, path, "/etc/b.conf", NULL), 0);
	pidfile_release(b);
}
END_TEST

START_TEST(other_process)
{
	struct pidfile *a;
	int st;
	pid_t pid;

	ck_assert_int_eq(pidfile_take(&a, path, "note", NULL), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct pidfile *b;
		struct pidfile_holder h;
		int rc = pidfile_take(&b, path, "child", &h);

		_exit(rc == -EWOULDBLOCK && h.pid == getppid() &&
		      !strcmp(h.note, "note") ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	pidfile_release(a);
}
END_TEST

START_TEST(stale_taken_over)
{
	struct pidfile *a;
	struct pidfile_holder h;
	char buf[256], want[64];

	/* A holder killed with SIGKILL leaves its file, not its lock. */
	unit_write_file(path, "999999\n/etc/dead.conf\n");
	ck_assert_int_eq(pidfile_holder(path, &h), 0);
	ck_assert_int_eq(pidfile_take(&a, path, "", NULL), 0);
	snprintf(want, sizeof(want), "%ld\n\n", (long)getpid());
	read_file(path, buf, sizeof(buf));
	ck_assert_str_eq(buf, want);
	pidfile_release(a);
}
END_TEST

START_TEST(errors)
{
	struct pidfile *a;
	char p[192];

	snprintf(p, sizeof(p), "%s/missing/x.pid", dir);
	ck_assert_int_eq(pidfile_take(&a, p, "", NULL), -ENOENT);
	ck_assert_ptr_null(a);
	/* A symlink is not followed: someone else's file stays theirs. */
	snprintf(p, sizeof(p), "%s/link.pid", dir);
	ck_assert_int_eq(symlink(path, p), 0);
	ck_assert_int_eq(pidfile_take(&a, p, "", NULL), -ELOOP);
	pidfile_release(NULL);
}
END_TEST

static Suite *pidfile_suite(void)
{
	Suite *s = suite_create("pidfile");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, second_refused);
	tcase_add_test(tc, other_process);
	tcase_add_test(tc, stale_taken_over);
	tcase_add_test(tc, errors);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(pidfile_suite)
