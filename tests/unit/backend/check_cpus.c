// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>

#include "compat/cpus.h"
#include "tests/support/tests.h"

START_TEST(parses_ranges_and_singles)
{
	int *cpus, nr = cpus__parse_list("0-2,5,7-8\n", &cpus);

	ck_assert_int_eq(nr, 6);
	ck_assert_int_eq(cpus[0], 0);
	ck_assert_int_eq(cpus[2], 2);
	ck_assert_int_eq(cpus[3], 5);
	ck_assert_int_eq(cpus[5], 8);
	free(cpus);
}
END_TEST

START_TEST(rejects_malformed_lists)
{
	const char *bad[] = { "", "a", "3-1", "1,,2", "1-", "-1", "1 2" };
	int *cpus;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_msg(cpus__parse_list(bad[i], &cpus) == -EINVAL, "accepted '%s'", bad[i]);
		ck_assert_ptr_null(cpus);
	}
}
END_TEST

START_TEST(reads_online_cpus)
{
	int *cpus, nr = cpus__online(&cpus);

	ck_assert_int_ge(nr, 1);
	ck_assert_int_eq(cpus[0], 0);
	free(cpus);
}
END_TEST

Suite *cpus_suite(void)
{
	Suite *s = suite_create("cpus");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, parses_ranges_and_singles);
	tcase_add_test(tc, rejects_malformed_lists);
	tcase_add_test(tc, reads_online_cpus);
	suite_add_tcase(s, tc);
	return s;
}
