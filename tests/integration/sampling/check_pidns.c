// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend inside a pid namespace (a container's view) where tasks
 * are named by the ids the kernel writes into perf records: the counting
 * program's way on kernels without bpf_get_ns_current_pid_tgid (before
 * 5.7), tested on this kernel through a seam that asks for it, and the
 * off-CPU program's on every kernel. The profiler runs in a new pid
 * namespace with its own /proc (unshare --mount-proc); copies of the
 * workloads run inside and outside it, the outside ones invisible.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-pidns-XXXXXX";

/* The seamed binary, the records' way asked for. */
#define RECORDS "/usr/bin/env PROFILE_TEST_PIDNS_RECORDS=1"
/*
 * What -v says of that way. The counting program's: its frame-pointer walk
 * (--unwind fp). The stack-copy program, which --unwind dwarf and auto use,
 * has the ids only in its 5.15 variant, from the task's registers.
 */
#define RECORDS_NOTE "which the kernel writes into perf records"

/* The copies of busy in a new directory: before the scripts that name them. */
static void setup(void)
{
	char cmd[1024];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cp %s %s/nsin-busy && cp %s %s/nsout-busy && cp %s %s/nsout-blocking",
		 workload("busy"), dir, workload("busy"), dir, workload("blocking"), dir);
	ck_assert_int_eq(system(cmd), 0);
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd))
		fprintf(stderr, "pidns: %s not removed\n", dir);
}

/*
 * Run script (sh) as pid 1 of a new pid namespace with its own /proc,
 * copies of busy and blocking outside it meanwhile; PROFILE is the seamed
 * binary there.
 */
static void in_pidns(const char *script)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd),
		 "%s/nsout-busy 1 30 & out=$!; %s/nsout-blocking sleep 30 >/dev/null & "
		 "outb=$!; PROFILE='" RECORDS " %s' unshare --pid --fork --mount-proc "
		 "/bin/sh -c '%s'; rc=$?; kill $out $outb; exit $rc",
		 dir, dir, seams_bin(), script);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
}

static const char *offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}

static uint64_t comm_total(const char *comm)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s;", comm);
	return folded_count_prefix(r.out, prefix);
}

/* System-wide: the namespace's tasks only, the outside copy invisible. */
START_TEST(system_wide_sees_the_namespace_only)
{
	char script[1024];

	snprintf(script, sizeof(script),
		 "%s/nsin-busy 1 30 & sleep 0.3; $PROFILE --backend bpf --unwind fp -v -f -F 99 2; "
		 "rc=$?; "
		 "kill $!; exit $rc", dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, RECORDS_NOTE), "%s", r.err);
	ck_assert_msg(comm_total("nsin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("nsout-busy") == 0, "the outside copy: %.300s", r.out);
	ck_assert_msg(folded_count(r.out, "burn_"), "%.300s", r.out);
}
END_TEST

/*
 * -p with the namespace's pid: the report names the process by it (the
 * default format prints "comm (pid)"), and only it.
 */
START_TEST(pid_is_the_namespace_s)
{
	char script[1024];

	snprintf(script, sizeof(script),
		 "%s/nsin-busy 2 30 & a=$!; %s/nsin-busy 1 30 & b=$!; sleep 0.3; echo a=$a >&2; "
		 "$PROFILE --backend bpf -F 99 -p $a 2; rc=$?; kill $a $b; exit $rc", dir, dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "a=2\n"), "%s", r.err);
	ck_assert_msg(strstr(r.out, "nsin-busy (2)\n"), "%.1500s", r.out);
	ck_assert_msg(!strstr(r.out, "nsin-busy (3)") && !strstr(r.out, "nsout-busy"), "%.1500s",
		      r.out);
}
END_TEST

/*
 * -L with a thread's id in the namespace: that thread only. busy's workers
 * burn in burn_b (the first) and burn_a (the second): -L the second.
 */
START_TEST(tid_is_the_namespace_s)
{
	char script[1024];
	const char *t;

	snprintf(script, sizeof(script),
		 "%s/nsin-busy 2 30 & sleep 0.3; t=$(ls /proc/$!/task | sort -n | tail -1); "
		 "echo t=$t >&2; $PROFILE --backend bpf -f -F 99 -L $t 2; rc=$?; kill $!; exit $rc",
		 dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	t = strstr(r.err, "t=");
	ck_assert_msg(t && atoi(t + 2) > 2 && atoi(t + 2) < 10, "%s", r.err);
	ck_assert_msg(folded_count(r.out, ";burn_a") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(folded_count(r.out, ";burn_b") == 0, "the other thread: %.300s", r.out);
}
END_TEST

/* A launched command, and auto's choice: bpf, since the kernel can name tasks. */
START_TEST(launch_and_auto)
{
	char script[1024];

	snprintf(script, sizeof(script), "$PROFILE --unwind fp -v -f -F 99 -- %s/nsin-busy 1 1", dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "backend bpf: usable; chosen") && strstr(r.err, RECORDS_NOTE),
		      "%s", r.err);
	ck_assert_msg(comm_total("nsin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("nsout-busy") == 0, "%.300s", r.out);
}
END_TEST

/*
 * --unwind auto on a kernel without bpf_task_pt_regs (the seam says so
 * here): in the namespace the in-kernel unwinder does not run and the
 * older stack-copy program cannot name tasks, so auto walks frame pointers
 * there, said in -v, where it refused the backend before (containers on
 * kernels before 5.15 lost bpf to auto).
 */
START_TEST(auto_without_task_regs_walks_frame_pointers)
{
	char script[1024];

	snprintf(script, sizeof(script),
		 "PROFILE_TEST_NO_TASK_REGS=1 $PROFILE --backend bpf --unwind auto -v -f -F 99 "
		 "-- %s/nsin-busy 1 1", dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "in a pid namespace, user stacks by frame pointers"), "%s",
		      r.err);
	ck_assert_msg(comm_total("nsin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("nsout-busy") == 0, "%.300s", r.out);
}
END_TEST

/*
 * offcputime system-wide: blocking's thread blk-sleep inside, 10 ms sleeps
 * for 2 s, counts about 2 s; the outside copy's blk-sleep would double it.
 */
START_TEST(offcputime_sees_the_namespace_only)
{
	char script[1024];
	uint64_t us;

	snprintf(script, sizeof(script),
		 "%s sleep 30 >/dev/null & sleep 0.3; %s --backend bpf --verbose -f 2; rc=$?; "
		 "kill $!; exit $rc", workload("blocking"), offcputime_bin());
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "off-CPU threads are named by their ids there"), "%s", r.err);
	us = comm_total("blk-sleep");
	ck_assert_msg(us > 1500000 && us < 2500000, "blk-sleep %llu us: %s: %.300s",
		      (unsigned long long)us, r.err, r.out);
	ck_assert_msg(folded_count(r.out, "sleep_loop") || folded_count(r.out, "sleep_thread"),
		      "%.300s", r.out);
}
END_TEST

/* blocking's line for comm at its end ("offcpu tid=TID comm=COMM us=US ..."): us, and its tid. */
static double blocked_us(const char *comm, long *tid)
{
	for (const char *p = strstr(r.out, "offcpu tid="); p; p = strstr(p + 1, "offcpu tid=")) {
		char name[32];
		unsigned long long us;

		if (sscanf(p, "offcpu tid=%ld comm=%31s us=%llu", tid, name, &us) == 3 &&
		    !strcmp(name, comm))
			return (double)us;
	}
	ck_abort_msg("blocking printed no line for %s: %s: %.500s", comm, r.err, r.out);
	return 0;
}

/*
 * bcc's format names each stack's thread "COMM (TID)" and gives its count on
 * the next line: the total of comm's stacks under tid, and in *others the
 * number of its stacks under any other id.
 */
static uint64_t bcc_thread_total(const char *comm, long tid, int *others)
{
	char key[64];
	uint64_t sum = 0;
	size_t n;

	snprintf(key, sizeof(key), " %s (", comm);
	n = strlen(key);
	*others = 0;
	for (const char *p = strstr(r.out, key); p; p = strstr(p + n, key)) {
		char *end;
		long id = strtol(p + n, &end, 10);

		if (id != tid || *end != ')')
			(*others)++;
		else
			sum += strtoull(end + 2, NULL, 10);
	}
	return sum;
}

/*
 * Threads that exit long after their last record (more than the second
 * after which the program names a thread again): blocking's lock threads
 * block at once and wake only to die at the end. The kernel has no ids of
 * a thread left at its last switch-out; its name must stay what it was, so
 * that its intervals, drained after it, keep its tid (4.19 wrote -1 for both
 * ids: its time was left out unsaid; 6.18 writes -1 for the tid).
 */
START_TEST(offcputime_thread_exit_keeps_its_name)
{
	static const char *const comms[] = { "blk-lockA", "blk-lockB" };
	char script[1024];

	snprintf(script, sizeof(script), "%s --backend bpf -- %s deadlock 2", offcputime_bin(),
		 workload("blocking"));
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	for (int i = 0; i < 2; i++) {
		long tid;
		double want = blocked_us(comms[i], &tid);
		int others;
		double ratio = (double)bcc_thread_total(comms[i], tid, &others) / want;

		ck_assert_msg(others == 0 && ratio > 0.9 && ratio < 1.1,
			      "%s (%ld): %.2f of its %.0f us, %d stacks under another id: %s: "
			      "%.3000s", comms[i], tid, ratio, want, others, r.err, r.out);
	}
}
END_TEST

/*
 * A thread blocked for longer than a name lasts without a record (10 s):
 * blocking's lock threads block at once and stay blocked for 17 s, sending
 * no record meanwhile; their intervals are counted when the process exits.
 * Each must count its whole time, with no record said to be lost.
 */
START_TEST(offcputime_long_block_keeps_its_name)
{
	static const char *const comms[] = { "blk-lockA", "blk-lockB" };
	char script[1024];

	snprintf(script, sizeof(script), "%s --backend bpf --verbose -f -- %s deadlock 17",
		 offcputime_bin(), workload("blocking"));
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	for (int i = 0; i < 2; i++) {
		long tid;
		double want = blocked_us(comms[i], &tid);
		double ratio = (double)comm_total(comms[i]) / want;

		ck_assert_msg(ratio > 0.9 && ratio < 1.1, "%s: %.2f of its %.0f us: %s: %.500s",
			      comms[i], ratio, want, r.err, r.out);
	}
	ck_assert_msg(!strstr(r.err, "left out"), "%s", r.err);
}
END_TEST

/* --wall on a launched pingpong: pp-ping's on- and off-CPU time against its wall clock. */
START_TEST(wall_adds_up_in_the_namespace)
{
	char script[1024];
	const char *w;
	double ratio;

	snprintf(script, sizeof(script), "$PROFILE --backend bpf --wall -f -F 99 -- %s 2",
		 workload("pingpong"));
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	w = strstr(r.out, "comm=pp-ping ");
	w = w ? strstr(w, "wall_us=") : NULL;
	ck_assert_msg(w, "%.500s", r.out);
	ratio = (double)comm_total("pp-ping") / atof(w + 8);
	fprintf(stderr, "pidns: --wall: pp-ping %.2f of its wall clock\n", ratio);
	ck_assert_msg(ratio > 0.8 && ratio < 1.2, "ratio %.2f: %s: %.500s", ratio, r.err, r.out);
}
END_TEST

Suite *pidns_suite(void)
{
	Suite *s = suite_create("pidns");
	TCase *tc = tcase_create("records");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, system_wide_sees_the_namespace_only);
	tcase_add_test(tc, pid_is_the_namespace_s);
	tcase_add_test(tc, tid_is_the_namespace_s);
	tcase_add_test(tc, launch_and_auto);
	tcase_add_test(tc, auto_without_task_regs_walks_frame_pointers);
	tcase_add_test(tc, offcputime_sees_the_namespace_only);
	tcase_add_test(tc, offcputime_long_block_keeps_its_name);
	tcase_add_test(tc, offcputime_thread_exit_keeps_its_name);
	tcase_add_test(tc, wall_adds_up_in_the_namespace);
	suite_add_tcase(s, tc);
	return s;
}
