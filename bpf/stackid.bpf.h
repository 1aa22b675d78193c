/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack ids with a second chance, for the counting and the stack-copy
 * programs: a stack that collides in its first stack map is taken into an
 * overflow map. Generation 0's first map is `stacks` (bpf/common.bpf.h);
 * the stack-copy program takes its stacks into the counting program's
 * maps too (reused), into the generation the counting reads.
 */
#ifndef BPF_STACKID_BPF_H
#define BPF_STACKID_BPF_H

#include <linux/errno.h>
#include <linux/bpf_perf_event.h>

#include "bpf/common.bpf.h"

/*
 * A stack map is a table of buckets indexed by the stack's hash, without
 * chaining: a different stack whose hash lands on a taken bucket gets
 * -EEXIST and is lost (BPF_F_REUSE_STACKID would overwrite the bucket and
 * give older count keys the wrong stack, which is worse). So the maps are
 * kept nearly empty: each generation has its own (`stacks` and counts0 for
 * 0, stacks1 and counts1 for 1), and the loader empties a generation's maps
 * after draining it, every second or sooner. A stack that still collides is
 * taken into its generation's small overflow map, where its bucket is almost
 * surely free.
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} stacks1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} overflow1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} overflow0 SEC(".maps");

/*
 * The stack's id in first, else (collision) in overflow with
 * PROFILE_STACK_OVERFLOW set, else the error, counted in lost_slot unless it
 * is -EFAULT (no stack of that kind: a kernel thread's user stack, a
 * user-mode sample's kernel stack).
 */
static __always_inline int take_stack(struct bpf_perf_event_data *ctx, void *first,
				      void *overflow, __u64 flags, __u32 lost_slot)
{
	int id = bpf_get_stackid(ctx, first, flags);

	if (id == -EEXIST) {
		stat_inc(PROFILE_STAT_STACK_OVERFLOWED);
		id = bpf_get_stackid(ctx, overflow, flags);
		if (id >= 0)
			return id | PROFILE_STACK_OVERFLOW;
	}
	if (id < 0 && id != -EFAULT)
		stat_inc(lost_slot);
	if (id == -ENOMEM)
		stat_inc(PROFILE_STAT_STACK_NOMEM);
	return id;
}

/* take_stack into generation gen's maps. */
static __always_inline int take_gen_stack(struct bpf_perf_event_data *ctx, __u32 gen,
					  __u64 flags, __u32 lost_slot)
{
	return gen ? take_stack(ctx, &stacks1, &overflow1, flags, lost_slot)
		   : take_stack(ctx, &stacks, &overflow0, flags, lost_slot);
}

/*
 * A stack copy's stack id (bpf/dwarf.bpf.h), taken into the generation the
 * counting program counts into (0 for --unwind dwarf, which does not
 * count): the loader reads the copies before it empties a generation's
 * maps, and generation 1's ids by PROFILE_STACK_GEN1.
 */
static __always_inline int take_copy_stack(struct bpf_perf_event_data *ctx, __u32 gen,
					   __u64 flags, __u32 lost_slot)
{
	int id;

	/* Decided before the helper's call: 4.9's program has no BPF stack to keep gen across it. */
	if (gen) {
		id = take_stack(ctx, &stacks1, &overflow1, flags, lost_slot);
		return id >= 0 ? id | PROFILE_STACK_GEN1 : id;
	}
	return take_stack(ctx, &stacks, &overflow0, flags, lost_slot);
}

#endif
