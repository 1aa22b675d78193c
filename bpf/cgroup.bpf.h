/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --cgroup in the kernel: whether the current task is in one of the cgroups
 * of the `cgroups` array or below one, by bpf_current_task_under_cgroup
 * (Linux 4.9, BPF_MAP_TYPE_CGROUP_ARRAY 4.8). It tests cgroup v2 membership
 * only: the loader never stores a v1 directory (the kernel refuses it).
 * Programs call cgroup_wanted() first, before any other work.
 *
 * The off-CPU program uses it (sched_switch runs in the switching task's
 * context). The on-CPU programs run in the cpu-clock's interrupt, where the
 * helper answers -EINVAL before Linux 4.18 (commit 7ef377120530 "bpf: Allow
 * bpf_current_task_under_cgroup in interrupt"): their events are opened on
 * the cgroups instead (PERF_FLAG_PID_CGROUP), so that they fire only while
 * a task of the cgroups runs.
 */
#ifndef BPF_CGROUP_BPF_H
#define BPF_CGROUP_BPF_H

#include <linux/errno.h>

#include "bpf/cgroup_maps.h"

/* Sized by the loader before load: the number of --cgroup directories (1 without). */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} cgroups SEC(".maps");

/*
 * The helper answers 1 (under it), 0 (not), -EAGAIN for an unset slot and
 * -E2BIG past the end: the first unset slot ends the list, and when that is
 * slot 0 there is no filter. Unrolled: no loops before Linux 5.3.
 */
static __always_inline int cgroup_wanted(void)
{
	long under = bpf_current_task_under_cgroup(&cgroups, 0);

	if (under == -EAGAIN || under == 1)
		return 1;
	if (under < 0)
		return 0;
#pragma unroll
	for (__u32 i = 1; i < PROFILE_MAX_CGROUPS; i++) {
		under = bpf_current_task_under_cgroup(&cgroups, i);
		if (under == 1)
			return 1;
		if (under < 0)
			return 0;
	}
	return 0;
}

#endif
