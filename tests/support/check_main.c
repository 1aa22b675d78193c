// SPDX-License-Identifier: GPL-2.0
/*
 * The one test runner: every suite (the build lists every NAME_suite() of
 * tests/unit and tests/integration in suites.h), one summary line. Suites tagged "root"
 * are skipped (with a message) when not run as root; CK_INCLUDE_TAGS and
 * CK_EXCLUDE_TAGS select further.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/support/tests.h"

#define SUITE(name) Suite *name##_suite(void);
#include "suites.h"
#undef SUITE

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

#define SUITE(name) srunner_add_suite(sr, name##_suite());
#include "suites.h"
#undef SUITE

	if (geteuid() != 0 && !getenv("CK_EXCLUDE_TAGS")) {
		fprintf(stderr, "tests: not root: skipping the tests tagged '%s'\n", TAG_ROOT);
		setenv("CK_EXCLUDE_TAGS", TAG_ROOT, 1);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
