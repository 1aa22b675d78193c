/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layouts shared by the in-kernel Python walk (bpf/python.bpf.c) and its
 * loader (backend-bpf/). Fixed-size types only.
 *
 * User space tells the walk which processes are Python (py_procs: tgid ->
 * layout) and where each of their threads keeps its state (py_threads:
 * {tgid, tid} -> PyThreadState address and the thread id that state holds,
 * to check at the sample that the state is still that thread's). It needs
 * no TLS, BTF or libc knowledge, and finds threads that released the GIL.
 *
 * At a sample of a Python thread the counting program tail-calls the walk
 * of the process's layout, which reads PY_FRAMES_PER_PIECE frames a run
 * and tail-calls itself for more, hashing the frames as it goes; its last
 * run stores the frames in pieces keyed by (tgid, hash) unless they are
 * there, and counts the sample under a key that carries the hash
 * (profile_key.py_stack). So a Python stack crosses to user space once per
 * generation, as a native stack does through the stack maps. The pieces
 * are keyed by the sampled tgid: what one process's memory says labels
 * only that process's samples. Each frame carries its code object's
 * identity (py_frame.ident): user space names frames at the drain, when
 * the object may be gone.
 */
#ifndef BPF_PYTHON_MAPS_H
#define BPF_PYTHON_MAPS_H

#include <linux/types.h>

#include "bpf/python_layouts.h"

#define PY_FRAMES_PER_PIECE 16
#define PY_MAX_PIECES 8
#define PY_MAX_FRAMES (PY_FRAMES_PER_PIECE * PY_MAX_PIECES)

struct py_proc {
	__u32 layout;			/* enum py_layout_id */
	__u32 flags;
};

struct py_thread_key {
	__u32 tgid;
	__u32 tid;
};

struct py_thread {
	__u64 tstate;			/* its PyThreadState */
	/*
	 * What tstate's native_thread_id (3.11+) or thread_id (pthread_t,
	 * before) holds while it is this thread's: a state freed and reused by
	 * another thread fails the check.
	 */
	__u64 check;
};

/* One frame, as the walk read it; the names are read by user space. */
struct py_frame {
	/*
	 * The code object's address, with PY_FRAME_ENTRY or'ed in where the
	 * layout marks a C call's entry: is_entry (3.11: this frame was called
	 * from C), owner >= 3 (3.12+: this is the C stack's shim frame, not a
	 * Python function; its code is not one).
	 */
	__u64 code;
	/* f_lasti (an int, sign-extended) or the instruction pointer (3.11+). */
	__u64 lasti;
	/*
	 * What the code object was at the sample (PY_CODE_IDENT), 0 when it
	 * could not be read or the frame is a shim: user space names frames
	 * later (the drain), when the object may have been freed and its memory
	 * taken by another code object; it names a frame only from an object,
	 * or a cached name, with this identity.
	 */
	__u64 ident;
};

#define PY_FRAME_ENTRY 1ULL

/*
 * A code object's identity from fields that never change while it lives:
 * co_version where the version has one (3.12+: a counter, a new value for
 * every code object made, so a successor at the same address differs even
 * when all its strings took the places of its predecessor's), else its
 * first line, file, name, qualname and line table objects (their addresses:
 * they live as long as the code object, a successor has its own). Or'ed
 * with 1: never 0. The walk (bpf/python_walk.bpf.h) and user space
 * (interp/python) compute it the same way from the same fields.
 */
#define PY_IDENT_PRIME 0x100000001b3ULL
#define PY_IDENT_STEP(h, x) (((h) ^ (__u64)(x)) * PY_IDENT_PRIME)
#define PY_CODE_IDENT(firstline, version, file, name, qualname, table)                       \
	(PY_IDENT_STEP(PY_IDENT_STEP(PY_IDENT_STEP(PY_IDENT_STEP(                              \
		(__u64)(__u32)(firstline) | ((__u64)(__u32)(version) << 32), file), name),   \
		qualname), table) | 1)

struct py_piece_key {
	__u32 tgid;
	__u32 piece;			/* 0 .. PY_MAX_PIECES - 1 */
	__u64 hash;			/* profile_key.py_stack */
};

struct py_piece {
	__u32 nr_frames;		/* in the whole stack, leaf first */
	__u32 status;			/* PY_WALK_* */
	struct py_frame frames[PY_FRAMES_PER_PIECE];
};

/* py_piece.status */
#define PY_WALK_TRUNCATED 1		/* deeper than PY_MAX_FRAMES */
#define PY_WALK_FAULT 2			/* a frame could not be read: the stack ends there */

/*
 * profile_key.py_stack: 0 for a process that is not Python, a hash with
 * PY_STACK_HASH set for a walked stack, else why there is none.
 */
#define PY_STACK_NONE 0
#define PY_STACK_NO_THREAD 1		/* a Python process's thread not (yet) in py_threads */
#define PY_STACK_BAD_THREAD 2		/* its state failed the check (the thread ended, state reused) */
#define PY_STACK_IDLE 3			/* no Python frame: the thread runs no Python code now */
#define PY_STACK_UNREADABLE 4		/* the thread state or its first frame could not be read */
#define PY_STACK_HASH (1ULL << 63)

#endif
