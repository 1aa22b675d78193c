/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU side of the in-kernel Python walk: the off-CPU object's prog
 * array of walks (tracepoint programs, bpf/python_offcpu.bpf.c), the
 * stacks of threads switched out, and the hand-over at a switch-out. A
 * stack is stored when its thread switches out and named by the drain of
 * the interval that ends at its switch-in, whenever that is: the stacks
 * are not by generation; a full map loses new stacks (counted).
 */
#ifndef BPF_PYTHON_OFFCPU_BPF_H
#define BPF_PYTHON_OFFCPU_BPF_H

#include "bpf/python_common.bpf.h"

/* Slot 0: the end (the stack stored, its hash given to the thread's start); slot L: L's walk. */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, PY_NR_LAYOUTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} py_progs_off SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct py_piece_key);
	__type(value, struct py_piece);
} py_stacks_off SEC(".maps");

/*
 * Stacks stored since user space last looked ({tgid, 0, hash}), counted in
 * OFFCPU_STAT_PY_FRESH: it names their frames while their process lives.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct py_piece_key);
	__type(value, __u32);
} py_fresh SEC(".maps");

/*
 * Thread tid of tgid has just been stored switching out (its start entry
 * has py_stack 0): for a Python thread, walk its frames (a tail call:
 * nothing after it runs), else note why there are none.
 */
static __always_inline void py_hand_over_offcpu(void *ctx, struct offcpu_start *st, __u32 tgid,
						__u32 tid)
{
	struct py_walk *w;
	__u32 layout = 0;
	__u64 why;

	w = py_prepare(tgid, tid, &layout, &why, OFFCPU_STAT_PY_UNKNOWN);
	if (!w) {
		st->py_stack = why;
		return;
	}
	w->key.tgid = tgid;
	w->key.tid = tid;
	bpf_tail_call(ctx, &py_progs_off, layout);
	stat_inc(OFFCPU_STAT_PY_NO_PROG);
	st->py_stack = PY_STACK_UNREADABLE;
}

#endif
