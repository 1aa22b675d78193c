// SPDX-License-Identifier: GPL-2.0
/*
 * The profile binary with the seams tests need and no option reaches:
 * PROFILE_TEST_NO_TASK_REGS=1 loads the bpf stack-copy program of kernels
 * without bpf_task_pt_regs (before 5.15) on this one;
 * PROFILE_TEST_DWARF_PIECES_ON_STACK=1 with it, Linux 4.9's (pieces sent
 * from the BPF stack); PROFILE_TEST_SLOW_BPF_LOAD=1 makes each BPF load
 * spend seconds in the verifier first; PROFILE_TEST_AS_LIMIT_AFTER_MS=T
 * caps the address space (RLIMIT_AS) at its size T ms after the start, so
 * that memory runs out mid-run: the kernel's own limit, at a known time;
 * PROFILE_TEST_OOM_AFTER_STACKS=N makes counting fail as out of memory once
 * N distinct stacks are counted; PROFILE_TEST_CGROUP_TABLE=1 makes the bpf
 * backend keep to --cgroup by its thread table (the way of Linux 4.9 and
 * hybrid hosts) where perf events could follow the cgroups;
 * PROFILE_TEST_PIDNS_RECORDS=1 makes it name tasks in a pid namespace by
 * the kernel's perf records (the way before 5.7) where it has the helper;
 * PROFILE_TEST_OFFCPU_NO_RUNTIME=1 makes its off-CPU program go without the
 * threads' CPU time, as where the kernel has no BTF: an interval whose
 * switch-in no sched_switch reported is lost; PROFILE_TEST_SETTLE_GRACE_MS=G
 * lets go of what ended processes held G ms after their end, not 30 s;
 * PROFILE_TEST_SLOW_DRAIN_MS=M makes each bpf drain sleep M ms first (a main
 * thread busy with a large binary's symbols, say).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "app/cli/cli.h"
#include "app/run/run.h"
#include "backend-bpf/bpfbackend.h"
#include "backend-bpf/cgtrack.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/native.h"
#include "backend-bpf/native_store.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/offcpu.h"
#include "core/agg/pipeline.h"

static void *limit_address_space(void *arg)
{
	unsigned long kb = 0;
	struct rlimit rl;
	char line[128];
	FILE *f;

	usleep((useconds_t)(atol(arg) * 1000));
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "VmSize: %lu kB", &kb);
	if (f)
		fclose(f);
	getrlimit(RLIMIT_AS, &rl);
	rl.rlim_cur = (rlim_t)kb * 1024;
	if (kb)
		setrlimit(RLIMIT_AS, &rl);
	return NULL;
}

int main(int argc, char **argv)
{
	struct cli_seams seams = { .no_task_regs = getenv("PROFILE_TEST_NO_TASK_REGS") != NULL };

	bpf_dwarf__test_pieces_on_stack = getenv("PROFILE_TEST_DWARF_PIECES_ON_STACK") != NULL;
	bpf_interruptible__test_slow = getenv("PROFILE_TEST_SLOW_BPF_LOAD") != NULL;
	bpf_cgtrack__test_table = getenv("PROFILE_TEST_CGROUP_TABLE") != NULL;
	bpf_nsids__test_force = getenv("PROFILE_TEST_PIDNS_RECORDS") != NULL;
	bpf_native__test_refuse = getenv("PROFILE_TEST_NATIVE_REFUSED") != NULL;
	if (getenv("PROFILE_TEST_NATIVE_REREAD_MS"))
		native_store__test_reread_ms =
			(unsigned int)strtoul(getenv("PROFILE_TEST_NATIVE_REREAD_MS"), NULL, 10);
	if (getenv("PROFILE_TEST_NATIVE_LATE_MS"))
		bpf_native__test_late_ms =
			(unsigned int)strtoul(getenv("PROFILE_TEST_NATIVE_LATE_MS"), NULL, 10);
	bpf_dwarf__test_refuse = getenv("PROFILE_TEST_DWARF_REFUSED") != NULL;
	bpf_offcpu__test_no_runtime = getenv("PROFILE_TEST_OFFCPU_NO_RUNTIME") != NULL;
	if (getenv("PROFILE_TEST_SLOW_DRAIN_MS"))
		bpf_backend__test_slow_drain_ms =
			(unsigned int)strtoul(getenv("PROFILE_TEST_SLOW_DRAIN_MS"), NULL, 10);

	if (getenv("PROFILE_TEST_SETTLE_GRACE_MS"))
		run__test_settle_grace_ms =
			(unsigned int)strtoul(getenv("PROFILE_TEST_SETTLE_GRACE_MS"), NULL, 10);
	if (getenv("PROFILE_TEST_OOM_AFTER_STACKS"))
		pipeline__test_oom_after = strtoul(getenv("PROFILE_TEST_OOM_AFTER_STACKS"), NULL, 10);
	if (getenv("PROFILE_TEST_AS_LIMIT_AFTER_MS")) {
		pthread_t t;

		pthread_create(&t, NULL, limit_address_space, getenv("PROFILE_TEST_AS_LIMIT_AFTER_MS"));
		pthread_detach(t);
	}
	return cli__main(argc, argv, &seams);
}
