// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU program (offcpu.bpf.c) with the user stacks of the processes
 * the native tables have unwound by them (bpf/offcpu_native.bpf.h;
 * --unwind auto): the switch program hands a thread switching out to the
 * step program, which steps NATIVE_FRAMES_PER_RUN frames a run and
 * tail-calls itself, then the finish program, which stores the stack and
 * its id, and hands the thread to the Python walk. Loaded on the off-CPU
 * program's maps, and on the counting program's tables where it unwinds
 * by them too (one store for both).
 *
 * bpf-compat: linux-4.9
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#define OFFCPU_PYTHON
#define OFFCPU_NATIVE
#include "bpf/offcpu.bpf.h"

SEC("tracepoint/sched/sched_switch")
int offcpu_switch_native(void *ctx)
{
	return offcpu_on_switch(ctx, 0);
}

/*
 * No room for a fallback after the tail calls: 4.9 takes 4,096
 * instructions, and the steps take all but a few. Without the step or the
 * finish program (a prog array filled at the load: not so) the wait is
 * counted with no user stack, and -v counts it.
 */
SEC("tracepoint/sched/sched_switch")
int native_step(void *ctx)
{
	if (native_step_run(ctx))
		stat_inc(OFFCPU_STAT_NATIVE_NO_PROG);
	return LET_OTHERS_RECORD;
}

SEC("tracepoint/sched/sched_switch")
int native_finish(void *ctx)
{
	struct offcpu_config *cfg;
	struct offcpu_start *st;
	struct native_walk *w;
	__u32 zero = 0, tid, tgid, end, leaf;
	int id;

	w = bpf_map_lookup_elem(&native_walk, &zero);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!w || !cfg)
		return LET_OTHERS_RECORD;
	/* The keys from the BPF stack: 4.9's helpers take no map value's. */
	tid = w->key.tid;
	tgid = w->tgid;
	end = w->st.end;
	/* Code in no known mapping: a library mapped since its process was read. */
	if (end == NATIVE_END_UNMAPPED)
		native_note(ctx, tgid);
	/* A leaf no row covers: the frame-pointer walk, no worse than the one frame. */
	leaf = end == NATIVE_END_NO_CFI && w->st.depth == 1;
	id = leaf ? -1 : native_store(&ustacks_off, &uclaims_off, ustack_hash_end(w->hash),
				  cfg->native_slots - 1);
	st = bpf_map_lookup_elem(&start, &tid);
	if (!st)
		return LET_OTHERS_RECORD;
	if (id >= 0) {
		st->user_stack_id = id | PROFILE_STACK_WALKED;
		stat_inc(OFFCPU_STAT_NATIVE_WALKED);
		native_count_end(end);
	} else {
		/* No room (or the leaf's): the kernel's frame-pointer walk, as before. */
		stat_inc(leaf ? OFFCPU_STAT_NATIVE_LEAF_FP : OFFCPU_STAT_NATIVE_FULL);
		st->user_stack_id = offcpu_stack(ctx, BPF_F_USER_STACK);
	}
	if (cfg->flags & OFFCPU_CFG_PYTHON)
		py_hand_over_offcpu(ctx, st, st->tgid, tid);
	return LET_OTHERS_RECORD;
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_probe_read, bpf_get_stackid are GPL-only */
