/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A user stack walked by frame pointers in the program itself (Linux 5.5:
 * bpf_probe_read_user; bounded loops, 5.3), for the counting program's
 * variant profile_fpwalk.bpf.c. The kernel's own walk (bpf_get_stackid
 * with BPF_F_USER_STACK) reads the same words, yet cost 4.3-7.5 us a sample
 * on this project's 6.18 VM where this walk and its table cost 0.9-1.3 us
 * (issue 36, both measured with kernel.bpf_stats_enabled on the same
 * samples). It walks as the kernel's perf_callchain_user does: the ip, then
 * from bp each frame's return address at fp + 8 and the next fp at fp,
 * while the frame lies below the user address limit and reads, to 127
 * entries; it ends at a zero return address, where user space ends the
 * kernel's stacks. Samples in kernel mode take their user registers from
 * the task's pt_regs with FPWALK_TASK_REGS (bpf_task_pt_regs, 5.15 with
 * kernel BTF), where a kernel thread's say it has no user stack, so no walk
 * is tried (the kernel's walk finds no mm, after its set-up); else they go
 * to the kernel's walk, as do samples in 32-bit code.
 *
 * Each generation's stacks go in a hash map by a hash of the ips, checked
 * frame by frame: a stack whose slot holds another tries the next slot,
 * then the stack map. Entries are only added by the program and deleted
 * by user space after the generation's drain, so a value read is whole.
 */
#ifndef BPF_FPWALK_BPF_H
#define BPF_FPWALK_BPF_H

#include <linux/errno.h>

#include "bpf/common.bpf.h"
#include "bpf/ustack.bpf.h"

/* Sizes are set by the loader before load (a quarter of --stack-storage-size). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustacks0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustacks1 SEC(".maps");

/* The stack being walked: 1 KiB, more than the BPF stack holds. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct profile_ustack);
} ustack_walk SEC(".maps");

/*
 * Below this no frame can be: the kernel maps nothing under vm.mmap_min_addr
 * (64 KiB by default). A main's saved rbp is often a small number left by
 * libc's start code without frame pointers (argc, 4, on Debian 12), whose
 * read would end the walk by a page fault: 0.7-0.8 us of a sample here.
 */
#define FPWALK_LOWEST_FRAME 0x10000

/* The walk's answer when the kernel's must do: kernel mode, 32-bit code, no room. */
#define FPWALK_NOT_WALKED (-1)
#define FPWALK_ID_MASK (PROFILE_STACK_WALKED - 1)

/* The walked stack s in table under key: 1 if it is there now, 0 if another is, -1 if full. */
static __always_inline int fpwalk_store(void *table, __u32 key, const struct profile_ustack *s)
{
	struct profile_ustack *old = bpf_map_lookup_elem(table, &key);

	if (!old) {
		if (!bpf_map_update_elem(table, &key, s, BPF_NOEXIST))
			return 1;
		/* Another CPU took the key first, or the map is full. */
		old = bpf_map_lookup_elem(table, &key);
		if (!old)
			return -1;
	}
	/*
	 * A loop to the stack's depth (this walk needs 5.5, past 5.3's
	 * bounded loops), not ustack_same's 127 compares without a branch,
	 * which 4.9's programs need: 3,020 instructions became 758, and a
	 * sample about 6% cheaper.
	 */
	return ustack_same_to_depth(old, s);
}

/*
 * The user stack's id with PROFILE_STACK_WALKED, -EFAULT for a kernel
 * thread's, or FPWALK_NOT_WALKED.
 */
static __always_inline int fpwalk_user(struct bpf_perf_event_data *ctx, void *table)
{
	__u64 ip = ctx->regs.rip, fp = ctx->regs.rbp, cs = ctx->regs.cs, h;
	struct profile_ustack *s;
	__u32 zero = 0, n, key;
	int got;

	/* Loaded once: the verifier refuses a context pointer moved by a merged load. */
	asm volatile("" : "+r"(ip), "+r"(fp), "+r"(cs));
	if (!(cs & 3)) {
#ifdef FPWALK_TASK_REGS
		struct pt_regs regs;

		if (bpf_probe_read_kernel(&regs, sizeof(regs),
					  (void *)bpf_task_pt_regs(bpf_get_current_task_btf())))
			return FPWALK_NOT_WALKED;
		if (!(regs.cs & 3))
			return -EFAULT;	/* a kernel thread's pt_regs: no user stack */
		ip = regs.rip;
		fp = regs.rbp;
		cs = regs.cs;
#else
		return FPWALK_NOT_WALKED;
#endif
	}
	if (cs != USTACK_USER64_CS)
		return FPWALK_NOT_WALKED;
	s = bpf_map_lookup_elem(&ustack_walk, &zero);
	if (!s)
		return FPWALK_NOT_WALKED;
	s->ips[0] = ip;
	h = ip;
	for (n = 1; n < PROFILE_MAX_STACK_DEPTH; n++) {
		__u64 frame[2];	/* the caller's fp, the return address */

		/*
		 * A zero fp ends the chain (the ABI's outermost frame: clone and
		 * _start clear rbp). Reading it would end the walk too, by a page
		 * fault: 2 us of the 2.4 a sample cost on a 6.18 VM (issue 36),
		 * where the kernel's own walk still pays it.
		 */
		if (fp < FPWALK_LOWEST_FRAME || fp > USTACK_USER_TOP - sizeof(frame))
			break;
		if (bpf_probe_read_user(frame, sizeof(frame), (const void *)fp) || !frame[1])
			break;
		s->ips[n] = frame[1];
		h = ustack_hash_add(h, frame[1]);
		fp = frame[0];
	}
	s->depth = n;
	s->end = 0;
	key = (__u32)ustack_hash_end(h) & FPWALK_ID_MASK;
	got = fpwalk_store(table, key, s);
	if (got == 0) {
		key = (key + 1) & FPWALK_ID_MASK;
		got = fpwalk_store(table, key, s);
	}
	return got > 0 ? (int)(key | PROFILE_STACK_WALKED) : FPWALK_NOT_WALKED;
}

#endif
