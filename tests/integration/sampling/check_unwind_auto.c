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
#include <time.h>
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

static const char *offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}

/* The heaviest stack of comm's (its line without the count) in folded out, "" if none. */
static void heaviest(const char *out, const char *comm, char *stack, size_t len)
{
	unsigned long long best = 0;
	size_t n = strlen(comm);

	stack[0] = '\0';
	for (const char *line = out; *line;) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t l = nl ? (size_t)(nl - line) : strlen(line);

		sp = memrchr(line, ' ', l);
		if (sp && !strncmp(line, comm, n) && line[n] == ';' &&
		    strtoull(sp + 1, NULL, 10) > best && (size_t)(sp - line) < len) {
			best = strtoull(sp + 1, NULL, 10);
			memcpy(stack, line, sp - line);
			stack[sp - line] = '\0';
		}
		line += l + (nl != NULL);
	}
}

/*
 * Off-CPU time of code without frame pointers, unwound whole: bpf under
 * auto by the tables in its switch program, perf with --unwind dwarf over
 * copies taken at switch-out (its auto walks frame pointers off-CPU), the
 * same stack on either, and nearly all the time under it (bpf walks a
 * process's first switch-outs, before its tables are read, by frame
 * pointers).
 */
START_TEST(off_cpu_stacks_are_complete_and_the_same_on_both_backends)
{
	static const char whole[] = "nofp;_start;__libc_start_main;__libc_start_call_main;main;"
				    "nofp_block_a;nofp_block_b;nanosleep;clock_nanosleep";
	char stacks[2][1024];

	for (int i = 0; i < 2; i++) {
		unsigned long long total, got;

		run_ok(&r, ((char *[]){ (char *)offcputime_bin(), "--backend",
					(char *)test_backends[i], "--unwind", i ? "dwarf" : "auto",
					"-U", "-f", "--", (char *)workload("nofp"), "block", "1",
					NULL }),
		       30);
		total = folded_count_prefix(r.out, "nofp;");
		got = folded_count_prefix(r.out, whole);
		ck_assert_msg(got > 600000 && got * 100 >= total * 80,
			      "%s: %llu of %llu us under the whole stack:\n%.1000s",
			      test_backends[i], got, total, r.out);
		heaviest(r.out, "nofp", stacks[i], sizeof(stacks[i]));
		run_result_free(&r);
	}
	ck_assert_msg(stacks[0][0] && !strcmp(stacks[0], stacks[1]), "bpf: %s\nperf: %s",
		      stacks[0], stacks[1]);
}
END_TEST

/*
 * offcputime system-wide on bpf reads the host's processes at the start: a
 * thread's first wait in the run, here a second long (nofp block's naps), is
 * unwound whole, not walked by frame pointers for want of its process's
 * tables (noted at that switch-out, read after it).
 */
START_TEST(system_wide_off_cpu_reads_the_hosts_processes_first)
{
	static const char whole[] = "nofp;_start;__libc_start_main;__libc_start_call_main;main;"
				    "nofp_block_a;nofp_block_b;nanosleep;clock_nanosleep";
	unsigned long long total, got;
	struct bg_proc bg;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "echo pid=$$; exec %s block 8 1000", workload("nofp"));
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", cmd, NULL });
	usleep(300000);	/* the exec done */
	run_ok(&r, ((char *[]){ (char *)offcputime_bin(), "--backend", "bpf", "-U", "-f",
				"--verbose", "2", NULL }),
	       30);
	bg_stop(&bg);
	total = folded_count_prefix(r.out, "nofp;");
	got = folded_count_prefix(r.out, whole);
	ck_assert_msg(strstr(r.err, "processes of the host read at the start"), "-v:\n%s", r.err);
	ck_assert_msg(total > 800000 && got * 100 >= total * 95,
		      "%llu of nofp's %llu us under the whole stack:\n%.2000s", got, total, r.out);
}
END_TEST

/* Sum of the counts of folded lines that start with prefix and contain needle. */
static unsigned long long count_prefix_with(const char *out, const char *prefix,
					    const char *needle)
{
	unsigned long long sum = 0;
	size_t n = strlen(prefix);

	for (const char *line = out; *line;) {
		const char *nl = strchr(line, '\n'), *sp, *hit;
		size_t l = nl ? (size_t)(nl - line) : strlen(line);

		sp = memrchr(line, ' ', l);
		hit = strstr(line, needle);
		if (sp && !strncmp(line, prefix, n) && hit && hit < sp)
			sum += strtoull(sp + 1, NULL, 10);
		line += l + (nl != NULL);
	}
	return sum;
}

/*
 * A Debian program without frame pointers, off-CPU: gzip blocked in read()
 * on a pipe fed a line every 10 ms. Its waits reach __libc_start_main by
 * default on bpf, with --unwind dwarf on perf (by frame pointers they end
 * at read).
 */
START_TEST(off_cpu_waits_of_a_stock_program_reach_its_entry)
{
	unsigned long long total, whole;

	run_ok(&r, ((char *[]){ (char *)offcputime_bin(), "--backend",
				(char *)test_backends[_i], "--unwind", _i ? "dwarf" : "auto", "-U",
				"-f", "--", "/bin/sh", "-c",
				"for i in $(seq 100); do echo line $i; sleep 0.01; done | "
				"gzip -c > /dev/null",
				NULL }),
	       30);
	total = folded_count_prefix(r.out, "gzip;");
	whole = count_prefix_with(r.out, "gzip;", ";__libc_start_main;__libc_start_call_main;");
	ck_assert_msg(total > 500000 && whole * 100 >= total * 80,
		      "%s: %llu of gzip's %llu us under __libc_start_main:\n%.2000s",
		      test_backends[_i], whole, total, r.out);
}
END_TEST

/* --wall under auto on bpf: samples and off-CPU stacks, both by the programs' tables. */
START_TEST(wall_on_bpf_unwinds_samples_and_off_cpu_stacks_by_the_tables)
{
	unsigned long long want, got;

	backend = "bpf";
	run_ok(&r, PROFILE("--wall", "--unwind", "auto", "-U", "-f", "-v", "--",
			   (char *)workload("blocking"), "sleep", "1"),
	       30);
	ck_assert_msg(strstr(r.err, "bpf: off-CPU user stacks unwound by the program from the "
				    "binaries' tables") &&
			      strstr(r.err, "bpf: user stacks unwound by the program from the "
					    "binaries' tables"),
		      "-v:\n%s", r.err);
	want = workload_field(r.out, "blk-sleep", "us");
	got = folded_count_prefix(r.out, "blk-sleep;clone3;start_thread;sleep_thread;sleep_loop;"
					 "nanosleep;clock_nanosleep");
	ck_assert_msg(want > 500000 && got * 100 >= want * 80, "%llu of %llu us:\n%.1000s", got,
		      want, r.out);
}
END_TEST

#define AS_NOBODY "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"

/*
 * An unprivileged user's perf under auto, 64 KiB of locked memory a CPU and
 * 64 KiB of ulimit -l: 16 KiB copies cannot fit, smaller ones do, with a
 * warning, and the stacks through libc's code without frame pointers are
 * still complete.
 */
START_TEST(unprivileged_copies_shrink_to_fit_locked_memory)
{
	char old[32] = "516";
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r+");
	uint64_t total, full;

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(old, sizeof(old), f));
	fclose(f);
	ck_assert_int_eq(system("echo 64 > /proc/sys/kernel/perf_event_mlock_kb"), 0);
	run_cmd((char *[]){ "/usr/bin/prlimit", "--memlock=65536", "--", AS_NOBODY,
			    (char *)profile_bin(), "--unwind", "auto", "-v", "-F", "499", "-f", "--",
			    (char *)workload("nofpsort"), "2", NULL },
		30, 0, &r);
	f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "w");
	fputs(old, f);
	fclose(f);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.2000s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "backend perf: usable; chosen") &&
			      strstr(r.err, "warning: unwind auto: stack copies of 8192 bytes, not 16384"),
		      "%s", r.err);
	total = folded_total(r.out, NULL);
	full = folded_count(r.out, "__libc_start_main;__libc_start_call_main;main");
	ck_assert_msg(total > 100 && full * 100 >= total * 90, "%llu of %llu reach main:\n%.1000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
}
END_TEST

/*
 * Ctrl-C while the bpf backend's programs load (each made seconds long by a
 * seam) under auto: set-up ends at once, not after the loads that follow.
 */
START_TEST(sigint_during_a_slow_set_up_ends_it_at_once)
{
	struct timespec t0, t1;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_SLOW_BPF_LOAD=1", (char *)seams_bin(),
			    "--backend", "bpf", "--unwind", "auto", "-F", "99", "-f", "5", NULL },
		60, 0.5, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(s < 2.5, "ended %.1f s after the start, SIGINT at 0.5 s: %.300s", s, r.err);
	ck_assert_msg(strstr(r.err, "interrupted during set-up"), "stderr: %.300s", r.err);
}
END_TEST

/*
 * perf under auto, system-wide (copies for every sample): processes that
 * ended before the report keep their frames, unwound up to _start.
 */
START_TEST(processes_that_exit_keep_their_frames_with_perf)
{
	char cmd[1024];
	uint64_t all, spin;

	backend = "perf";
	snprintf(cmd, sizeof(cmd), "%s --backend perf --unwind auto -F 999 -f 8 & sleep 0.5; "
		 "%s 100 50; wait", profile_bin(), workload("shortlived"));
	run_ok(&r, (char *[]){ "/bin/sh", "-c", cmd, NULL }, 40);
	all = folded_count(r.out, "shortlived;");
	spin = folded_count(r.out, ";__libc_start_call_main;main;short_lived_spin");
	ck_assert_msg(all > 1000, "only %llu samples of shortlived", (unsigned long long)all);
	ck_assert_msg(spin * 100 >= all * 85, "spin %llu of %llu:\n%.1000s",
		      (unsigned long long)spin, (unsigned long long)all, r.out);
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
	tcase_add_test(tc, off_cpu_stacks_are_complete_and_the_same_on_both_backends);
	tcase_add_loop_test(tc, off_cpu_waits_of_a_stock_program_reach_its_entry, 0, 2);
	tcase_add_test(tc, system_wide_off_cpu_reads_the_hosts_processes_first);
	tcase_add_test(tc, wall_on_bpf_unwinds_samples_and_off_cpu_stacks_by_the_tables);
	tcase_add_test(tc, unprivileged_copies_shrink_to_fit_locked_memory);
	tcase_add_test(tc, sigint_during_a_slow_set_up_ends_it_at_once);
	tcase_add_test(tc, processes_that_exit_keep_their_frames_with_perf);
	suite_add_tcase(s, tc);
	return s;
}
