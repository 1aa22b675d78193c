/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU program's user stacks unwound by the tables (--unwind auto;
 * bpf/native_walk.bpf.h says how): a thread of a process in native_procs
 * is stored at its switch-out without a user stack, then handed to the
 * step program with the user registers that the entry code saved at the
 * top of its kernel stack (its system call's, or the interrupt's that
 * preempted it); the finish program stores the stack in ustacks_off, its
 * id in the thread's start entry, and hands the thread to the Python walk.
 * The stacks stay for the run: an interval is counted at its switch-in,
 * which may come long after (the counting program's stores are emptied by
 * generation at its drains; this one is never). Other threads' user
 * stacks are the kernel's frame-pointer walk, as before, each reason
 * counted; a user thread of a process not loaded yet is noted, for user
 * space to read its tables.
 *
 * Included by bpf/offcpu.bpf.h with OFFCPU_NATIVE, after its stat_inc and
 * offcpu_stack.
 */
#ifndef BPF_OFFCPU_NATIVE_BPF_H
#define BPF_OFFCPU_NATIVE_BPF_H

#define NATIVE_STAT_NOTED OFFCPU_STAT_NATIVE_NOTED
#define NATIVE_STAT_END_NO_CFI OFFCPU_STAT_NATIVE_NO_CFI
#define NATIVE_STAT_END_READ OFFCPU_STAT_NATIVE_READ
#define NATIVE_STAT_END_UNMAPPED OFFCPU_STAT_NATIVE_UNMAPPED
#define NATIVE_STAT_END_TRUNCATED OFFCPU_STAT_NATIVE_TRUNCATED
#include "bpf/native_walk.bpf.h"

/* The walked stacks (offcpu_config.native_slots of them) and their claims. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustacks_off SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} uclaims_off SEC(".maps");

/*
 * Whether the user stack of the current thread (of tgid) is for the tables
 * to walk: 1 where its process is loaded; 0 where it is not (to be noted);
 * -1 where neither (no walk asked, or a process left to stack copies:
 * Node's, whose JavaScript frames the on-CPU copies read, which the store
 * has read already and which must not be noted again).
 */
static __always_inline int offcpu_native_loaded(struct offcpu_config *cfg, __u32 tgid)
{
	struct native_proc *proc;

	if (!(cfg->flags & OFFCPU_CFG_NATIVE) || !(cfg->flags & OFFCPU_CFG_USER_STACK))
		return -1;
	proc = bpf_map_lookup_elem(&native_procs, &tgid);
	if (!proc)
		return 0;
	if (proc->copies_only) {
		stat_inc(OFFCPU_STAT_NATIVE_COPIES_ONLY);
		return -1;
	}
	return 1;
}

/*
 * A user thread (its frame-pointer stack taken: uid, not -EFAULT) whose
 * process is not loaded (walk 0): noted, for user space to read its tables.
 */
static __always_inline void offcpu_native_note(void *ctx, int walk, __u32 tgid, __s32 uid)
{
	if (walk || uid == -EFAULT)
		return;
	native_note(ctx, tgid);
	stat_inc(OFFCPU_STAT_NATIVE_UNKNOWN);
}

/* tid's user stack by frame pointers after all: the walk could not be done or kept. */
static __always_inline void offcpu_native_fp(void *ctx, __u32 tid, __u32 stat)
{
	struct offcpu_start *st = bpf_map_lookup_elem(&start, &tid);

	stat_inc(stat);
	if (st)
		st->user_stack_id = offcpu_stack(ctx, BPF_F_USER_STACK);
}

/*
 * tid, just stored without a user stack (offcpu_native_loaded), handed to
 * the step program (a tail call: nothing after it runs), else walked by
 * frame pointers.
 */
static __always_inline void offcpu_native_hand_over(void *ctx, struct offcpu_config *cfg,
						    __u32 tid)
{
	__u64 r[USTACK_TOP_WORDS];
	struct offcpu_start *st;
	struct native_walk *w;
	__u32 zero = 0;

	if (!(cfg->flags & OFFCPU_CFG_NATIVE) || !(cfg->flags & OFFCPU_CFG_USER_STACK))
		return;
	st = bpf_map_lookup_elem(&start, &tid);
	if (!st || st->user_stack_id != PROFILE_STACK_NOT_TAKEN)
		return;
	if (!ustack_task_top_regs(r)) {
		offcpu_native_fp(ctx, tid, OFFCPU_STAT_NATIVE_NO_REGS);
		return;
	}
	w = bpf_map_lookup_elem(&native_walk, &zero);
	if (!w)
		return;
	__builtin_memset(&w->key, 0, sizeof(w->key));
	w->key.tgid = st->tgid;
	w->key.tid = tid;
	native_walk_start(w, st->tgid, 0, r[USTACK_TOP_IP], r[USTACK_TOP_SP], r[USTACK_TOP_BP]);
	if ((cfg->flags & OFFCPU_CFG_SYSCALL_BP_STALE) && (__s64)r[USTACK_TOP_ORIG_AX] >= 0) {
		w->bp = 0;
		w->bp_lost = 1;
	}
	bpf_tail_call(ctx, &native_progs, NATIVE_PROG_STEP);
	offcpu_native_fp(ctx, tid, OFFCPU_STAT_NATIVE_NO_PROG);
}

#endif
