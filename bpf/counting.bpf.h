/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counting program's body, shared by profile.bpf.c (Linux 4.9) and its
 * variants for a profiler inside a pid namespace: profile_pidns.bpf.c
 * (Linux 5.7), profile_nsids.bpf.c (4.9, with COUNTING_NSIDS), and the one
 * that walks user stacks itself, profile_fpwalk.bpf.c (5.5, with
 * COUNTING_FP_WALK and bpf/fpwalk.bpf.h included first), and the one that
 * unwinds them by the tables, profile_native.bpf.c (4.9, with
 * COUNTING_NATIVE and bpf/native.bpf.h included first).
 */
#ifndef BPF_COUNTING_BPF_H
#define BPF_COUNTING_BPF_H

#include "bpf/stackid.bpf.h"
#include "bpf/python.bpf.h"

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
		/* At most this many stacks new to the stack maps (the drain decision). */
		stat_add(PROFILE_STAT_NEW_STACKS,
			 (key->user_stack_id >= 0) + (key->kernel_stack_id >= 0));
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

/*
 * Whether the sample interrupted user mode: its kernel stack is then empty,
 * and the kernel would only refuse the walk after paying for the helper's
 * set-up (0.6-0.7 us a sample here; x86-64, the privilege level in cs).
 */
static __always_inline int in_user_mode(const struct bpf_perf_event_data *ctx)
{
	return (ctx->regs.cs & 3) != 0;
}

/* The user stack's id in generation gen, or the error (-EFAULT: none). */
static __always_inline int user_stack(struct bpf_perf_event_data *ctx, __u32 gen)
{
#ifdef COUNTING_FP_WALK
	int id = fpwalk_user(ctx, gen ? (void *)&ustacks1 : (void *)&ustacks0);

	if (id != FPWALK_NOT_WALKED)
		return id;
#endif
	return take_gen_stack(ctx, gen, BPF_F_USER_STACK, PROFILE_STAT_USER_STACK_LOST);
}

/* One sample's key counted in the active count map. */
static __always_inline void count_key(struct bpf_perf_event_data *ctx, int pidns_mode)
{
	struct profile_config *cfg;
	struct profile_key key;
	__u32 tgid, tid, gen;
#ifdef COUNTING_NATIVE
	int walk = 0;
#endif

	cfg = wanted(pidns_mode, &tgid, &tid);
	if (!cfg)
		return;
#ifdef COUNTING_NSIDS
	if (!nsid_visible(ctx, (cfg->flags & PROFILE_CFG_KEY_TID) ? tid : tgid, tgid, tid,
			  PROFILE_STAT_NSIDS_FULL))
		return;
#endif
#ifdef COUNTING_NATIVE
	/* Before a kernel stack is taken: a sample sent as a copy takes its own. */
	if (cfg->flags & PROFILE_CFG_USER_STACK)
		walk = !native_not_loaded(ctx, cfg, tgid);
#endif
	/* Read once: the stacks and the count of one sample go to one generation. */
	gen = cfg->active_counts;

	/* Padding is hashed too: zero the whole key first. */
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = tgid;
	if (cfg->flags & (PROFILE_CFG_FILTER_TID | PROFILE_CFG_KEY_TID))
		key.tid = tid;
	bpf_get_current_comm(&key.comm, sizeof(key.comm));
	key.user_stack_id = PROFILE_STACK_NOT_TAKEN;
	key.kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	/* What the kernel answers for a user-mode sample, without asking it. */
	if ((cfg->flags & PROFILE_CFG_KERNEL_STACK) && in_user_mode(ctx)) {
		key.kernel_stack_id = -EFAULT;
	} else if (cfg->flags & PROFILE_CFG_KERNEL_STACK) {
		key.kernel_stack_id = take_gen_stack(ctx, gen, 0, PROFILE_STAT_KERNEL_STACK_LOST);
		/* Kept so the loader can add the leaf if this kernel's stack lacks it. */
		if (key.kernel_stack_id >= 0)
			key.kernel_ip = ctx->regs.rip;	/* x86-64 UAPI name of ip */
	}
#ifdef COUNTING_NATIVE
	/* Walked by the tables where it can be: then the step program counts it. */
	if (walk)
		native_hand_over(ctx, &key, gen);
#endif
	if (cfg->flags & PROFILE_CFG_USER_STACK)
		key.user_stack_id = user_stack(ctx, gen);
#ifdef COUNTING_PYTHON
	/* A Python thread's sample is counted by the walk, after its frames. */
	if (cfg->flags & PROFILE_CFG_PYTHON)
		py_hand_over(ctx, &key, gen);
#endif

	if (gen)
		count(&counts1, &key);
	else
		count(&counts0, &key);
}

/*
 * One sample. A run counts itself as it starts, before it reads the
 * generation, and as it ends, after its count: runs on one CPU do not
 * overlap, so the loader knows when every run that may have read the old
 * generation has ended (its count in, its statistics with it), however
 * long one took (see wait_runs in backend-bpf/bpfbackend.c).
 */
static __always_inline int count_sample(struct bpf_perf_event_data *ctx, int pidns_mode)
{
	stat_inc(PROFILE_STAT_SAMPLES);
	count_key(ctx, pidns_mode);
	stat_inc(PROFILE_STAT_RUNS_DONE);
	return 0;
}

#endif
