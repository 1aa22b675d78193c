/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --cgroup for the on-CPU programs where perf events cannot follow the
 * cgroups (a v2 cgroup before Linux 4.11, or perf_event bound to a v1
 * hierarchy on a hybrid host): the threads under the cgroups, by thread
 * id in the initial pid namespace. The on-CPU programs run in the
 * cpu-clock's interrupt, where bpf_current_task_under_cgroup answers
 * -EINVAL before Linux 4.18 (see bpf/cgroup.bpf.h); the off-CPU program's
 * sched_switch runs in the switching-out task's context, where it works:
 * that program keeps this table (offcpu.bpf.h, OFFCPU_CFG_TRACK_CGROUPS),
 * and the loader fills it at the start from the cgroups' thread lists.
 * The on-CPU programs only look threads up (PROFILE_CFG_CGROUP_MEMBERS).
 */
#ifndef BPF_CGROUP_MEMBERS_BPF_H
#define BPF_CGROUP_MEMBERS_BPF_H

/* Sized by the loader before load (1 when unused); shared by fd between the objects. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} cg_members SEC(".maps");

/* Whether the current thread is in the table. */
static __always_inline int cgroup_member(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_lookup_elem(&cg_members, &tid) != NULL;
}

#endif
