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
/* What -v says of that way. */
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
		 "%s/nsin-busy 1 30 & sleep 0.3; $PROFILE --backend bpf -v -f -F 99 2; rc=$?; "
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

	snprintf(script, sizeof(script), "$PROFILE -v -f -F 99 -- %s/nsin-busy 1 1", dir);
	in_pidns(script);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "backend bpf: usable; chosen") && strstr(r.err, RECORDS_NOTE),
		      "%s", r.err);
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
	tcase_add_test(tc, offcputime_sees_the_namespace_only);
	tcase_add_test(tc, wall_adds_up_in_the_namespace);
	suite_add_tcase(s, tc);
	return s;
}
