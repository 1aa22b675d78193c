/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU side of the in-kernel Python walk: the counting object's prog
 * array of walks, the generations' stacks, and the counting program's
 * hand-over. The walks' objects (bpf/python.bpf.c) reuse these maps.
 */
#ifndef BPF_PYTHON_BPF_H
#define BPF_PYTHON_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/python_common.bpf.h"

/*
 * Slot 0: the program that stores the frames and counts the sample; slot
 * PY_LAYOUT_X: the walk of layout X, loaded when a process of that layout
 * is first seen.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, PY_NR_LAYOUTS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} py_progs SEC(".maps");

/* The stacks, by generation as the count maps: emptied after their drain. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct py_piece_key);
	__type(value, struct py_piece);
} py_stacks0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct py_piece_key);
	__type(value, struct py_piece);
} py_stacks1 SEC(".maps");

/*
 * Called by the counting program with the sample's key once its native
 * stacks are taken. For a thread of a Python process it hands the sample to
 * the walk (a tail call: nothing after it runs, the walk counts the sample
 * itself); otherwise it notes in the key why there are no Python frames and
 * returns for the caller to count.
 */
static __always_inline void py_hand_over(struct bpf_perf_event_data *ctx,
					 struct profile_key *key, __u32 gen)
{
	struct py_walk *w;
	__u32 layout = 0;
	__u64 why;

	/* key->tid is 0 unless threads are kept apart: the thread by its own id. */
	w = py_prepare(key->tgid, (__u32)bpf_get_current_pid_tgid(), &layout, &why,
		       PROFILE_STAT_PY_UNKNOWN);
	if (!w) {
		key->py_stack = why;
		return;
	}
	__builtin_memcpy(&w->key, key, sizeof(*key));
	w->gen = gen;
	bpf_tail_call(ctx, &py_progs, layout);
	/* No walk loaded for that layout (yet). */
	stat_inc(PROFILE_STAT_PY_NO_PROG);
	key->py_stack = PY_STACK_UNREADABLE;
}

#endif
