/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What both BPF programs share: the settings, the -p/-L filter, the stack map
 * and the statistics. The dwarf program's loader reuses the maps of the
 * counting program, so both see the same settings and stack ids.
 */
#ifndef BPF_COMMON_BPF_H
#define BPF_COMMON_BPF_H

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

static __always_inline void stat_inc(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += 1;	/* per-CPU slot, and perf_event programs do not nest */
}

/* The settings if this thread's samples are wanted (bcc's idle, -p and -L filters), else NULL. */
static __always_inline struct profile_config *wanted(__u32 tgid, __u32 tid)
{
	struct profile_config *cfg;
	__u32 zero = 0;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return NULL;
	/* bcc's idle filter: thread id 0 is each CPU's idle task. */
	if (tid == 0 && !(cfg->flags & PROFILE_CFG_INCLUDE_IDLE))
		return NULL;
	if ((cfg->flags & PROFILE_CFG_FILTER_TGID) && !bpf_map_lookup_elem(&filter_ids, &tgid))
		return NULL;
	if ((cfg->flags & PROFILE_CFG_FILTER_TID) && !bpf_map_lookup_elem(&filter_ids, &tid))
		return NULL;
	return cfg;
}

#endif
