/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks the programs walk themselves (bpf/fpwalk.bpf.h by frame
 * pointers, bpf/native.bpf.h by the unwind tables), stored in the
 * generation's ustacks map under a hash of their ips, which user space
 * (backend-bpf/stacks.c) reads by the id the count key carries
 * (PROFILE_STACK_WALKED). What both walks share: the hash, taken as the
 * ips come, and the comparison of a stored stack with the one walked. No
 * loops and no branch a frame, for Linux 4.9's verifier.
 */
#ifndef BPF_USTACK_BPF_H
#define BPF_USTACK_BPF_H

#include <linux/types.h>
#include <bpf/bpf_helpers.h>

#include "bpf/profile_maps.h"

/* x86-64's user mode, as both user walks check it: __USER_CS (32-bit code runs at __USER32_CS). */
#define USTACK_USER64_CS 0x33
/* The highest user address (TASK_SIZE_MAX with 4-level page tables; 5-level is above). */
#define USTACK_USER_TOP 0x00007ffffffff000ULL

/* __USER_DS: a user-mode stack segment. */
#define USTACK_USER_DS 0x2b
/*
 * x86-64's THREAD_SIZE (16 KiB since 3.15), to whose multiple a task's
 * kernel stack is aligned, and the 168 bytes of struct pt_regs, which the
 * entry code saves at its top (task_pt_regs). KASAN's 32 KiB stacks are
 * not tried: on a 16 KiB kernel the 32 KiB-aligned top of a stack's lower
 * half can be another task's, whose registers look as good.
 */
#define USTACK_THREAD_SIZE (16u << 10)
#define USTACK_PT_REGS_SIZE 168
/* pt_regs from rbp (offset 32) to ss (160): rbp ... rip, cs, flags, rsp, ss. */
#define USTACK_TOP_WORDS 17

/* Where in those words rbp, orig_ax (a system call's number, else -1), rip and rsp are. */
#define USTACK_TOP_BP 0
#define USTACK_TOP_ORIG_AX 11
#define USTACK_TOP_IP 12
#define USTACK_TOP_SP 15

/*
 * A kernel-mode sample's user registers where the kernel has no
 * bpf_task_pt_regs (5.15 with BTF): those the entry code saved at the top
 * of the 16 KiB kernel stack that ksp is on, read into the caller's r
 * (USTACK_TOP_WORDS), where they look like a 64-bit user task's (cs, ss,
 * both addresses below the user top): 1, else 0 (a kernel thread's are
 * zero; an interrupt's or the entry trampoline's stack has none there).
 */
static __always_inline int ustack_top_regs(__u64 ksp, __u64 *r)
{
	__u64 top = (ksp | (USTACK_THREAD_SIZE - 1)) + 1;

	if (bpf_probe_read(r, USTACK_TOP_WORDS * sizeof(*r),
			   (void *)(top - USTACK_PT_REGS_SIZE + 32)))
		return 0;
	/* r[13] cs, r[16] ss. */
	return r[13] == USTACK_USER64_CS && r[16] == USTACK_USER_DS &&
	       r[USTACK_TOP_IP] < USTACK_USER_TOP && r[USTACK_TOP_SP] < USTACK_USER_TOP &&
	       r[USTACK_TOP_IP];
}

/* Where task_struct's stack field may be: after thread_info (8 bytes on 4.9, 16 from 4.15, 24 from 5.11) and state. */
#define USTACK_TASK_STACK_FIRST 16
#define USTACK_TASK_STACK_LAST 32
/* The lowest kernel address (x86-64, 4-level page tables). */
#define USTACK_KERNEL_BOTTOM 0xffff800000000000ULL

/*
 * ustack_top_regs for a sample whose rsp is not on the task's stack (it
 * interrupted an interrupt, on that one's own): the task's stack from
 * task_struct's stack field, which is among its first words, at an offset
 * the kernel's version and configuration decide and no BTF tells here.
 * Each candidate is taken only where it is a 16 KiB-aligned kernel address
 * whose top holds a 64-bit user task's registers.
 */
static __always_inline int ustack_task_top_regs(__u64 *r)
{
	__u64 task = bpf_get_current_task();

#pragma clang loop unroll(full)
	for (int off = USTACK_TASK_STACK_FIRST; off <= USTACK_TASK_STACK_LAST; off += 8) {
		if (bpf_probe_read(r, sizeof(*r), (void *)(task + off)))
			return 0;
		if (r[0] >= USTACK_KERNEL_BOTTOM && !(r[0] & (USTACK_THREAD_SIZE - 1)) &&
		    ustack_top_regs(r[0], r))
			return 1;
	}
	return 0;
}

/* A kernel-mode sample's user registers into r: by its rsp, else by its task (see above). */
static __always_inline int ustack_kernel_mode_regs(__u64 ksp, __u64 *r)
{
	return ustack_top_regs(ksp, r) || ustack_task_top_regs(r);
}

/* A stack's hash: the leaf's ip, then each return address mixed in. */
static __always_inline __u64 ustack_hash_add(__u64 h, __u64 ip)
{
	return (h ^ ip) * 0x9e3779b97f4a7c15ULL;
}

static __always_inline __u64 ustack_hash_end(__u64 h)
{
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return h;
}

/*
 * All ones when a <= b, else 0 (a, b < 2^63), without a branch: clang makes
 * a select one (BPF has no conditional move), and the verifier then walks
 * both sides of it.
 */
static __always_inline __u64 ustack_mask_le(__u64 a, __u64 b)
{
	__u64 d = b - a;	/* negative when a > b */

	asm volatile("" : "+r"(d));
	return (d >> 63) - 1;
}

/*
 * Whether a and b are one stack, compared to b's depth: a loop, for programs
 * of kernels with bounded loops (5.3) only; ustack_same is 4.9's.
 */
static __always_inline int ustack_same_to_depth(const struct profile_ustack *a,
						const struct profile_ustack *b)
{
	if (a->depth != b->depth || a->end != b->end)
		return 0;
	for (__u32 i = 0; i < PROFILE_MAX_STACK_DEPTH; i++) {
		if (i >= b->depth)
			break;
		if (a->ips[i] != b->ips[i])
			return 0;
	}
	return 1;
}

/* Whether a and b are one stack (depth, end and ips), without a branch a frame. */
static __always_inline int ustack_same(const struct profile_ustack *a,
				       const struct profile_ustack *b)
{
	__u64 depth = a->depth, diff = (a->depth ^ b->depth) | (a->end ^ b->end);

#pragma clang loop unroll(full)
	for (__u32 i = 0; i < PROFILE_MAX_STACK_DEPTH; i++) {
		/* All ones while i < depth. */
		diff |= (a->ips[i] ^ b->ips[i]) & ustack_mask_le(i + 1, depth);
		/* One frame at a time: clang would load them all first, past the BPF stack. */
		asm volatile("" : "+r"(diff));
	}
	return diff == 0;
}

#endif
