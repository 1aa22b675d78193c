/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind dwarf: instead of counting, each sample goes to user space with
 * the user registers and a copy of the user stack, to be unwound there with
 * .eh_frame. Kernel stacks are still taken here, by id, like the counting
 * program's; the 5.15 variant sends them in the record instead.
 *
 * A sample taken in user mode has the user registers in its context. One
 * taken in kernel mode (a system call, a page fault) has the kernel's; the
 * user registers are then at the top of the task's kernel stack, which only
 * bpf_task_pt_regs() (Linux 5.15, with kernel BTF) can find: that variant is
 * bpf/dwarf_task_regs.bpf.c. bpf/dwarf.bpf.c, for every kernel from 4.9,
 * falls back to the frame-pointer user stack for those samples and counts
 * them.
 *
 * That variant sends the head and the whole copy in one record
 * (bpf/dwarf_one.bpf.h): a record per piece, as below, cost the reader more
 * than the copy itself.
 *
 * Written for what Linux 4.9's verifier accepts (DWARF_PIECES_ON_STACK: see
 * profile_maps.h), and cheap to verify on all:
 *  - no byte count is kept here: the pieces are read at a source address
 *    computed from the (unknown) user sp into one buffer, so every path
 *    reaching the refining reads after a failed piece has the same register
 *    types and the verifier prunes them, where constant offsets differing
 *    per path made 4.19's verifier walk every path (131072 instructions,
 *    E2BIG);
 *  - no loops (4.9 has none), under 4096 instructions.
 */
#ifndef BPF_DWARF_BPF_H
#define BPF_DWARF_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf/stackid.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} snapshots SEC(".maps");

/* Pieces, and the first of the refining reads: a power of two, their sum at least a piece - 8. */
#ifdef DWARF_PIECES_ON_STACK
#define DWARF_PIECE PROFILE_DUMP_PIECE_STACK
#define DWARF_REFINE_FIRST 256
#else
#define DWARF_PIECE PROFILE_DUMP_PIECE_MAP
#define DWARF_REFINE_FIRST 2048
#endif
#define DWARF_MAX_PIECES ((PROFILE_DUMP_MAX + DWARF_PIECE - 1) / DWARF_PIECE)

struct dwarf_piece_buf {
	struct dwarf_piece h;
	__u8 data[DWARF_PIECE];
};

#if !defined(DWARF_PIECES_ON_STACK) && !defined(DWARF_ONE_PIECE)
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dwarf_piece_buf);
} piece_buf SEC(".maps");
#endif

/*
 * What a run keeps on its 512-byte BPF stack. The head is filled as the
 * sample is looked at, so that only a few values stay live across the
 * unrolled copy (each live value would be reloaded after every piece).
 */
struct dwarf_stack_buf {
	struct dwarf_head head;
	union {
#ifdef DWARF_PIECES_ON_STACK
		struct dwarf_piece_buf piece;
#endif
		struct pt_regs regs;
	};
};

static __always_inline int user_mode(__u64 cs)
{
	return (cs & 3) == 3;
}

/*
 * Read size bytes at src into the piece and send it. Returns the read's
 * result. The piece's len must be size already.
 */
#define SEND_PIECE(ctx, p, src, size)                                                           \
	({                                                                                      \
		long __r = bpf_probe_read((p)->data, (size), (void *)(src));                     \
		if (!__r)                                                                       \
			bpf_perf_event_output((ctx), &snapshots, BPF_F_CURRENT_CPU, (p),        \
					      sizeof((p)->h) + (size));                         \
		__r;                                                                            \
	})

/*
 * Send the user stack from sp up, in pieces, up to where reading fails or
 * units * PROFILE_DUMP_UNIT bytes were sent; the last piece that failed is
 * refined by halving.
 */
static __always_inline void copy_stack(struct bpf_perf_event_data *ctx, struct dwarf_piece_buf *p,
				       __u64 sp, __u32 units)
{
	__u64 src = sp, limit = (__u64)units * PROFILE_DUMP_UNIT;

	p->h.kind = DWARF_REC_PIECE;
	p->h.len = DWARF_PIECE;
#pragma unroll
	for (int i = 0; i < DWARF_MAX_PIECES; i++) {
		if (i * DWARF_PIECE >= limit)
			return;
		if (SEND_PIECE(ctx, p, src, DWARF_PIECE))
			break;
		src += DWARF_PIECE;
	}
	/* The last piece crossed the end of the stack: take what it had, halving. */
#pragma unroll
	for (int size = DWARF_REFINE_FIRST; size >= 8; size /= 2) {
		p->h.len = size;
		if (!SEND_PIECE(ctx, p, src, size))
			src += size;
	}
}

#ifdef DWARF_ONE_PIECE
#include "bpf/dwarf_one.bpf.h"
#endif

static __always_inline int snapshot(struct bpf_perf_event_data *ctx, int use_task_regs)
{
	struct dwarf_stack_buf buf;
	struct profile_config *cfg;
	__u32 tgid, tid;

	stat_inc(PROFILE_STAT_SAMPLES);
	/* Kernels with bpf_task_pt_regs (5.15) also have bpf_get_ns_current_pid_tgid (5.7). */
	cfg = wanted(use_task_regs ? PIDNS_BY_CONFIG : PIDNS_NEVER, &tgid, &tid);
	if (!cfg)
		return 0;
	/* 4.9 sends initialized BPF stack only: no stray padding. */
	__builtin_memset(&buf.head, 0, sizeof(buf.head));
	buf.head.kind = DWARF_REC_HEAD;
	buf.head.tgid = tgid;
	/* The thread, always: its Python frames are read by it (the count keeps processes apart only). */
	buf.head.tid = tid;
	buf.head.kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	buf.head.user_stack_id = PROFILE_STACK_NOT_TAKEN;
	bpf_get_current_comm(buf.head.comm, sizeof(buf.head.comm));
	if (cfg->flags & PROFILE_CFG_KERNEL_STACK) {
#ifdef DWARF_ONE_PIECE
		/* The stack itself goes in the record, with the copy (send_one). */
		if (!user_mode(ctx->regs.cs))
			buf.head.kernel_ip = ctx->regs.rip;
#else
		buf.head.kernel_stack_id = take_stack(ctx, &stacks, &overflow0, 0,
						      PROFILE_STAT_KERNEL_STACK_LOST);
		if (buf.head.kernel_stack_id >= 0)
			buf.head.kernel_ip = ctx->regs.rip;
#endif
	}
	if (cfg->flags & PROFILE_CFG_USER_STACK) {
		__u64 ip = ctx->regs.rip, sp = ctx->regs.rsp, bp = ctx->regs.rbp;

		/*
		 * Loaded once, here: clang would otherwise merge these loads
		 * with the ones from buf.regs into a load through a selected
		 * pointer, and the verifier refuses a moved context pointer.
		 */
		asm volatile("" : "+r"(ip), "+r"(sp), "+r"(bp));
		if (user_mode(ctx->regs.cs)) {
			buf.head.regs_valid = 1;
		} else if (use_task_regs) {
			if (!bpf_probe_read_kernel(&buf.regs, sizeof(buf.regs),
						   (void *)bpf_task_pt_regs(bpf_get_current_task_btf())) &&
			    user_mode(buf.regs.cs)) {
				ip = buf.regs.rip;
				sp = buf.regs.rsp;
				bp = buf.regs.rbp;
				buf.head.regs_valid = 1;
			}
		}
		if (buf.head.regs_valid) {
			buf.head.ip = ip;
			buf.head.sp = sp;
			buf.head.bp = bp;
		}
		if (buf.head.regs_valid) {
#if defined(DWARF_PIECES_ON_STACK)
			copy_stack(ctx, &buf.piece, sp, cfg->dump_chunks);
#elif defined(DWARF_ONE_PIECE)
			/* Sent below, with the kernel stack. */
#else
			__u32 zero = 0;
			struct dwarf_piece_buf *p = bpf_map_lookup_elem(&piece_buf, &zero);

			if (p)
				copy_stack(ctx, p, sp, cfg->dump_chunks);
#endif
		} else if (!use_task_regs) {
			/*
			 * No user registers here: the frame-pointer walk, counted
			 * unless there is no user stack at all (a kernel thread).
			 */
			buf.head.user_stack_id = take_stack(ctx, &stacks, &overflow0,
							    BPF_F_USER_STACK,
							    PROFILE_STAT_USER_STACK_LOST);
			if (buf.head.user_stack_id != -14 /* -EFAULT */)
				stat_inc(PROFILE_STAT_NO_USER_REGS);
		}
	}
#ifdef DWARF_ONE_PIECE
	if (send_one(ctx, &buf.head, buf.head.sp, buf.head.regs_valid ? cfg->dump_chunks : 0,
		     cfg->flags & PROFILE_CFG_KERNEL_STACK))
		return 0;
#endif
	bpf_perf_event_output(ctx, &snapshots, BPF_F_CURRENT_CPU, &buf.head, sizeof(buf.head));
	return 0;
}

#endif
