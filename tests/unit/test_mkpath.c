/* test_mkpath.c — mkdir -p: missing parents made, existing ones kept, a
 * file in the way refused. */
#include <errno.h>
#include <stdbool.h>
#include <sys/stat.h>

#include "base/mkpath.h"
#include "unit.h"

static char dir[64];

static void setup(void)
{
	unit_tmpdir(dir, "mkpath");
}

static void teardown(void)
{
	unit_rmdir(dir);
}

static bool is_dir(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISDIR(st.st_mode);
}

START_TEST(parents_made)
{
	char p[160];

	snprintf(p, sizeof(p), "%s/a/b//c/", dir);
	ck_assert_int_eq(mkpath_p(p, 0755), 0);
	ck_assert(is_dir(p));
	/* Again: all there already. */
	ck_assert_int_eq(mkpath_p(p, 0755), 0);
	snprintf(p, sizeof(p), "%s/a/d", dir);
	ck_assert_int_eq(mkpath_p(p, 0755), 0);
	ck_assert(is_dir(p));
	ck_assert_int_eq(mkpath_p(".", 0755), 0);
	ck_assert_int_eq(mkpath_p("/", 0755), 0);
}
END_TEST

START_TEST(file_in_the_way)
{
	char f[160], p[200];

	snprintf(f, sizeof(f), "%s/f", dir);
	unit_write_file(f, "x\n");
	ck_assert_int_eq(mkpath_p(f, 0755), -ENOTDIR);
	snprintf(p, sizeof(p), "%s/sub", f);
	ck_assert_int_eq(mkpath_p(p, 0755), -ENOTDIR);
	ck_assert_int_eq(mkpath_p("", 0755), -EINVAL);
}
END_TEST

/* The check before a daemon writes into a directory: a missing one is
 * said to be missing, not "not a directory" (issue 32). */
START_TEST(is_dir_says_why)
{
	char f[160], p[200];

	ck_assert_int_eq(mkpath_is_dir(dir), 0);
	snprintf(p, sizeof(p), "%s/missing", dir);
	ck_assert_int_eq(mkpath_is_dir(p), -ENOENT);
	ck_assert_str_eq(mkpath_why(mkpath_is_dir(p)), "no such directory");
	snprintf(p, sizeof(p), "%s/missing/deeper", dir);
	ck_assert_int_eq(mkpath_is_dir(p), -ENOENT);
	snprintf(f, sizeof(f), "%s/f", dir);
	unit_write_file(f, "x\n");
	ck_assert_int_eq(mkpath_is_dir(f), -ENOTDIR);
	ck_assert_str_eq(mkpath_why(-ENOTDIR), "not a directory");
	snprintf(p, sizeof(p), "%s/sub", f);
	ck_assert_int_eq(mkpath_is_dir(p), -ENOTDIR);
	ck_assert_str_eq(mkpath_why(-EACCES), "Permission denied");
}
END_TEST

static Suite *mkpath_suite(void)
{
	Suite *s = suite_create("mkpath");
	TCase *tc = tcase_create("core");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, parents_made);
	tcase_add_test(tc, file_in_the_way);
	tcase_add_test(tc, is_dir_says_why);
	suite_add_tcase(s, tc);
	return s;
}

UNIT_MAIN(mkpath_suite)
