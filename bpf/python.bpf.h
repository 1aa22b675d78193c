/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The maps of the in-kernel Python walk (bpf/python_maps.h says how it
 * works), and the counting program's hand-over to it. The counting object
 * defines them; the walk's objects (bpf/python.bpf.c) reuse its maps.
 */
#ifndef BPF_PYTHON_BPF_H
#define BPF_PYTHON_BPF_H

#include "bpf/common.bpf.h"
#include "bpf/python_maps.h"

/* Sizes are set by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct py_proc);
} py_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct py_thread_key);
	__type(value, struct py_thread);
} py_threads SEC(".maps");

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

/* One sample's walk in progress, carried across tail calls. */
struct py_walk {
	struct profile_key key;		/* the sample's, py_stack still 0 */
	__u64 tstate;
	__u64 check;
	__u64 frame;			/* the next frame to read; 0: none left */
	__u64 hash;
	__u32 gen;			/* the generation the key counts in */
	__u32 layout;
	__u32 piece;			/* pieces read so far */
	__u32 nr;			/* frames read so far */
	__u32 status;			/* PY_WALK_* */
	__u32 why;			/* PY_STACK_* when the walk ended before its first frame */
	__u64 fault;			/* this run: a frame could not be read */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct py_walk);
} py_walk SEC(".maps");

/* The frames read so far, a piece an element. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, PY_MAX_PIECES);
	__type(key, __u32);
	__type(value, struct py_piece);
} py_frames SEC(".maps");

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
	struct py_thread_key tk = { .tgid = key->tgid };
	struct py_thread *t;
	struct py_proc *proc;
	struct py_walk *w;
	__u32 zero = 0;
	__u64 id;

	proc = bpf_map_lookup_elem(&py_procs, &key->tgid);
	if (!proc)
		return;
	/* key->tid is 0 unless threads are kept apart: look the thread up by its own id. */
	id = bpf_get_current_pid_tgid();
	tk.tid = (__u32)id;
	t = bpf_map_lookup_elem(&py_threads, &tk);
	if (!t) {
		key->py_stack = PY_STACK_NO_THREAD;
		return;
	}
	w = bpf_map_lookup_elem(&py_walk, &zero);
	if (!w)
		return;
	__builtin_memcpy(&w->key, key, sizeof(*key));
	w->tstate = t->tstate;
	w->check = t->check;
	w->frame = 0;
	w->hash = 0;
	w->gen = gen;
	w->layout = proc->layout;
	w->piece = 0;
	w->nr = 0;
	w->status = 0;
	w->why = 0;
	bpf_tail_call(ctx, &py_progs, proc->layout);
	/* No walk loaded for that layout (yet). */
	stat_inc(PROFILE_STAT_PY_NO_PROG);
	key->py_stack = PY_STACK_UNREADABLE;
}

#endif
