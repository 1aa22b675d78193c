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

#include "bpf/profile_maps.h"

/* x86-64's user mode, as both user walks check it: __USER_CS (32-bit code runs at __USER32_CS). */
#define USTACK_USER64_CS 0x33
/* The highest user address (TASK_SIZE_MAX with 4-level page tables; 5-level is above). */
#define USTACK_USER_TOP 0x00007ffffffff000ULL

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
