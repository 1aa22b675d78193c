/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every object of the in-kernel Python walk has (bpf/python_maps.h
 * says how it works): the tables of Python processes and threads that user
 * space keeps, and the walk's per-CPU state carried across tail calls.
 */
#ifndef BPF_PYTHON_COMMON_BPF_H
#define BPF_PYTHON_COMMON_BPF_H

#include "bpf/profile_maps.h"
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
 * Threads of Python processes that py_threads did not know when they were
 * sampled or switched out, noted once each (the inserting program counts a
 * stat slot): user space polls that count every few milliseconds and reads
 * the threads of their processes again at once, rather than at the next
 * drain (a thread that lives half a second was unknown for most of its
 * life). User space empties it every second; a thread that is not
 * Python's (a C library's pool) is noted once in that time.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct py_thread_key);
	__type(value, __u32);
} py_unknown SEC(".maps");

/* The span of a data stack one read brings in (bpf/python_walk.bpf.h). */
#define PY_BLOCK_SHIFT 12
#define PY_BLOCK_SIZE (1u << PY_BLOCK_SHIFT)
/* The largest frame read (bpf/python_layouts.h): a masked offset plus a field stays in the block. */
#define PY_BLOCK_SLACK 128

/* One sample's walk in progress, carried across tail calls. */
struct py_walk {
	struct profile_key key;		/* the sample's (on-CPU), py_stack still 0; tgid, tid */
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
	/*
	 * 3.11+: frames live one after another in the thread's data stack, a
	 * frame's callers below it. One read of the piece of that stack the
	 * frame is in (PY_BLOCK_SIZE aligned) serves the callers in it too,
	 * which the walk then reads from here, kernel memory, rather than
	 * each from the process (a user read costs ~110 ns here, most of a
	 * frame's cost). block_base 0: nothing read yet this walk.
	 */
	__u64 last_code, last_ident;	/* the latest code object whose identity was read */
	__u64 block_base;
	__u64 block_len;		/* bytes of block read from block_base */
	__u8 block[PY_BLOCK_SIZE + PY_BLOCK_SLACK];
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

/*
 * The walk state for thread tid of tgid, ready to walk (*layout its
 * program's slot), or NULL with *why set (PY_STACK_*, or 0 when tgid is
 * not a Python process at all). A thread not in py_threads is noted in
 * py_unknown, and unknown_slot counted when it was not there yet.
 */
static __always_inline struct py_walk *py_prepare(__u32 tgid, __u32 tid, __u32 *layout,
						  __u64 *why, __u32 unknown_slot)
{
	__u32 one = 1;
	struct py_thread_key tk = { .tgid = tgid, .tid = tid };
	struct py_thread *t;
	struct py_proc *proc;
	struct py_walk *w;
	__u32 zero = 0;

	*why = 0;
	proc = bpf_map_lookup_elem(&py_procs, &tgid);
	if (!proc)
		return NULL;
	t = bpf_map_lookup_elem(&py_threads, &tk);
	if (!t) {
		*why = PY_STACK_NO_THREAD;
		if (!bpf_map_update_elem(&py_unknown, &tk, &one, BPF_NOEXIST))
			stat_inc(unknown_slot);
		return NULL;
	}
	w = bpf_map_lookup_elem(&py_walk, &zero);
	if (!w)
		return NULL;
	w->tstate = t->tstate;
	w->check = t->check;
	w->frame = 0;
	w->hash = 0;
	w->layout = proc->layout;
	w->piece = 0;
	w->nr = 0;
	w->status = 0;
	w->why = 0;
	w->block_base = 0;
	w->block_len = 0;
	w->last_code = 0;
	*layout = proc->layout;
	return w;
}

#endif
