// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind dwarf on real workloads built without frame pointers, as root,
 * once per backend.
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

/* The complete stacks of nofp's chain: main thread from _start, worker from clone3. */
#define MAIN_CHAIN "nofp;_start;__libc_start_main;__libc_start_call_main;main;nofp_a;nofp_b;nofp_c"
#define THREAD_CHAIN "nofp;clone3;start_thread;worker;nofp_a;nofp_b;nofp_c"

/* At least 95% of nofp's samples have every caller, from main or the thread's entry on. */
static void assert_chains_complete(const char *out)
{
	uint64_t total = folded_total(out, NULL);
	uint64_t full = folded_count(out, "__libc_start_call_main;main;nofp_a;nofp_b;nofp_c") +
			folded_count(out, "start_thread;worker;nofp_a;nofp_b;nofp_c");

	ck_assert_msg(total > 100 && full * 100 >= total * 95, "%llu of %llu complete:\n%.1000s",
		      (unsigned long long)full, (unsigned long long)total, out);
}

/* Samples of nofp's chain with every caller, from _start or clone3 on. */
static uint64_t full_chains(const char *out)
{
	return folded_count_prefix(out, MAIN_CHAIN) + folded_count_prefix(out, THREAD_CHAIN);
}

START_TEST(stacks_without_frame_pointers_reach_main_and_the_thread_entry)
{
	uint64_t total, full;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("nofp"), "chain", "2"),
		   30);
	total = folded_total(r.out, NULL);
	full = full_chains(r.out);
	ck_assert_uint_gt(total, 2000);
	ck_assert_msg(full * 100 >= total * 95, "%llu of %llu samples have every caller:\n%.2000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
}
END_TEST

/*
 * perf record --call-graph dwarf on the same binary, its samples folded the
 * same way (user frames, root first, symbol versions stripped): the
 * complete chains are the same strings, in the same share.
 */
START_TEST(complete_stacks_match_perf_record_call_graph_dwarf)
{
	char cmd[2048], data[] = "/tmp/profile-perf-dwarf-XXXXXX";
	uint64_t total, full, perf_total, perf_full;
	struct run_result p;

	backend = test_backends[_i];
	close(mkstemp(data));
	snprintf(cmd, sizeof(cmd),
		 "%s -q -F 999 --call-graph dwarf -o %s -- %s chain 1 >/dev/null 2>&1 && "
		 "perf script --no-inline -i %s -F comm,ip,sym 2>/dev/null | "
		 "awk 'BEGIN { RS = \"\"; FS = \"\\n\" } { s = \"\"; "
		 "for (i = NF; i >= 2; i--) { split($i, a, \" \"); sub(/@.*/, \"\", a[2]); "
		 "if (length(a[1]) < 16) s = s \";\" a[2] } print $1 s \" 1\" }' | "
		 "sed 's/^ *//; s/ *;/;/'",
		 perf_record_cmd(), data, workload("nofp"), data);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &p);
	unlink(data);
	ck_assert_msg(p.exit_code == 0, "perf: %.300s", p.err);
	perf_total = folded_total(p.out, NULL);
	perf_full = full_chains(p.out);
	ck_assert_msg(perf_total > 1000, "perf gave %llu samples:\n%.500s",
		      (unsigned long long)perf_total, p.out);

	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("nofp"), "chain", "1"),
		   30);
	total = folded_total(r.out, NULL);
	full = full_chains(r.out);
	ck_assert_msg(full * 100 >= total * 95 && perf_full * 100 >= perf_total * 95,
		      "complete: ours %llu of %llu, perf's %llu of %llu\n%.1000s",
		      (unsigned long long)full, (unsigned long long)total,
		      (unsigned long long)perf_full, (unsigned long long)perf_total, p.out);
	run_result_free(&p);
}
END_TEST

START_TEST(frame_pointer_mode_loses_the_same_callers)
{
	uint64_t total, full;

	backend = test_backends[_i];
	/* Frame pointers asked for: the default may be auto, which unwinds nofp from .eh_frame. */
	run_ok(&r,
	       PROFILE("-F", "999", "-U", "-f", "--unwind", "fp", "--", (char *)workload("nofp"),
		       "chain", "1"),
	       30);
	total = folded_total(r.out, NULL);
	full = full_chains(r.out);
	/* 1 s at 999 Hz of one busy thread: at most ~1000, fewer on a loaded host. */
	ck_assert_uint_gt(total, 500);
	ck_assert_msg(full * 2 < total, "fp mode: %llu of %llu complete; is nofp built with "
		      "frame pointers?", (unsigned long long)full, (unsigned long long)total);
}
END_TEST

START_TEST(dlopened_library_without_frame_pointers_unwinds)
{
	char lib[600];
	uint64_t total, full;

	backend = test_backends[_i];
	snprintf(lib, sizeof(lib), "%s", workload("libnofp.so"));
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("nofp"), "lib", "1", lib),
		   30);
	total = folded_total(r.out, NULL);
	full = folded_count(r.out, "__libc_start_call_main;main;nofp_call_lib;libnofp_outer;"
				   "libnofp_inner");
	ck_assert_msg(full * 100 >= total * 95, "%llu of %llu:\n%.2000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
}
END_TEST

/* Frames of the first folded line starting with prefix: its semicolons (the comm comes first). */
static unsigned int frames_of_line(const char *out, const char *prefix)
{
	const char *line = strstr(out, prefix);
	unsigned int n = 0;

	while (line && line != out && line[-1] != '\n')
		line = strstr(line + 1, prefix);
	for (const char *p = line; p && *p && *p != '\n'; p++)
		n += *p == ';';
	return n;
}

START_TEST(deep_recursion_is_cut_at_the_limit_with_a_marker)
{
	uint64_t total, cut;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("nofp"), "deep", "1"),
		   30);
	total = folded_total(r.out, NULL);
	cut = folded_count_prefix(r.out, "nofp;[truncated];nofp_recurse;nofp_recurse;");
	ck_assert_msg(cut * 100 >= total * 90, "%llu of %llu cut:\n%.1000s",
		      (unsigned long long)cut, (unsigned long long)total, r.out);
	/* 127 frames: 126 real ones and the marker. */
	ck_assert_uint_eq(frames_of_line(r.out, "nofp;[truncated];"), 127);
}
END_TEST

/* Built with -fno-asynchronous-unwind-tables: .debug_frame (clang's version 4 CIEs) only. */
START_TEST(code_with_only_debug_frame_unwinds)
{
	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("nofp_debugframe"), "chain", "1"),
		   30);
	assert_chains_complete(r.out);
}
END_TEST

/* The same binary stripped, its .debug_frame in a debug file under /usr/lib/debug/.build-id. */
START_TEST(debug_frame_of_a_separate_debug_file_unwinds)
{
	char dir[] = "/tmp/profile-debugframe-XXXXXX", copy[600], cmd[2400], id[128] = "",
	     debug[300];
	FILE *p;

	backend = test_backends[_i];
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/nofp_debugframe", dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s && readelf -n %s | awk '/Build ID/{print $3}'",
		 workload("nofp_debugframe"), copy, copy);
	p = popen(cmd, "r");
	ck_assert_ptr_nonnull(fgets(id, sizeof(id), p));
	pclose(p);
	id[strcspn(id, "\n")] = '\0';
	snprintf(debug, sizeof(debug), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	snprintf(cmd, sizeof(cmd),
		 "mkdir -p /usr/lib/debug/.build-id/%.2s && objcopy --only-keep-debug %s %s && "
		 "strip -g %s && ! readelf -S %s | grep -q debug_frame",
		 id, copy, debug, copy, copy);
	ck_assert_int_eq(system(cmd), 0);
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--", copy, "chain", "1"),
		   30);
	unlink(debug);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	assert_chains_complete(r.out);
}
END_TEST

START_TEST(a_short_stack_copy_is_reported_with_a_count)
{
	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "499", "-U", "-f", "--unwind", "dwarf", "--stack-dump-size",
			   "1024", "--", (char *)workload("nofp"), "deep", "1"),
		   30);
	ck_assert_msg(strstr(r.err, "user stacks were deeper than the stack copy") != NULL,
		      "stderr: %.500s", r.err);
	ck_assert_uint_eq(folded_count_prefix(r.out, "nofp;[truncated]"), 0);
}
END_TEST

/*
 * nofp_sparse's 12 KiB of locals are never filled: perf's copy, taken in the
 * interrupt, ends at their first page not in memory, and the reader thread
 * reads the rest from the process (backend-perfring/stackfill.h). Before,
 * every perf sample ended at nofp_sparse; the in-kernel walk reads only
 * the words it steps by.
 */
START_TEST(a_frame_with_a_buffer_never_filled_keeps_its_callers)
{
	uint64_t total, full;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-v", "-F", "499", "-U", "-f", "--", (char *)workload("nofp"), "sparse",
			   "2"),
		   30);
	total = folded_total(r.out, NULL);
	full = folded_count(r.out, "start_thread;sparse_worker;nofp_sparse;nofp_c");
	ck_assert_msg(total > 100 && full * 100 >= total * 95, "%llu of %llu whole:\n%.1000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
	if (!strcmp(backend, "perf"))
		ck_assert_msg(strstr(r.err, "completed from the process's memory right after the "
					    "sample") != NULL,
			      "stderr: %.2000s", r.err);
}
END_TEST

/*
 * uffdstack's thread has its stack right below memory registered with
 * userfaultfd that nobody serves: the kernel's copy ends at it, and the
 * reader's read of the rest blocks for good. The run must end all the same
 * (the read is left to a thread of its own), and say so. Before the reads
 * had a thread of their own, the profiler hung until killed.
 */
START_TEST(a_stack_read_that_never_returns_does_not_hang_the_run)
{
	backend = "perf";
	run_cmd(PROFILE("-v", "-F", "99", "-f", "--", (char *)workload("uffdstack"), "2"), 30, 0,
		&r);
	if (strstr(r.err, "userfaultfd") || strstr(r.err, "UFFDIO_REGISTER")) {
		fprintf(stderr, "dwarf: userfaultfd refused here: skipped\n");
		return;
	}
	ck_assert_msg(r.exit_code == 0, "exit %d: %.2000s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "did not return within") != NULL, "stderr: %.2000s", r.err);
	ck_assert_uint_gt(folded_count(r.out, "uffd_spin"), 50);
}
END_TEST

/*
 * The same trap served, each fault 100 ms late: the reads are slow, not
 * stuck. A late read stops the completion only until it returns (on 3.10
 * under emulation one late read had left half of sort's samples short for
 * the rest of the run): the samples after it are not left short.
 */
START_TEST(a_stack_read_that_returns_late_is_taken_up_again)
{
	unsigned long long skipped, spins;
	const char *at;

	backend = "perf";
	run_cmd(PROFILE("-v", "-F", "99", "-f", "--", (char *)workload("uffdstack"), "3", "100"),
		30, 0, &r);
	if (strstr(r.err, "userfaultfd") || strstr(r.err, "UFFDIO_REGISTER")) {
		fprintf(stderr, "dwarf: userfaultfd refused here: skipped\n");
		return;
	}
	ck_assert_msg(r.exit_code == 0, "exit %d: %.2000s", r.exit_code, r.err);
	at = strstr(r.err, "short were left so while one was out");
	ck_assert_msg(at, "stderr: %.2000s", r.err);
	while (at > r.err && at[-1] != ':')
		at--;
	skipped = strtoull(at, NULL, 10);
	spins = folded_count(r.out, "uffd_spin");
	/* The trap's 16 pages take 1.6 s: the copies after it are completed again, or whole. */
	ck_assert_msg(spins > 150 && skipped + 50 < spins, "%llu of %llu left short: %.2000s",
		      skipped, (unsigned long long)spins, r.err);
}
END_TEST

START_TEST(samples_in_system_calls_keep_their_user_callers)
{
	uint64_t total, full;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "999", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("syscalls"), "1"),
		   30);
	total = folded_total(r.out, NULL);
	/* libc's read has no frame pointer: fp mode loses read_loop here. */
	full = folded_count(r.out, "__libc_start_call_main;main;read_loop;read;entry_SYSCALL_64");
	ck_assert_msg(full * 100 >= total * 80, "%llu of %llu:\n%.2000s",
		      (unsigned long long)full, (unsigned long long)total, r.out);
	ck_assert_ptr_null(strstr(r.err, "frame-pointer user stacks"));
}
END_TEST

START_TEST(vdso_frames_unwind_to_their_callers)
{
	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "499", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("vdsoclock"), "1"),
		   30);
	ck_assert_uint_gt(folded_count(r.out, "main;clock_gettime;__vdso_clock_gettime"), 10);
}
END_TEST

/* JIT code has no unwind tables: the frame-pointer fallback walks it, named by its perf map. */
START_TEST(jit_code_is_walked_by_its_frame_pointer)
{
	uint64_t jitted, full;

	backend = test_backends[_i];
	run_ok(&r, PROFILE("-F", "999", "-U", "-f", "--unwind", "dwarf", "--",
			   (char *)workload("jit"), "1"),
		   30);
	jitted = folded_count(r.out, ";jitted_hot_loop");
	full = folded_count(r.out, "__libc_start_call_main;main;jitted_hot_loop");
	ck_assert_uint_gt(jitted, 500);
	/* A sample on push rbp or ret (2 of ~100 000 instructions run) may lose main. */
	ck_assert_msg(full * 100 >= jitted * 95, "%llu of %llu:\n%.1000s",
		      (unsigned long long)full, (unsigned long long)jitted, r.out);
	ck_assert_int_eq(system("rm -f /tmp/perf-[0-9]*.map"), 0);
}
END_TEST

/*
 * Kernels without bpf_task_pt_regs (before 5.15): the bpf backend's other
 * stack-copy program, run here on the real kernel. Samples in system calls
 * take the user registers saved at the top of the task's kernel stack, so
 * nine in ten keep read_loop, which libc's read (no frame pointer) loses
 * in a frame-pointer walk. Auto still prefers perf (a sample that
 * interrupted an interrupt has no registers there).
 */
START_TEST(without_task_regs_kernel_mode_samples_take_the_stack_top_registers)
{
	uint64_t in_syscalls, under_loop;

	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NO_TASK_REGS=1", (char *)seams_bin(),
			    "--backend", "bpf", "-F", "999", "-f", "--unwind", "dwarf", "--",
			    (char *)workload("syscalls"), "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	in_syscalls = folded_count(r.out, ";entry_SYSCALL_64");
	under_loop = folded_count(r.out, ";main;read_loop;");
	ck_assert_msg(in_syscalls > 100 && under_loop * 10 >= in_syscalls * 9,
		      "%llu in system calls, %llu under read_loop:\n%.2000s",
		      (unsigned long long)in_syscalls, (unsigned long long)under_loop, r.out);
	run_result_free(&r);

	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_NO_TASK_REGS=1", (char *)seams_bin(),
			    "-v", "-F", "99", "-f", "--unwind", "dwarf", "--", "/bin/true", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "backend bpf: usable, but samples taken in kernel mode"));
	ck_assert_ptr_nonnull(strstr(r.err, "backend perf: usable; chosen"));
}
END_TEST

/*
 * Each of the bpf backend's stack-copy programs, run on this kernel: with
 * bpf_task_pt_regs (5.15), with pieces in a map value (4.10), with pieces
 * on the BPF stack (4.9). Each sample's pieces are joined into whole
 * stacks that unwind to main or the thread's entry.
 */
START_TEST(each_stack_copy_program_gives_whole_stacks)
{
	static const char *const env[3][2] = {
		{ "PROFILE_TEST_NONE=1", "PROFILE_TEST_NONE=1" },
		{ "PROFILE_TEST_NO_TASK_REGS=1", "PROFILE_TEST_NONE=1" },
		{ "PROFILE_TEST_NO_TASK_REGS=1", "PROFILE_TEST_DWARF_PIECES_ON_STACK=1" },
	};
	static const char *const pieces[3] = { "pieces of 61440 bytes", "pieces of 4096 bytes",
					       "pieces of 384 bytes" };

	run_cmd((char *[]){ "/usr/bin/env", (char *)env[_i][0], (char *)env[_i][1],
			    (char *)seams_bin(), "-v", "--backend", "bpf", "-F", "999", "-U", "-f",
			    "--unwind", "dwarf", "--", (char *)workload("nofp"), "chain", "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, pieces[_i]) != NULL, "stderr: %.1000s", r.err);
	ck_assert_ptr_null(strstr(r.err, "malformed"));
	assert_chains_complete(r.out);
}
END_TEST

/*
 * Kernel stacks of each stack-copy program: the 5.15 one sends them in its
 * records (no stack map is made for them), the older ones take them by id
 * into the counting program's stack map. Either way a sample in a system
 * call has its kernel frames under its user callers.
 */
START_TEST(each_stack_copy_program_gives_kernel_stacks)
{
	static const char *const env[3][2] = {
		{ "PROFILE_TEST_NONE=1", "PROFILE_TEST_NONE=1" },
		{ "PROFILE_TEST_NO_TASK_REGS=1", "PROFILE_TEST_NONE=1" },
		{ "PROFILE_TEST_NO_TASK_REGS=1", "PROFILE_TEST_DWARF_PIECES_ON_STACK=1" },
	};
	static const char *const where[3] = { "kernel stacks in the stack copies' records",
					      "maps: 16384 + 2048 stacks",
					      "maps: 16384 + 2048 stacks" };
	uint64_t total, in_kernel;

	run_cmd((char *[]){ "/usr/bin/env", (char *)env[_i][0], (char *)env[_i][1],
			    (char *)seams_bin(), "-v", "--backend", "bpf", "-F", "999", "-f",
			    "--unwind", "dwarf", "--", (char *)workload("syscalls"), "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, where[_i]) != NULL, "stderr: %.1500s", r.err);
	ck_assert_ptr_null(strstr(r.err, "malformed"));
	ck_assert_ptr_null(strstr(r.err, "could not be displayed"));
	total = folded_total(r.out, NULL);
	in_kernel = folded_count(r.out, "main;read_loop;read;entry_SYSCALL_64");
	/* The older programs give kernel-mode samples frame-pointer user stacks: read is lost. */
	if (_i)
		in_kernel = folded_count(r.out, ";entry_SYSCALL_64");
	ck_assert_msg(total > 100 && in_kernel * 100 >= total * 50, "%llu of %llu:\n%.2000s",
		      (unsigned long long)in_kernel, (unsigned long long)total, r.out);
}
END_TEST

/* The records of the run's stack copies a sample, from -v's count. */
static double records_a_sample(const char *err)
{
	const char *at = strstr(err, "bpf: stack copies: ");
	unsigned long long records, samples;

	ck_assert_msg(at && sscanf(at, "bpf: stack copies: %llu records for %llu samples", &records,
				   &samples) == 2 && samples > 100,
		      "stderr: %.1000s", err);
	return (double)records / (double)samples;
}

/*
 * The program with bpf_task_pt_regs (5.15) sends a sample's head and stack
 * copy in one record (the others send a record per piece and the head: 6
 * to 10 a sample, each a cost for the reader): shallow stacks, whose last
 * read crosses the end of the stack, and deep ones cut at the copy size; a
 * copy longer than 60 KiB (8000 frames, --stack-dump-size 65528) in two, a
 * perf record being at most 64 KiB.
 */
START_TEST(the_task_regs_program_sends_a_sample_in_one_record)
{
	static const struct {
		const char *workload, *mode, *depth, *dump_size;
		double min, max;	/* records a sample */
	} runs[] = {
		{ "nofp", "chain", NULL, "16384", 1, 1 },
		{ "nofp", "deep", NULL, "16384", 1, 1 },
		{ "deep", "spin", "8000", "65528", 1.5, 2 },
	};
	const char *cut = _i == 1 ? "nofp;[truncated];nofp_recurse;"
				  : "deep;[truncated];deep_recurse;";
	uint64_t whole;
	double per;

	backend = "bpf";
	run_ok(&r, PROFILE("-v", "-F", "999", "-U", "-f", "--unwind", "dwarf", "--stack-dump-size",
			   (char *)runs[_i].dump_size, "--", (char *)workload(runs[_i].workload),
			   (char *)runs[_i].mode, "1", (char *)runs[_i].depth),
		   30);
	ck_assert_msg(strstr(r.err, "user registers of kernel-mode samples: bpf_task_pt_regs"),
		      "stderr: %.1000s", r.err);
	per = records_a_sample(r.err);
	ck_assert_msg(per >= runs[_i].min && per <= runs[_i].max,
		      "%s %s, %s bytes: %.2f records a sample", runs[_i].workload, runs[_i].mode,
		      runs[_i].dump_size, per);
	ck_assert_ptr_null(strstr(r.err, "malformed"));
	/* Whole stacks: from _start or clone3, or cut at the frame limit with the marker. */
	whole = _i == 0 ? full_chains(r.out) : folded_count_prefix(r.out, cut);
	ck_assert_msg(whole * 10 >= folded_total(r.out, NULL) * 9, "%llu whole:\n%.1000s",
		      (unsigned long long)whole, r.out);
}
END_TEST

/*
 * A copy longer than 60 KiB goes in two records, its head in the second
 * after the copy's end: that record still carries the kernel stack, so a
 * deep recursion reading /dev/zero shows read's kernel frames under it.
 */
START_TEST(a_copy_in_two_records_keeps_its_kernel_stack)
{
	uint64_t total, in_read;
	double per;

	backend = "bpf";
	run_ok(&r, PROFILE("-v", "-F", "999", "-f", "--unwind", "dwarf", "--stack-dump-size",
			   "65528", "--", (char *)workload("deep"), "kernel", "1", "8000"),
	       30);
	ck_assert_msg(strstr(r.err, "kernel stacks in the stack copies' records"), "stderr: %.1500s",
		      r.err);
	per = records_a_sample(r.err);
	ck_assert_msg(per >= 1.5 && per <= 2, "%.2f records a sample", per);
	ck_assert_ptr_null(strstr(r.err, "malformed"));
	total = folded_total(r.out, NULL);
	in_read = folded_count(r.out, "deep_recurse;deep_read;read;entry_SYSCALL_64");
	ck_assert_msg(in_read * 100 >= total * 50, "%llu of %llu:\n%.2000s",
		      (unsigned long long)in_read, (unsigned long long)total, r.out);
}
END_TEST

Suite *dwarf_suite(void)
{
	Suite *s = suite_create("dwarf");
	TCase *tc = tcase_create("unwind");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, stacks_without_frame_pointers_reach_main_and_the_thread_entry, 0,
			    2);
	tcase_add_loop_test(tc, complete_stacks_match_perf_record_call_graph_dwarf, 0, 2);
	tcase_add_loop_test(tc, frame_pointer_mode_loses_the_same_callers, 0, 2);
	tcase_add_loop_test(tc, dlopened_library_without_frame_pointers_unwinds, 0, 2);
	tcase_add_loop_test(tc, deep_recursion_is_cut_at_the_limit_with_a_marker, 0, 2);
	tcase_add_loop_test(tc, code_with_only_debug_frame_unwinds, 0, 2);
	tcase_add_loop_test(tc, debug_frame_of_a_separate_debug_file_unwinds, 0, 2);
	tcase_add_loop_test(tc, a_short_stack_copy_is_reported_with_a_count, 0, 2);
	tcase_add_loop_test(tc, a_frame_with_a_buffer_never_filled_keeps_its_callers, 0, 2);
	tcase_add_test(tc, a_stack_read_that_never_returns_does_not_hang_the_run);
	tcase_add_test(tc, a_stack_read_that_returns_late_is_taken_up_again);
	tcase_add_loop_test(tc, samples_in_system_calls_keep_their_user_callers, 0, 2);
	tcase_add_loop_test(tc, vdso_frames_unwind_to_their_callers, 0, 2);
	tcase_add_loop_test(tc, jit_code_is_walked_by_its_frame_pointer, 0, 2);
	tcase_add_test(tc, without_task_regs_kernel_mode_samples_take_the_stack_top_registers);
	tcase_add_loop_test(tc, each_stack_copy_program_gives_whole_stacks, 0, 3);
	tcase_add_loop_test(tc, the_task_regs_program_sends_a_sample_in_one_record, 0, 3);
	tcase_add_loop_test(tc, each_stack_copy_program_gives_kernel_stacks, 0, 3);
	tcase_add_test(tc, a_copy_in_two_records_keeps_its_kernel_stack);
	suite_add_tcase(s, tc);
	return s;
}
