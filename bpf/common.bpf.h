/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both BPF programs share: the settings, the -p/-L filter, the stack map
 * and the statistics. The dwarf program's loader reuses the maps of the
 * counting program, so both see the same settings and stack ids.
 */
#ifndef BPF_COMMON_BPF_H
#define BPF_COMMON_BPF_H

#include "bpf/cgroup_members.bpf.h"
#include "bpf/profile_maps.h"

/* Sizes are set by the loader before load (--stack-storage-size, -p/-L). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_config);
} config SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} filter_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PROFILE_STAT_CNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_add(__u32 slot, __u64 n)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += n;	/* per-CPU slot, and perf_event programs do not nest */
}

static __always_inline void stat_inc(__u32 slot)
{
	stat_add(slot, 1);
}

/* How a program learns a task's ids (see wanted()). */
#define PIDNS_NEVER 0		/* the initial pid namespace's (any kernel) */
#define PIDNS_ALWAYS 1		/* the profiler's namespace's (Linux 5.7) */
#define PIDNS_BY_CONFIG 2	/* the profiler's if PROFILE_CFG_PIDNS (Linux 5.7) */

/*
 * The settings if this sample's thread is wanted (bcc's idle, -p and -L
 * filters, --cgroup by the thread table where perf events cannot follow
 * the cgroups), its tgid and tid in *tgid, *tid; else NULL. A profiler inside a
 * pid namespace names tasks by their ids there, as -p/-L and its /proc do;
 * tasks outside it are invisible.
 */
static __always_inline struct profile_config *wanted(int pidns_mode, __u32 *tgid, __u32 *tid)
{
	struct profile_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return NULL;
	if ((cfg->flags & PROFILE_CFG_CGROUP_MEMBERS) && !cgroup_member())
		return NULL;
	if (pidns_mode == PIDNS_ALWAYS ||
	    (pidns_mode == PIDNS_BY_CONFIG && (cfg->flags & PROFILE_CFG_PIDNS))) {
		struct bpf_pidns_info ns;

		if (bpf_get_ns_current_pid_tgid(cfg->pidns_dev, cfg->pidns_ino, &ns, sizeof(ns)))
			return NULL;
		*tgid = ns.tgid;
		*tid = ns.pid;
	} else {
		__u64 id = bpf_get_current_pid_tgid();

		*tgid = id >> 32;
		*tid = (__u32)id;
	}
	/* bcc's idle filter: thread id 0 is each CPU's idle task. */
	if (*tid == 0 && !(cfg->flags & PROFILE_CFG_INCLUDE_IDLE))
		return NULL;
	if ((cfg->flags & PROFILE_CFG_FILTER_TGID) && !bpf_map_lookup_elem(&filter_ids, tgid))
		return NULL;
	if ((cfg->flags & PROFILE_CFG_FILTER_TID) && !bpf_map_lookup_elem(&filter_ids, tid))
		return NULL;
	return cfg;
}

#endif
