/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counting program's body, shared by profile.bpf.c (Linux 4.9) and
 * profile_pidns.bpf.c (a profiler inside a pid namespace, Linux 5.7).
 */
#ifndef BPF_COUNTING_BPF_H
#define BPF_COUNTING_BPF_H

#include "bpf/common.bpf.h"

/* Sizes are set by the loader before load (--hash-storage-size). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct profile_key);
	__type(value, __u64);
} counts0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct profile_key);
	__type(value, __u64);
} counts1 SEC(".maps");

/* Add one to key's count; insertion races with other CPUs are retried once. */
static __always_inline void count(void *counts, struct profile_key *key)
{
	__u64 one = 1, *val;

	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	if (bpf_map_update_elem(counts, key, &one, BPF_NOEXIST) == 0) {
		stat_inc(PROFILE_STAT_NEW_KEYS);
		return;
	}
	/* Another CPU inserted it first, or the map is full. */
	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, 1);
		return;
	}
	stat_inc(PROFILE_STAT_HASH_FULL);
}

/* One sample: its key counted in the active count map. */
static __always_inline int count_sample(struct bpf_perf_event_data *ctx, int pidns_mode)
{
	struct profile_config *cfg;
	struct profile_key key;
	__u32 tgid, tid;

	stat_inc(PROFILE_STAT_SAMPLES);
	cfg = wanted(pidns_mode, &tgid, &tid);
	if (!cfg)
		return 0;

	/* Padding is hashed too: zero the whole key first. */
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = tgid;
	if (cfg->flags & PROFILE_CFG_FILTER_TID)
		key.tid = tid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	key.user_stack_id = PROFILE_STACK_NOT_TAKEN;
	key.kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	if (cfg->flags & PROFILE_CFG_USER_STACK)
		key.user_stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (cfg->flags & PROFILE_CFG_KERNEL_STACK) {
		key.kernel_stack_id = bpf_get_stackid(ctx, &stacks, 0);
		/* Kept so the loader can add the leaf if this kernel's stack lacks it. */
		if (key.kernel_stack_id >= 0)
			key.kernel_ip = ctx->regs.rip;	/* x86-64 UAPI name of ip */
	}

	if (cfg->active_counts)
		count(&counts1, &key);
	else
		count(&counts0, &key);
	return 0;
}

#endif
