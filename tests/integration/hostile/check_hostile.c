// SPDX-License-Identifier: GPL-2.0
/*
 * What an unprivileged user, or a busy host, can do to a root profiler
 * (issue 14): names that would add frames or lines, limits the kernel
 * would turn into a livelock, a launched command's signal state, closed
 * standard fds, SIGHUP, failing writes. Each case failed before its fix.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-hostile-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-hostile-XXXXXX");
}

/* A process whose comm is "x;y\nz": the name of the binary it runs. */
START_TEST(a_process_name_adds_no_frame_or_line)
{
	char path[256], cmd[600];

	snprintf(path, sizeof(path), "%s/x;y\nz", dir);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", workload("ratio31"), path);
	ck_assert_int_eq(system(cmd), 0);
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)test_backends[_i], "-F",
			    "499", "-f", "--", path, "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
	/* One line per stack, each the escaped name's; none starts with the name's tail. */
	ck_assert_uint_gt(count_lines_starting_with(r.out, "x\\x3by\\x0az;"), 0);
	ck_assert_uint_eq(count_lines_starting_with(r.out, "z;"), 0);
	ck_assert_uint_eq(count_lines_starting_with(r.out, "x;"), 0);
	ck_assert_uint_gt(folded_count(r.out, "x\\x3by\\x0az;"), 150);
}
END_TEST

/* The kernel caps rates at perf_event_max_sample_rate; asking more is a usage error. */
START_TEST(limits_the_kernel_would_refuse_are_usage_errors)
{
	static const char *const cases[][3] = {
		{ "-F", "100001", "perf_event_max_sample_rate" },
		{ "-c", "1000", "at least" },
		{ "--stack-storage-size", "16000000", "kernel memory" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_cmd((char *[]){ (char *)profile_bin(), (char *)cases[i][0], (char *)cases[i][1],
				    "1", NULL },
			10, 0, &r);
		ck_assert_msg(r.exit_code == 2, "%s %s: exit %d", cases[i][0], cases[i][1],
			      r.exit_code);
		ck_assert_msg(strstr(r.err, cases[i][2]), "%s", r.err);
		ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s",
			      r.err);
		run_result_free(&r);
	}
}
END_TEST

START_TEST(a_thread_id_is_not_a_process)
{
	struct bg_proc bg;
	char path[64], tid[16] = "";
	FILE *f;

	bg_start(&bg, (char *[]){ (char *)workload("ratio31"), "5", NULL });
	/* ratio31's second thread. */
	snprintf(path, sizeof(path), "ls /proc/%d/task | sort -n | tail -1", (int)bg.pid);
	f = popen(path, "r");
	ck_assert_ptr_nonnull(fgets(tid, sizeof(tid), f));
	pclose(f);
	tid[strcspn(tid, "\n")] = '\0';
	ck_assert_int_ne(atoi(tid), bg.pid);
	run_cmd((char *[]){ (char *)profile_bin(), "-p", tid, "1", NULL }, 10, 0, &r);
	bg_stop(&bg);
	ck_assert_int_eq(r.exit_code, 2);
	ck_assert_msg(strstr(r.err, "is a thread of process"), "%s", r.err);
}
END_TEST

/*
 * The profiler ignores SIGPIPE; the command it runs must not inherit that. What
 * the command gets is what it would get without the profiler: a CI runner may
 * start everything with some signals ignored, and those stay ignored.
 * grep reads its own status after sh's exec: the shell's own, read while it
 * forks, would show every signal blocked around its vfork.
 */
START_TEST(a_launched_command_gets_default_signals)
{
	char *grep_sig[] = { "/bin/sh", "-c", "exec grep -E '^Sig(Ign|Blk)' /proc/self/status", NULL };
	char *direct;

	run_cmd(grep_sig, 20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	direct = strdup(r.out);
	ck_assert_ptr_nonnull(strstr(direct, "SigIgn:"));
	run_result_free(&r);
	run_cmd((char *[]){ (char *)profile_bin(), "-F", "49", "-f", "--", grep_sig[0],
			    grep_sig[1], grep_sig[2], NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_msg(strstr(r.out, direct), "direct:\n%s\nunder profile:\n%s", direct, r.out);
	free(direct);
}
END_TEST

/* Started with stderr closed, the report file must not be fd 2 and receive diagnostics. */
START_TEST(closed_stderr_keeps_diagnostics_out_of_the_report)
{
	char out[256], cmd[700], *text;
	FILE *f;
	size_t n;

	snprintf(out, sizeof(out), "%s/report", dir);
	snprintf(cmd, sizeof(cmd), "exec 2>&-; '%s' -v -F 49 -f --output '%s' -- /bin/true",
		 profile_bin(), out);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	text = calloc(1, 1 << 16);
	n = fread(text, 1, (1 << 16) - 1, f);
	fclose(f);
	ck_assert_msg(!strstr(text, "profile:"), "diagnostics in the report (%zu bytes): %.300s", n,
		      text);
	free(text);
}
END_TEST

/* A hang-up (the terminal went away) ends the run with its report, as Ctrl-C does. */
START_TEST(sighup_prints_the_report)
{
	char cmd[700], path[300];
	struct stat st;

	/*
	 * The profiler in the background, its report to a file; SIGHUP 0.5 s after
	 * it said sampling started (its set-up takes over 1 s on a loaded machine,
	 * 1.6 s under AddressSanitizer: a hang-up before that ends it with no report).
	 */
	snprintf(path, sizeof(path), "%s/hup", dir);
	snprintf(cmd, sizeof(cmd),
		 "cd '%s' && { '%s' -v -F 99 -f --output hup -- '%s' 5 2> err & p=$!; i=0; "
		 "until grep -q 'sampling started' err || [ $i -ge 150 ]; do "
		 "sleep 0.1; i=$((i + 1)); done; sleep 0.5; "
		 "kill -HUP $p; wait $p; echo exit=$?; cat err >&2; }",
		 dir, profile_bin(), workload("ratio31"));
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 20, 0, &r);
	/* The command got the hang-up too: its status (129) is the profiler's. */
	ck_assert_msg(strstr(r.out, "exit=129"), "%s / %s", r.out, r.err);
	ck_assert_int_eq(stat(path, &st), 0);
	ck_assert_int_gt(st.st_size, 10);
}
END_TEST

/* A run that fails leaves no partial report behind; a full disk is named as such. */
START_TEST(failed_runs_leave_no_partial_file_and_name_the_errno)
{
	char out[256];

	snprintf(out, sizeof(out), "%s/none", dir);
	run_cmd((char *[]){ (char *)profile_bin(), "-f", "--output", out, "--",
			    "/nonexistent/command", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_int_ne(access(out, F_OK), 0);
	run_result_free(&r);

	run_cmd((char *[]){ "/bin/sh", "-c", "exec \"$0\" -F 99 -- /bin/sleep 0.5 > /dev/full",
			    (char *)profile_bin(), NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.err, "No space left on device"), "%s", r.err);
}
END_TEST

Suite *hostile_suite(void)
{
	Suite *s = suite_create("hostile");
	TCase *tc = tcase_create("hostile");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_process_name_adds_no_frame_or_line, 0, 2);
	tcase_add_test(tc, limits_the_kernel_would_refuse_are_usage_errors);
	tcase_add_test(tc, a_thread_id_is_not_a_process);
	tcase_add_test(tc, a_launched_command_gets_default_signals);
	tcase_add_test(tc, closed_stderr_keeps_diagnostics_out_of_the_report);
	tcase_add_test(tc, sighup_prints_the_report);
	tcase_add_test(tc, failed_runs_leave_no_partial_file_and_name_the_errno);
	suite_add_tcase(s, tc);
	return s;
}
