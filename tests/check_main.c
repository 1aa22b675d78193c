// SPDX-License-Identifier: GPL-2.0
/*
 * The one test runner: every suite, one summary line. Suites tagged "root"
 * are skipped (with a message) when not run as root; CK_INCLUDE_TAGS and
 * CK_EXCLUDE_TAGS select further.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/tests.h"

int main(void)
{
	SRunner *sr = srunner_create(cpus_suite());
	int failed;

	srunner_add_suite(sr, options_suite());
	srunner_add_suite(sr, ring_suite());
	srunner_add_suite(sr, decode_suite());
	srunner_add_suite(sr, proctrack_suite());
	srunner_add_suite(sr, elfsym_suite());
	srunner_add_suite(sr, report_suite());
	srunner_add_suite(sr, unwind_suite());
	srunner_add_suite(sr, identical_suite());
	srunner_add_suite(sr, bpf_compat_suite());
	srunner_add_suite(sr, outputs_suite());
	srunner_add_suite(sr, cli_suite());
	srunner_add_suite(sr, integration_suite());
	srunner_add_suite(sr, dwarf_suite());
	srunner_add_suite(sr, compare_suite());
	srunner_add_suite(sr, restricted_suite());

	if (geteuid() != 0 && !getenv("CK_EXCLUDE_TAGS")) {
		fprintf(stderr, "tests: not root: skipping the tests tagged '%s'\n", TAG_ROOT);
		setenv("CK_EXCLUDE_TAGS", TAG_ROOT, 1);
	}
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
