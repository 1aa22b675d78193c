// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind auto on real workloads, as root, once per backend: stacks
 * through libc's code without frame pointers are complete, and a process
 * whose every binary keeps frame pointers takes no stack copies where
 * events are per task (perf, -p).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static const char *backend;

#define PROFILE(...)                                                                       \
	((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, __VA_ARGS__, NULL })

static struct run_result r;

static void teardown(void)
{
	run_result_free(&r);
}

/* nofpsort's samples that reach main through libc's qsort, or main itself, in percent. */
static void assert_reach_main(const char *out, const char *how)
{
	size_t lines;
	uint64_t total = folded_total(out, &lines);
	uint64_t full = folded_count(out, "__libc_start_main;__libc_start_call_main;main");

	ck_assert_msg(total > 200, "%s: %llu samples:\n%.1000s", how, (unsigned long long)total,
		      out);
	ck_assert_msg(full * 100 >= total * 97, "%s: %llu of %llu samples reach main:\n%.2000s",
		      how, (unsigned long long)full, (unsigned long long)total, out);
	/* And through libc's frames: the comparator's callers are qsort's. */
	ck_assert_msg(folded_count(out, "main;nofpsort_run;qsort") * 100 >= total * 90,
		      "%s: too few through qsort:\n%.2000s", how, out);
}

START_TEST(a_launched_command_without_frame_pointers_has_complete_stacks)
{
	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "499", "-U", "-f", "-v", "--unwind", "auto", "--",
			   (char *)workload("nofpsort"), "2"),
		   30);
	assert_reach_main(r.out, backend);
	/* bpf: the program unwinds by the tables (bpf/native.bpf.h), no copies. */
	if (!strcmp(backend, "bpf"))
		ck_assert_msg(strstr(r.err, "user stacks unwound by the program from the binaries' "
					    "tables") &&
			      strstr(r.err, "native unwinding: libc.so.6: tables ("),
		      "-v:\n%s", r.err);
	else
		ck_assert_msg(strstr(r.err, "libc.so.6: copies ("), "-v:\n%s", r.err);
}
END_TEST

START_TEST(a_process_without_frame_pointers_takes_copies_and_has_complete_stacks)
{
	struct bg_proc bg;
	char pid[32];

	backend = test_backends[_i];
	bg_start(&bg, (char *[]){ (char *)workload("nofpsort"), "8", NULL });
	ck_assert_int_eq(sscanf(bg.first_line, "pid=%31[0-9]", pid), 1);
	run_ok(&r, PROFILE("-F", "499", "-U", "-f", "-v", "--unwind", "auto", "-p", pid, "2"), 30);
	bg_stop(&bg);
	assert_reach_main(r.out, backend);
	if (!strcmp(backend, "bpf")) {
		/* The program unwinds by the tables (bpf/native.bpf.h): -p's loaded at the start. */
		ck_assert_msg(strstr(r.err, "native unwinding: libc.so.6: tables (") &&
				      strstr(r.err, "native unwinding: nofpsort: tables ("),
			      "-v:\n%s", r.err);
		return;
	}
	/* libc.so.6 and ld.so keep no frame pointers: the process needs copies. */
	ck_assert_msg(strstr(r.err, "libc.so.6: copies (") &&
		      strstr(r.err, "nofpsort: copies (.eh_frame over each sample's stack copy; "
				    "0 of "),
		      "-v:\n%s", r.err);
	if (!strcmp(backend, "perf"))
		ck_assert_msg(strstr(r.err, "0 of 1 thread(s) walked by frame pointers"), "-v:\n%s",
			      r.err);
}
END_TEST

/* Every binary of fpfree keeps frame pointers: perf's event for it asks for no copy. */
START_TEST(a_process_with_frame_pointers_everywhere_takes_no_copies_with_perf)
{
	struct bg_proc bg;
	char pid[32], want[64];
	size_t lines;
	uint64_t total, full;

	backend = "perf";
	bg_start(&bg, (char *[]){ (char *)workload("fpfree"), "8", NULL });
	ck_assert_int_eq(sscanf(bg.first_line, "pid=%31[0-9]", pid), 1);
	run_ok(&r, PROFILE("-F", "499", "-U", "-f", "-v", "--unwind", "auto", "-p", pid, "2"), 30);
	bg_stop(&bg);
	total = folded_total(r.out, &lines);
	full = folded_count(r.out, "_start;fpfree_start;fpfree_main");
	ck_assert_msg(total > 200 && full * 100 >= total * 97, "%llu of %llu complete:\n%.1000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
	ck_assert_msg(strstr(r.err, "1 of 1 thread(s) walked by frame pointers (no stack copies)") &&
		      strstr(r.err, "fpfree: frame pointers (") && !strstr(r.err, ": copies ("),
		      "-v:\n%s", r.err);
	snprintf(want, sizeof(want), "unwind: 0 of %llu samples brought a stack copy",
		 (unsigned long long)total);
	ck_assert_msg(strstr(r.err, want), "want '%s' in -v:\n%s", want, r.err);
}
END_TEST

/* The workload is what it says: frame pointers lose the callers through qsort. */
START_TEST(frame_pointers_lose_the_callers_through_libc)
{
	uint64_t total, full;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "499", "-U", "-f", "--unwind", "fp", "--",
			   (char *)workload("nofpsort"), "2"),
		   30);
	total = folded_total(r.out, NULL);
	full = folded_count(r.out, "__libc_start_main;__libc_start_call_main;main");
	ck_assert_uint_gt(total, 100);
	ck_assert_msg(full * 2 < total, "fp: %llu of %llu reach main; is nofpsort built with frame "
		      "pointers?", (unsigned long long)full, (unsigned long long)total);
}
END_TEST

Suite *unwind_auto_suite(void)
{
	Suite *s = suite_create("unwind_auto");
	TCase *tc = tcase_create("auto");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, a_launched_command_without_frame_pointers_has_complete_stacks, 0, 2);
	tcase_add_loop_test(tc, a_process_without_frame_pointers_takes_copies_and_has_complete_stacks,
			    0, 2);
	tcase_add_test(tc, a_process_with_frame_pointers_everywhere_takes_no_copies_with_perf);
	tcase_add_loop_test(tc, frame_pointers_lose_the_callers_through_libc, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
