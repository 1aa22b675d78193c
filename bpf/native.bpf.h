/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The counting program's part of the native walk (bpf/native_walk.bpf.h,
 * which says how it walks): the generations' stored-stack tables, the
 * hand-over of a sample to the step program, and what goes elsewhere (a
 * process not loaded, Node's left to stack copies).
 *
 * The stored-stack tables are ARRAYs: 4.9 cannot insert a 1 KiB value (a
 * helper's value must be on the 512-byte BPF stack), so a slot is claimed
 * in a small hash (uclaims, which user space empties after the drain) and
 * the array's element written in place. A slot claimed by another CPU is
 * compared (a stack half written compares different: the next slot).
 */
#ifndef BPF_NATIVE_BPF_H
#define BPF_NATIVE_BPF_H

#include "bpf/common.bpf.h"

#define NATIVE_STAT_NOTED PROFILE_STAT_NATIVE_NOTED
#define NATIVE_STAT_END_NO_CFI PROFILE_STAT_NATIVE_NO_CFI
#define NATIVE_STAT_END_READ PROFILE_STAT_NATIVE_READ
#define NATIVE_STAT_END_UNMAPPED PROFILE_STAT_NATIVE_UNMAPPED
#define NATIVE_STAT_END_TRUNCATED PROFILE_STAT_NATIVE_TRUNCATED
#include "bpf/native_walk.bpf.h"

/* The generations' stored stacks (native_slots of them) and their claims. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustacks0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustacks1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} uclaims0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, __u32);
} uclaims1 SEC(".maps");

/*
 * Called by the counting program first: 0 for a process the tables have
 * (native_hand_over walks it) or a 32-bit sample (it says why not). A
 * process they do not have yet is noted, and its sample goes to the
 * stack-copy program where user space set one and reads its copies now
 * (PROFILE_CFG_COPY_NEW; a tail call: nothing after it runs; the copy
 * takes its own kernel stack, so the caller has not taken one): its stack
 * is unwound in user space, complete from a new process's first sample.
 * A process left to copies (copies_only: it runs Node.js) is sent there
 * too, system-wide as well. Else 1, counted, for the kernel's walk.
 */
static __always_inline int native_not_loaded(struct bpf_perf_event_data *ctx,
					     const struct profile_config *cfg, __u32 tgid)
{
	struct native_proc *proc;
	__u64 cs = ctx->regs.cs;
	__u32 copies_only;

	asm volatile("" : "+r"(cs));
	if ((cs & 3) && cs != USTACK_USER64_CS)
		return 0;
	proc = bpf_map_lookup_elem(&native_procs, &tgid);
	if (proc && !proc->copies_only)
		return 0;
	copies_only = proc != NULL;
	if (!copies_only)
		native_note(ctx, tgid);
	if ((copies_only || (cfg->flags & PROFILE_CFG_COPY_NEW)) &&
	    bpf_ktime_get_ns() < cfg->copies_until_ns) {
		if (copies_only)
			stat_inc(PROFILE_STAT_NATIVE_INTERP_COPIED);
		bpf_tail_call(ctx, &native_progs,
			      (cs & 3) ? NATIVE_PROG_COPY : NATIVE_PROG_COPY_KERNEL);
		if (copies_only)
			stat_add(PROFILE_STAT_NATIVE_INTERP_COPIED, -1);
	}
	stat_inc(copies_only ? PROFILE_STAT_NATIVE_INTERP_FP : PROFILE_STAT_NATIVE_UNKNOWN);
	return 1;
}

/*
 * Called by the counting program with the sample's key (its kernel stack
 * taken, its user stack not) for a process the tables have: a 64-bit
 * user-mode sample goes to the step program (a tail call: nothing after
 * it runs); with NATIVE_TASK_REGS (bpf_task_pt_regs, 5.15 with BTF) a
 * kernel-mode sample too, from the task's user registers. Otherwise it
 * counts why not and returns, for the caller to take the kernel's walk.
 */
static __always_inline void native_hand_over(struct bpf_perf_event_data *ctx,
					     const struct profile_key *key, __u32 gen)
{
	__u64 ip = ctx->regs.rip, sp = ctx->regs.rsp, bp = ctx->regs.rbp, cs = ctx->regs.cs;
	struct native_walk *w;
	__u32 zero = 0, tgid = key->tgid;

	/* Loaded once: the verifier refuses a context pointer moved by a merged load. */
	asm volatile("" : "+r"(ip), "+r"(sp), "+r"(bp), "+r"(cs));
	if (!(cs & 3)) {
#ifdef NATIVE_TASK_REGS
		struct pt_regs regs;

		/* A kernel thread's say it has no user stack: the kernel's walk finds none either. */
		if (bpf_probe_read_kernel(&regs, sizeof(regs),
					  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())) ||
		    !(regs.cs & 3)) {
			stat_inc(PROFILE_STAT_NATIVE_KERNEL_MODE);
			return;
		}
		ip = regs.rip;
		sp = regs.rsp;
		bp = regs.rbp;
		cs = regs.cs;
#else
		/*
		 * Without bpf_task_pt_regs (5.15 with BTF): the user registers
		 * the entry code saved at the top of the task's kernel stack,
		 * the one the interrupted rsp is on or else task_struct's (a
		 * kernel thread's gives no user cs and ss there: the kernel's
		 * walk, which finds none either or walks by rbp).
		 */
		__u64 r[USTACK_TOP_WORDS];

		if (!ustack_kernel_mode_regs(sp, r)) {
			stat_inc(PROFILE_STAT_NATIVE_KERNEL_MODE);
			return;
		}
		ip = r[USTACK_TOP_IP];
		sp = r[USTACK_TOP_SP];
		bp = r[USTACK_TOP_BP];
		cs = USTACK_USER64_CS;
#endif
	}
	if (cs != USTACK_USER64_CS) {
		stat_inc(PROFILE_STAT_NATIVE_COMPAT);
		return;
	}
	w = bpf_map_lookup_elem(&native_walk, &zero);
	if (!w)
		return;
	__builtin_memcpy(&w->key, key, sizeof(*key));
	native_walk_start(w, tgid, gen, ip, sp, bp);
	bpf_tail_call(ctx, &native_progs, NATIVE_PROG_STEP);
	stat_inc(PROFILE_STAT_NATIVE_NO_PROG);
}

#endif
