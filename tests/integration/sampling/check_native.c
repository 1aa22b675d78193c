// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend's in-kernel unwinder (issue 45, bpf/native.bpf.h) on
 * workloads built without frame pointers, as root: --unwind auto, the
 * store (backend-bpf/native_store.c) loading the tables of the processes
 * the program notes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/tests.h"

static struct run_result r, d;

static void teardown(void)
{
	run_result_free(&r);
	run_result_free(&d);
}

#define NATIVE(...)                                                                        \
	((char *[]){ (char *)profile_bin(), "-v", "--backend", "bpf", "--unwind", "auto",       \
		     __VA_ARGS__, NULL })

/* main's 40-deep recursion from _start, ending in its loop. */
static void deep_chain(char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "nofp;_start;__libc_start_main;__libc_start_call_main;main;");

	for (int i = 0; i < 40 && n < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "nofp_recurse;");
	snprintf(buf + n, size - n, "nofp_c");
}

/*
 * The samples of the folded lines that end in leaf (a frame name, then the
 * count): user-mode samples, those without kernel frames (-a marks them).
 */
static uint64_t ending_in(const char *out, const char *leaf)
{
	char needle[64];
	uint64_t total = 0;
	const char *p = out;

	snprintf(needle, sizeof(needle), ";%s ", leaf);
	while ((p = strstr(p, needle))) {
		total += strtoull(p + strlen(needle), NULL, 10);
		p += strlen(needle);
	}
	return total;
}

/*
 * Loaded, and its maps made for a command and its children, not for the
 * host (-v: "of 13.0 MB the kernel allocated"; 54 MB system-wide).
 */
static void assert_loaded(const struct run_result *res)
{
	const char *alloc;
	double mb = -1;

	ck_assert_msg(res->exit_code == 0, "exit %d: %.500s", res->exit_code, res->err);
	ck_assert_msg(strstr(res->err, "user stacks unwound by the program from the binaries' "
					"tables") != NULL,
		      "not loaded: %.2000s", res->err);
	alloc = strstr(res->err, " MB in the maps (of ");
	if (alloc)
		sscanf(alloc, " MB in the maps (of %lf", &mb);
	ck_assert_msg(mb > 0 && mb < 20, "the maps' allocation: %.1f MB: %.2000s", mb, res->err);
}

/*
 * 97 in 100 of the recursion's samples whole, from _start to the loop, with
 * no frame pointer: of its user-mode samples, or of all where the program
 * reads a kernel-mode sample's user registers (5.15).
 */
START_TEST(stacks_without_frame_pointers_reach_start_in_the_kernel)
{
	char chain[1024];
	uint64_t whole, n;

	run_cmd(NATIVE("-F", "499", "-a", "-f", "--", (char *)workload("nofp"), "deep", "2", "40"),
		60, 0, &r);
	assert_loaded(&r);
	deep_chain(chain, sizeof(chain));
	/* Kernel-mode samples too (their user registers read): their kernel frames after. */
	whole = folded_count_prefix(r.out, chain);
	n = folded_count(r.out, ";nofp_c");
	ck_assert_msg(n >= 200, "%llu samples in nofp_c: %.2000s", (unsigned long long)n, r.err);
	ck_assert_msg(whole * 100 >= n * 97, "%llu of %llu whole:\n%.3000s",
		      (unsigned long long)whole, (unsigned long long)n, r.out);
	ck_assert_msg(strstr(r.err, " 0 ids without a stack") != NULL, "%.2000s", r.err);
}
END_TEST

/* The main thread from _start, the worker from clone3 (an END rule: libc's thread start). */
START_TEST(both_threads_reach_their_entries)
{
	uint64_t full, n;

	run_cmd(NATIVE("-F", "499", "-a", "-f", "--", (char *)workload("nofp"), "chain", "2"), 60,
		0, &r);
	assert_loaded(&r);
	full = folded_count_exact(r.out, "nofp;_start;__libc_start_main;__libc_start_call_main;"
					 "main;nofp_a;nofp_b;nofp_c") +
	       folded_count_exact(r.out, "nofp;clone3;start_thread;worker;nofp_a;nofp_b;nofp_c");
	n = ending_in(r.out, "nofp_c");
	ck_assert_msg(n >= 200 && full * 100 >= n * 97, "%llu of %llu whole:\n%.3000s",
		      (unsigned long long)full, (unsigned long long)n, r.out);
}
END_TEST

/*
 * The same stacks as --unwind dwarf's (libunwind over stack copies) for
 * the same workload: their most frequent stacks are one, and 97 in 100 of
 * the user-mode samples have a stack that dwarf's run has too (those taken
 * before the process's tables were loaded have frame-pointer stacks).
 */
static const char *top_stack(const char *out, char *buf, size_t size)
{
	uint64_t best = 0;
	const char *line = out;

	buf[0] = 0;
	while (line && *line) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		sp = memrchr(line, ' ', len);
		if (sp && strtoull(sp + 1, NULL, 10) > best && (size_t)(sp - line) < size) {
			best = strtoull(sp + 1, NULL, 10);
			memcpy(buf, line, (size_t)(sp - line));
			buf[sp - line] = 0;
		}
		line = nl ? nl + 1 : NULL;
	}
	return buf;
}

START_TEST(stacks_equal_dwarf_mode_stacks)
{
	static char a[4096], b[4096], stack[4096];
	uint64_t same = 0, total = 0;
	const char *line;

	run_cmd(NATIVE("-F", "499", "-a", "-f", "--", (char *)workload("nofp"), "deep", "2", "40"),
		60, 0, &r);
	assert_loaded(&r);
	run_ok(&d, (char *[]){ (char *)profile_bin(), "--backend", "bpf", "-F", "499", "-a", "-f",
			       "--unwind", "dwarf", "--", (char *)workload("nofp"), "deep", "2",
			       "40", NULL },
	       60);
	ck_assert_str_eq(top_stack(r.out, a, sizeof(a)), top_stack(d.out, b, sizeof(b)));
	for (line = r.out; line && *line;) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);

		sp = memrchr(line, ' ', len);
		if (sp && !memmem(line, len, "_[k]", 4) && (size_t)(sp - line) + 3 < sizeof(stack)) {
			uint64_t c = strtoull(sp + 1, NULL, 10);

			/* A whole line of dwarf's: from a line's start to its count. */
			stack[0] = '\n';
			memcpy(stack + 1, line, (size_t)(sp - line) + 1);
			stack[sp - line + 2] = 0;
			total += c;
			if (!strncmp(d.out, stack + 1, strlen(stack + 1)) || strstr(d.out, stack))
				same += c;
		}
		line = nl ? nl + 1 : NULL;
	}
	ck_assert_msg(total >= 200 && same * 100 >= total * 97,
		      "%llu of %llu samples with dwarf's stacks:\n%.3000s\ndwarf:\n%.3000s",
		      (unsigned long long)same, (unsigned long long)total, r.out, d.out);
}
END_TEST

/*
 * A Python process: the finish program hands the sample to the Python walk
 * (tail calls: 22 at most for the native walk, then the walk's 10), whose
 * frames go under the native stack the tables unwound from _start.
 */
START_TEST(python_frames_follow_the_native_walk)
{
	char script[512];
	uint64_t with_py, whole;

	snprintf(script, sizeof(script), "%s/tests/workloads/python/deep.py", getenv("PROFILE_SRCDIR"));
	run_cmd(NATIVE("-F", "199", "-f", "--", "python3", script, "2", "30"), 60, 0, &r);
	assert_loaded(&r);
	with_py = folded_count(r.out, ";recurse (deep.py:");
	whole = folded_count(r.out, "python3;_start;__libc_start_main;__libc_start_call_main;"
				    "Py_BytesMain;");
	ck_assert_msg(with_py >= 100, "%llu with Python frames:\n%.3000s",
		      (unsigned long long)with_py, r.out);
	ck_assert_msg(whole * 100 >= (with_py + 0) * 90, "%llu from _start of %llu:\n%.3000s",
		      (unsigned long long)whole, (unsigned long long)with_py, r.out);
}
END_TEST

/* A kernel that refuses the program: -v says so, and auto takes stack copies, as dwarf. */
START_TEST(refused_the_program_auto_takes_stack_copies)
{
	char chain[1024];
	uint64_t whole, n;

	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NATIVE_REFUSED=1", (char *)seams_bin(),
			    "-v", "--backend", "bpf", "--unwind", "auto", "-F", "499", "-a", "-f",
			    "--", (char *)workload("nofp"), "deep", "2", "40", NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.500s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "the kernel refused the program that unwinds user stacks") &&
			      strstr(r.err, "stack copies instead") &&
			      !strstr(r.err, "native unwinding:"),
		      "-v:\n%.3000s", r.err);
	deep_chain(chain, sizeof(chain));
	whole = folded_count_exact(r.out, chain);
	n = ending_in(r.out, "nofp_c");
	ck_assert_msg(n >= 200 && whole * 100 >= n * 97, "%llu of %llu whole:\n%.3000s",
		      (unsigned long long)whole, (unsigned long long)n, r.out);
}
END_TEST

/*
 * Where the copies are refused too (the probe no longer loads them when the
 * tables' program is what runs): a warning, and frame-pointer stacks, not a
 * failed run.
 */
START_TEST(refused_the_program_and_the_copies_frame_pointers)
{
	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NATIVE_REFUSED=1",
			    "PROFILE_TEST_DWARF_REFUSED=1", (char *)seams_bin(), "--backend", "bpf",
			    "--unwind", "auto", "-F", "499", "-a", "-f", "--",
			    (char *)workload("nofp"), "deep", "1", "40", NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.500s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "the stack copies were refused too") &&
			      strstr(r.err, "user stacks by frame pointers"),
		      "stderr:\n%.3000s", r.err);
	ck_assert_msg(ending_in(r.out, "nofp_c") >= 100, "%.3000s", r.out);
}
END_TEST

/* The count -v gives after `what` on its native unwinding line of walks, or -1. */
static long long walks_count(const char *err, const char *what)
{
	const char *line = strstr(err, "stacks walked ("), *p;
	const char *eol = line ? strchr(line, '\n') : NULL;

	for (p = line; p && (!eol || p < eol); p++) {
		const char *q = p;

		while (q > line && q[-1] >= '0' && q[-1] <= '9')
			q--;
		if (q < p && p[0] == ' ' && !strncmp(p + 1, what, strlen(what)))
			return strtoll(q, NULL, 10);
	}
	return -1;
}

/*
 * A new process's samples taken before its tables are loaded (read 800 ms
 * late here, as the kernel matrix's emulated guests compile them) go as
 * stack copies, unwound here: whole from the first sample, counted in -v.
 * Without the copies (refused), those samples are frame-pointer walks,
 * counted too, and most of them lose the deep recursion's callers. The
 * 4.9 program's copies (no bpf_task_pt_regs) take user-mode samples: the
 * recursion's.
 */
START_TEST(samples_before_the_tables_are_stack_copies)
{
	static const char *const seams[] = { "PROFILE_TEST_NONE=1", "PROFILE_TEST_DWARF_REFUSED=1",
					     "PROFILE_TEST_NO_TASK_REGS=1" };
	long long copied, by_fp;
	char chain[1024];
	uint64_t whole, n;

	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NATIVE_LATE_MS=800", (char *)seams[_i],
			    (char *)seams_bin(), "-v", "--backend", "bpf", "-F", "499", "-f", "--",
			    (char *)workload("nofp"), "deep", "2", "40", NULL },
		60, 0, &r);
	assert_loaded(&r);
	deep_chain(chain, sizeof(chain));
	whole = folded_count_exact(r.out, chain);
	n = ending_in(r.out, "nofp_c");
	copied = walks_count(r.err, "of processes not loaded as stack copies");
	by_fp = walks_count(r.err, "of processes not loaded (");
	ck_assert_msg(n >= 400 && copied >= 0 && by_fp >= 0, "%llu samples, -v:\n%.3000s",
		      (unsigned long long)n, r.err);
	if (_i == 1) {
		ck_assert_msg(strstr(r.err, "the stack copies were refused") && copied == 0 &&
				      by_fp >= 200 && whole * 10 < n * 7,
			      "%llu of %llu whole, %lld copied, %lld by frame pointers:\n%.3000s",
			      (unsigned long long)whole, (unsigned long long)n, copied, by_fp, r.err);
		return;
	}
	ck_assert_msg(strstr(r.err, _i ? "kernel-mode ones' too, from the top of the kernel stack"
				       : "kernel-mode ones' too, from bpf_task_pt_regs"),
		      "%.3000s", r.err);
	ck_assert_msg(copied >= 200 && whole * 100 >= n * 97,
		      "%llu of %llu whole, %lld copied, %lld by frame pointers:\n%.3000s\n%.3000s",
		      (unsigned long long)whole, (unsigned long long)n, copied, by_fp, r.err, r.out);
}
END_TEST

/*
 * dd copying a byte at a time spends most of its samples in the kernel:
 * their user stacks are unwound from the task's user registers, by
 * bpf_task_pt_regs (5.15 with BTF) or, without it (the test seam loads the
 * 4.9 variant), from the top of the task's kernel stack, where the entry
 * code saved them. Debian's dd keeps no frame pointers: nine in ten whole.
 */
START_TEST(kernel_mode_samples_unwound_from_the_task_registers)
{
	const char *no_regs = _i ? "PROFILE_TEST_NO_TASK_REGS=1" : "PROFILE_TEST_NONE=1";
	uint64_t whole, n;

	run_cmd((char *[]){ "/usr/bin/env", (char *)no_regs, (char *)seams_bin(), "-v",
			    "--backend", "bpf", "-U", "-F", "499", "-f", "--", "/bin/dd",
			    "if=/dev/zero", "of=/dev/null", "bs=1", "count=2000000", NULL },
		60, 0, &r);
	assert_loaded(&r);
	ck_assert_msg(strstr(r.err, _i ? "at the top of its kernel stack" : "bpf_task_pt_regs"),
		      "%.2000s", r.err);
	n = folded_count(r.out, "dd;");
	whole = folded_count(r.out, ";__libc_start_main;");
	ck_assert_msg(n >= 100 && whole * 10 >= n * 9, "%s: %llu of %llu whole:\n%.3000s",
		      _i ? "stack top" : "task regs", (unsigned long long)whole,
		      (unsigned long long)n, r.out);
}
END_TEST

/*
 * A library mapped after its process was read (dlopener spins 300 ms,
 * then loads a copy of libspin built without frame pointers): until the
 * process is read again (700 ms after its first read here, as a dear read
 * or a slow compile puts it off), a walk whose leaf is in it is sent as a
 * stack copy, whole. By frame pointers instead, the step from the unknown
 * leaf took main's rbp and lost main (dlopener;...;__libc_start_call_main;
 * libspin_hot), a complete walk that never had the process read again.
 */
START_TEST(a_leaf_in_a_library_mapped_since_the_read_is_a_stack_copy)
{
	uint64_t hot, whole;
	long long leaf_copies;

	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NATIVE_REREAD_MS=700",
			    (char *)seams_bin(), "-v", "--backend", "bpf", "-U", "-F", "499", "-f",
			    "--", (char *)workload("dlopener"),
			    (char *)workload("libspin_nofp.so"), "1", "0.3", NULL },
		60, 0, &r);
	assert_loaded(&r);
	hot = ending_in(r.out, "libspin_hot");
	whole = folded_count_from_entry(r.out, "dlopener;__libc_start_call_main;main;libspin_hot");
	leaf_copies = walks_count(r.err, "walks whose leaf was in code mapped since");
	ck_assert_msg(hot >= 300 && whole * 100 >= hot * 97 && leaf_copies >= 50,
		      "%llu of %llu whole, %lld leaf copies:\n%.2000s\n%.2000s",
		      (unsigned long long)whole, (unsigned long long)hot, leaf_copies, r.err,
		      r.out);
}
END_TEST

Suite *native_suite(void)
{
	Suite *s = suite_create("native");
	TCase *tc = tcase_create("unwind");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, stacks_without_frame_pointers_reach_start_in_the_kernel);
	tcase_add_test(tc, both_threads_reach_their_entries);
	tcase_add_test(tc, stacks_equal_dwarf_mode_stacks);
	tcase_add_test(tc, python_frames_follow_the_native_walk);
	tcase_add_test(tc, refused_the_program_auto_takes_stack_copies);
	tcase_add_test(tc, refused_the_program_and_the_copies_frame_pointers);
	tcase_add_loop_test(tc, kernel_mode_samples_unwound_from_the_task_registers, 0, 2);
	tcase_add_loop_test(tc, samples_before_the_tables_are_stack_copies, 0, 3);
	tcase_add_test(tc, a_leaf_in_a_library_mapped_since_the_read_is_a_stack_copy);
	suite_add_tcase(s, tc);
	return s;
}
