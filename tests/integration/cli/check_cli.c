// SPDX-License-Identifier: GPL-2.0
/* The real binary's answers to bad input: one line, exit 2; help, exit 0. No root needed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

START_TEST(help_exits_zero)
{
	struct run_result r;

	run_cmd((char *[]){ (char *)profile_bin(), "-h", NULL }, 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "usage: profile [-h] [-p PID | -L TID]"));
	run_result_free(&r);
}
END_TEST

static const char *const bad_args[][4] = {
	{ "-p", "2147483000" },
	{ "-p", "12x" },
	{ "-U", "-K" },
	{ "-F", "0" },
	{ "0" },
	{ "--backend", "gpu" },
	{ "-C", "4096" },
	{ "--stack-storage-size", "-1" },
	{ "--format", "html" },
	{ "--unwind", "lbr" },
	{ "--unwind", "fp", "--stack-dump-size", "4096" },
};

START_TEST(bad_input_exits_2_with_one_line)
{
	char *argv[6] = { (char *)profile_bin() };
	struct run_result r;

	for (int i = 0; i < 4 && bad_args[_i][i]; i++)
		argv[i + 1] = (char *)bad_args[_i][i];
	run_cmd(argv, 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 2);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(!strncmp(r.err, "profile: ", 9), "stderr: %s", r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
	run_result_free(&r);
}
END_TEST

START_TEST(output_refuses_a_symlink)
{
	char link_path[] = "/tmp/profile-out-XXXXXX";
	struct run_result r;

	close(mkstemp(link_path));
	unlink(link_path);
	ck_assert_int_eq(symlink("/tmp/profile-victim-file", link_path), 0);
	run_cmd((char *[]){ (char *)profile_bin(), "-f", "--output", link_path, "1", NULL }, 10, 0,
		&r);
	unlink(link_path);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_ptr_nonnull(strstr(r.err, "it is a symbolic link"));
	ck_assert_int_ne(access("/tmp/profile-victim-file", F_OK), 0);
	run_result_free(&r);
}
END_TEST

Suite *cli_suite(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("usage");

	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, help_exits_zero);
	tcase_add_test(tc, output_refuses_a_symlink);
	tcase_add_loop_test(tc, bad_input_exits_2_with_one_line, 0,
			    sizeof(bad_args) / sizeof(bad_args[0]));
	suite_add_tcase(s, tc);
	return s;
}
