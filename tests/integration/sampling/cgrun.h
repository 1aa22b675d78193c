/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the cgroup suites share (check_cgroup.c: --cgroup; check_idmaps.c:
 * bcc's --cgroupmap and --mntnsmap): a fresh cgroup and a child of it per
 * test case under the mount found in /proc/mounts, copies of one workload
 * under names that say where each runs (started inside the cgroup, inside
 * its child and outside: written to cgroup.procs by a shell before it execs
 * the workload), and the check that a profile holds only the stacks of the
 * tasks it should.
 */
#ifndef TESTS_INTEGRATION_SAMPLING_CGRUN_H
#define TESTS_INTEGRATION_SAMPLING_CGRUN_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tests/support/tests.h"

#define CGT_MAX_SPAWNED 8

/*
 * What the test case made: the cgroups and the workload copies, made and
 * removed by the runner (an unchecked fixture), so that they go even when a
 * test fails; the workloads die with their test (PR_SET_PDEATHSIG), a bpf
 * filesystem with its test's private mount namespace.
 */
struct cgt_case {
	char mount[256];		/* the cgroup2 (or v1 perf_event) mount */
	char cgroup[512];		/* the test case's cgroup */
	char child[600];		/* its child */
	char tmp[64];			/* workload copies, the bpffs mount point */
	pid_t pids[CGT_MAX_SPAWNED];	/* process groups a test started */
	int nr_pids;
};
extern struct cgt_case cgt;
/* The current test's run, freed after it by cgt_kill_spawned. */
extern struct run_result cgt_r;

/*
 * The unchecked fixtures: a fresh cgroup and its child under the cgroup2
 * mount (v2) or a v1 perf_event hierarchy's (v1), and the copies; without
 * the mount or the rights, cgt.cgroup stays empty and the tests skip.
 * cgt_remove_all removes what either made, and the bpffs mount point in
 * tmp (check_idmaps.c's); a directory of its own in tmp a tcase removes
 * first.
 */
void cgt_setup_v2(void);
void cgt_setup_v1(void);
void cgt_remove_all(void);
/* The checked fixture, after each test: its workloads (they would die with it anyway), cgt_r. */
void cgt_kill_spawned(void);
/*
 * A tcase of root's tests on the cgroups that setup makes and teardown
 * removes (an unchecked fixture: cgt_setup_v2 and cgt_remove_all, say),
 * cgt_kill_spawned after each test.
 */
TCase *cgt_tcase(const char *name, int timeout_s, SFun setup, SFun teardown);

void cgt_sleep_ms(int ms);
/*
 * Run the shell command cmd in its own process group, first moved into the
 * cgroup dir (NULL: left where the test runs), killed when the test ends.
 * Returns its pid.
 */
pid_t cgt_spawn(const char *dir, const char *cmd);
/* Busy copies: in the cgroup, in its child, outside. Returns the one inside. */
pid_t cgt_start_busy(void);
/*
 * Copies of sleep, 10 ms at a time, again and again, run by copies of sh
 * (which wait for them): switch-outs throughout the run.
 */
void cgt_start_sleepers(void);

/* The samples (or microseconds) of cgt_r's folded lines of comm. */
uint64_t cgt_comm_total(const char *comm);
/*
 * Every line of cgt_r's output starts with one of comms (NULL-ended). A
 * line of an unknown process (":TID", as perf script names it) passes up
 * to max_unknown in all: the perf backend cannot name a process forked and
 * exec'd in the instant between its reading of /proc and the enabling of
 * its events (the sleepers start one every 10 ms); a leak of the filter
 * would be a steady stream of named lines.
 */
void cgt_assert_only_but(const char *const *comms, uint64_t max_unknown);
void cgt_assert_only(const char *const *comms);

/* The offcputime link beside profile_bin(). */
const char *cgt_offcputime_bin(void);

#define PROFILE(...) ((char *[]){ (char *)profile_bin(), __VA_ARGS__, NULL })

#define SKIP_WITHOUT_CGROUP2()                                                              \
	do {                                                                                \
		if (!cgt.cgroup[0]) {                                                       \
			fprintf(stderr, "cgroup: no cgroup2 mount in /proc/mounts: skipped\n"); \
			return;                                                             \
		}                                                                           \
	} while (0)

#endif
