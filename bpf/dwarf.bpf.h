/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind dwarf: instead of counting, each sample goes to user space with
 * the user registers and a copy of the user stack, to be unwound there with
 * .eh_frame. Kernel stacks are still taken here, by id, like the counting
 * program's; the 5.15 variant sends them in the record instead.
 *
 * A sample taken in user mode has the user registers in its context. One
 * taken in kernel mode (a system call, a page fault) has the kernel's; the
 * user registers are then at the top of the task's kernel stack, which
 * bpf_task_pt_regs() (Linux 5.15, with kernel BTF) finds: that variant is
 * bpf/dwarf_task_regs.bpf.c. The others, from 4.9, read them at the top of
 * the 16 KiB-aligned stack the interrupted rsp is on (ustack_top_regs), and
 * fall back to the frame-pointer user stack, counted, where they are not
 * there (a sample that interrupted an interrupt, on its own stack).
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
#include "bpf/python.bpf.h"
#include "bpf/ustack.bpf.h"

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

/*
 * The Python frames of a sample are walked in the sample's own program run,
 * as the counting program has them (bpf/python.bpf.h): read later, from
 * user space, they were another moment's (the stack of the next function,
 * or of the process that took the pid). With PROFILE_CFG_PYTHON the events
 * run dwarf_py_start, which tail-calls the walk of the process's layout;
 * the walk ends in dwarf_py_end (py_progs' slot 0 in this mode), which
 * sends the frames (DWARF_REC_PY); either then tail-calls the stack-copy
 * program (dwarf_progs' slot 0), resumed: it sends the copy and the head,
 * whose py says what came before it. The copy is taken in the same run (the
 * same registers, the same stack). Programs of their own, not a part of the
 * copy program: 4.9's keeps 504 of its 512 bytes of BPF stack.
 */
struct dwarf_py_state {
	__u32 resume;			/* the next run of the copy program is a resumed one */
	__u32 py;			/* dwarf_head.py for it */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct dwarf_py_state);
} dwarf_py SEC(".maps");

/* Slot 0: the object's stack-copy program, set by user space after the load. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, 1);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} dwarf_progs SEC(".maps");

/* The stack-copy program, resumed with py for its head. */
static __always_inline void resume_copy(struct bpf_perf_event_data *ctx,
					struct dwarf_py_state *st, __u32 py)
{
	st->py = py;
	st->resume = 1;
	bpf_tail_call(ctx, &dwarf_progs, 0);
	/* Not resumed (no program in the slot): the sample is lost, and no run is to resume. */
	st->resume = 0;
	stat_inc(PROFILE_STAT_PY_NO_PROG);
}

/* Kernels with bpf_task_pt_regs (5.15) also have bpf_get_ns_current_pid_tgid (5.7). */
#ifdef DWARF_ONE_PIECE
#define DWARF_PIDNS_MODE PIDNS_BY_CONFIG
#else
#define DWARF_PIDNS_MODE PIDNS_NEVER
#endif

/* A sample, with PROFILE_CFG_PYTHON: a Python thread's goes to the walk first. */
SEC("perf_event")
int dwarf_py_start(struct bpf_perf_event_data *ctx)
{
	struct dwarf_py_state *st;
	struct profile_config *cfg;
	__u32 tgid, tid, layout = 0, zero = 0;
	struct py_walk *w;
	__u64 why = 0;

	stat_inc(PROFILE_STAT_SAMPLES);
	st = bpf_map_lookup_elem(&dwarf_py, &zero);
	cfg = wanted(DWARF_PIDNS_MODE, &tgid, &tid);
	if (!st || !cfg)
		return 0;
	if ((cfg->flags & PROFILE_CFG_PYTHON) && (cfg->flags & PROFILE_CFG_USER_STACK)) {
		w = py_prepare(tgid, tid, &layout, &why, PROFILE_STAT_PY_UNKNOWN);
		if (w) {
			/* Nothing after it runs: the walk's end resumes the copy. */
			bpf_tail_call(ctx, &py_progs, layout);
			/* No walk loaded for that layout (yet). */
			stat_inc(PROFILE_STAT_PY_NO_PROG);
			why = PY_STACK_UNREADABLE;
		}
	}
	resume_copy(ctx, st, (__u32)why);
	return 0;
}

/*
 * Sends frames p * PY_FRAMES_PER_PIECE on of the walk (if it read that
 * many) from the BPF stack, where 4.9's helper takes them from; ok cleared
 * when a piece was not there.
 */
#define SEND_PY_PIECE(ctx, rec, nr, p, ok)                                                     \
	do {                                                                                   \
		__u32 __i = p;                                                                 \
		struct py_piece *__src;                                                        \
		if ((p) * PY_FRAMES_PER_PIECE < (nr)) {                                        \
			__src = bpf_map_lookup_elem(&py_frames, &__i);                         \
			if (!__src) {                                                          \
				ok = 0;                                                        \
				break;                                                         \
			}                                                                      \
			(rec)->first = (p) * PY_FRAMES_PER_PIECE;                              \
			bpf_probe_read((rec)->frames, sizeof((rec)->frames), __src->frames);   \
			bpf_perf_event_output((ctx), &snapshots, BPF_F_CURRENT_CPU, (rec),     \
					      sizeof(*(rec)));                                 \
		}                                                                              \
	} while (0)

/* The end of every walk in this mode: its frames sent, the copy program resumed. */
SEC("perf_event")
int dwarf_py_end(struct bpf_perf_event_data *ctx)
{
	struct dwarf_py_state *st;
	struct dwarf_py rec;
	struct py_walk *w;
	__u32 zero = 0, nr, py;
	int ok = 1;

	w = bpf_map_lookup_elem(&py_walk, &zero);
	st = bpf_map_lookup_elem(&dwarf_py, &zero);
	if (!w || !st)
		return 0;
	nr = w->nr;
	if (w->why)
		py = w->why;
	else if (!nr)
		py = (w->status & PY_WALK_FAULT) ? PY_STACK_UNREADABLE : PY_STACK_IDLE;
	else
		py = DWARF_PY_SENT | w->status;
	if (py & DWARF_PY_SENT) {
		__builtin_memset(&rec, 0, sizeof(rec));
		rec.kind = DWARF_REC_PY;
		rec.tid = (__u32)bpf_get_current_pid_tgid();
		rec.nr = nr;
		SEND_PY_PIECE(ctx, &rec, nr, 0, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 1, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 2, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 3, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 4, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 5, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 6, ok);
		SEND_PY_PIECE(ctx, &rec, nr, 7, ok);
		if (!ok)
			py = PY_STACK_UNREADABLE;
	}
	stat_inc(PROFILE_STAT_PY_WALKED);
	resume_copy(ctx, st, py);
	return 0;
}

/*
 * A sample's head and copy sent. Handed: tail-called by the native
 * unwinder's counting program (bpf/native.bpf.h) for a process its tables
 * do not have yet, which counted the sample's start and counts its end
 * (dwarf_handed_end); no Python walk then (its frames are read from user
 * space at the drain).
 */
static __always_inline int snapshot(struct bpf_perf_event_data *ctx, int use_task_regs,
				    int handed)
{
	struct dwarf_stack_buf buf;
	struct profile_config *cfg;
	struct dwarf_py_state *st;
	__u32 tgid, tid;

	/* 4.9 sends initialized BPF stack only: no stray padding. */
	__builtin_memset(&buf.head, 0, sizeof(buf.head));
	/*
	 * Resumed after dwarf_py_start (and the walk), which counted the
	 * sample. The key is the head's zeroed tgid, the value goes straight
	 * into the head: 4.9's program has 8 bytes of BPF stack left.
	 */
	st = handed ? NULL : bpf_map_lookup_elem(&dwarf_py, &buf.head.tgid);
	if (st && st->resume) {
		st->resume = 0;
		buf.head.py = st->py;
	} else if (!handed) {
		stat_inc(PROFILE_STAT_SAMPLES);
	}
	cfg = wanted(DWARF_PIDNS_MODE, &tgid, &tid);
	if (!cfg)
		return 0;
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
		buf.head.kernel_stack_id = take_copy_stack(ctx, cfg->active_counts, 0,
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
		} else {
			/*
			 * Read into the piece's room, which the copy overwrites
			 * after, and taken from there: 4.9's program has no
			 * BPF stack left for more.
			 */
			__u64 *r = (__u64 *)&buf.regs;

			if (ustack_kernel_mode_regs(sp, r)) {
				ip = r[USTACK_TOP_IP];
				sp = r[USTACK_TOP_SP];
				bp = r[USTACK_TOP_BP];
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
			buf.head.user_stack_id = take_copy_stack(ctx, cfg->active_counts,
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

/* The end of a handed sample's run, as the counting program's own runs end (count_sample). */
static __always_inline int dwarf_handed_end(void)
{
	stat_inc(PROFILE_STAT_NATIVE_COPIED);
	stat_inc(PROFILE_STAT_RUNS_DONE);
	return 0;
}

#endif
