/* unit.h — shared main() for the Check unit test programs.
 *
 * Each tests/unit/test_<module>.c defines the suite of its module and ends
 * with UNIT_MAIN(<module>_suite). Each file is its own program, so suites are
 * added without touching a shared runner. */
#ifndef TAPLESS_UNIT_H
#define TAPLESS_UNIT_H

#include <check.h>
#include <stdlib.h>

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
