// SPDX-License-Identifier: GPL-2.0
/*
 * The progress line of a timed run on a terminal (app/run/progress.c),
 * under a real pseudo-terminal: script(1) from util-linux runs the profiler
 * with its standard streams on a pty and copies what the pty shows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/tests.h"

#define ERASE "\r\033[K"

static struct run_result r;

static void teardown(void)
{
	run_result_free(&r);
}

/* Run shell command line cmd on a pty; what the terminal showed is in r.out. */
static void on_tty(const char *cmd)
{
	run_cmd((char *[]){ "/usr/bin/script", "-qec", (char *)cmd, "/dev/null", NULL }, 30, 0,
		&r);
	ck_assert_msg(r.exit_code == 0, "%s: exit %d\n%s%s", cmd, r.exit_code, r.out, r.err);
}

static size_t count(const char *s, const char *needle)
{
	size_t n = 0;

	for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

START_TEST(a_timed_run_shows_progress_then_erases_it)
{
	char cmd[512];
	const char *erase, *last;

	snprintf(cmd, sizeof(cmd), "'%s' --backend %s -F 99 -p %s 3", profile_bin(),
		 test_backends[_i], "$$");
	on_tty(cmd);
	/* Redrawn in place several times over 3 s, with the run's own numbers. */
	ck_assert_msg(count(r.out, "\rprofile: ") >= 4, "%s", r.out);
	ck_assert_msg(strstr(r.out, "/3 s, "), "%s", r.out);
	ck_assert_msg(strstr(r.out, " samples, 0 lost\033[K"), "%s", r.out);
	/* The last thing drawn is the erase, and the report comes after it. */
	erase = strstr(r.out, ERASE "\r\n");
	ck_assert_msg(erase, "not erased:\n%s", r.out);
	last = strrchr(r.out, '\033');
	ck_assert_ptr_eq(last, erase + 1);
}
END_TEST

START_TEST(offcputime_counts_switches)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "'%s/offcputime' --backend %s 2", getenv("PROFILE_ARTIFACTS"),
		 test_backends[_i]);
	on_tty(cmd);
	ck_assert_msg(strstr(r.out, "\roffcputime: "), "%s", r.out);
	ck_assert_msg(strstr(r.out, " switches, "), "%s", r.out);
	ck_assert_msg(strstr(r.out, ERASE), "%s", r.out);
}
END_TEST

/* --quiet; stderr not a terminal; folded stacks down a pipe; a run without a duration. */
START_TEST(no_progress_where_it_does_not_belong)
{
	char cmd[1024];
	const char *const forms[] = {
		"'%s' --quiet -F 49 1",
		"'%s' -F 49 1 2>/dev/null",
		"'%s' -f -F 49 1 | cat",
		"'%s' -F 49 -- sleep 1",
	};

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		snprintf(cmd, sizeof(cmd), forms[i], profile_bin());
		on_tty(cmd);
		ck_assert_msg(!strstr(r.out, "\033[K") && !strstr(r.out, " lost"), "%s:\n%s", cmd,
			      r.out);
		run_result_free(&r);
	}
}
END_TEST

Suite *progress_suite(void)
{
	Suite *s = suite_create("progress");
	TCase *tc = tcase_create("progress");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, a_timed_run_shows_progress_then_erases_it, 0, 2);
	tcase_add_loop_test(tc, offcputime_counts_switches, 0, 2);
	tcase_add_test(tc, no_progress_where_it_does_not_belong);
	suite_add_tcase(s, tc);
	return s;
}
