/* unit.h — shared main() for the Check unit test programs.
 *
 * Each tests/unit/test_<module>.c defines the suite of its module and ends
 * with UNIT_MAIN(<module>_suite). Each file is its own program, so suites are
 * added without touching a shared runner. */
#ifndef TAPLESS_UNIT_H
#define TAPLESS_UNIT_H

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A fresh directory under /tmp for a test that writes files, and its
 * removal: for tcase_add_checked_fixture(). dir holds at least 64 bytes. */
static inline void unit_tmpdir(char *dir, const char *name)
{
	snprintf(dir, 64, "/tmp/tapless-%s.XXXXXX", name);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static inline void unit_rmdir(const char *dir)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Write text to path, whole. */
static inline void unit_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_ge(fputs(text, f), 0);
	ck_assert_int_eq(fclose(f), 0);
}

#define UNIT_MAIN(suite_fn) \
	int main(void) \
	{ \
		SRunner *sr = srunner_create(suite_fn()); \
		srunner_run_all(sr, CK_NORMAL); \
		int failed = srunner_ntests_failed(sr); \
		srunner_free(sr); \
		return failed ? EXIT_FAILURE : EXIT_SUCCESS; \
	}

#endif
