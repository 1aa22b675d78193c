/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stack ids with a second chance, for the counting and the stack-copy
 * programs: a stack that collides in its first stack map is taken into an
 * overflow map. Generation 0's overflow map is here; generation 1's maps
 * are only the counting program's (bpf/counting.bpf.h).
 */
#ifndef BPF_STACKID_BPF_H
#define BPF_STACKID_BPF_H

#include <linux/errno.h>
#include <linux/bpf_perf_event.h>

#include "bpf/common.bpf.h"

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

#endif
