/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The in-kernel Python walk itself (bpf/python_maps.h says what it does),
 * for the objects that stamp it per layout: bpf/python.bpf.c (on-CPU,
 * perf_event programs) and bpf/python_offcpu.bpf.c (off-CPU, tracepoint
 * programs). The includer defines the maps of bpf/python_common.bpf.h.
 *
 * The frames are read without a branch per frame: a frame that is not
 * there (the end of the chain, a read that failed) is masked out
 * arithmetically, which keeps the verifier on one path (4.9 allows 4096
 * instructions a program and 65536 verifier steps; a branch per frame
 * doubles the paths at every frame).
 */
#ifndef BPF_PYTHON_WALK_BPF_H
#define BPF_PYTHON_WALK_BPF_H

#include "bpf/python_common.bpf.h"

#define FNV_PRIME 0x100000001b3ULL

/* 1 if x != 0, without a branch. */
#define NONZERO(x) ((((__u64)(x)) | (0 - (__u64)(x))) >> 63)
/* 1 if the helper's return value r (0 or -errno) is 0. */
#define SUCCEEDED(r) ((((__u64)(__s64)(r)) >> 63) ^ 1)

#define FIELD_U64(buf, off) (*(__u64 *)((char *)(buf) + (off)))
#define FIELD_S32(buf, off) ((__u64)(__s64)(*(__s32 *)((char *)(buf) + (off))))
#define FIELD_U8(buf, off) ((__u64)(*(__u8 *)((char *)(buf) + (off))))

/*
 * The first run of a walk: the thread's state gives the top frame, after
 * checking that the state is still the sampled thread's. Returns the frame,
 * or 0 with w->status/why set.
 */
#define MIN2(a, b) ((a) < (b) ? (a) : (b))
#define MAX2(a, b) ((a) > (b) ? (a) : (b))
#define CHECK_FIELD(P) (P##_TSTATE_NATIVE_TID >= 0 ? P##_TSTATE_NATIVE_TID : P##_TSTATE_THREAD_ID)
#define TS_LO(P) (MIN2(P##_TSTATE_FRAME, CHECK_FIELD(P)))
#define TS_HI(P) (MAX2(P##_TSTATE_FRAME, CHECK_FIELD(P)) + 8)

/*
 * The span of a code object that holds its identity's fields
 * (PY_CODE_IDENT), from a multiple of 8 (the verifier wants the pointers
 * read from the stack aligned): a field the layout lacks (-1) stands in for
 * by one it has, and reads as 0.
 */
#define PRESENT(off, other) ((off) >= 0 ? (off) : (other))
#define ID_LO(P)                                                                           \
	(MIN2(MIN2(P##_CODE_FIRSTLINENO, P##_CODE_FILENAME),                               \
	      MIN2(MIN2(P##_CODE_NAME, P##_CODE_LINETABLE),                                \
		   MIN2(PRESENT(P##_CODE_QUALNAME, P##_CODE_NAME),                         \
			PRESENT(P##_CODE_VERSION, P##_CODE_FIRSTLINENO)))) & ~7)
#define ID_HI(P)                                                                           \
	MAX2(MAX2(P##_CODE_FIRSTLINENO + 4, P##_CODE_FILENAME + 8),                        \
	     MAX2(MAX2(P##_CODE_NAME + 8, P##_CODE_LINETABLE + 8),                         \
		  MAX2(PRESENT(P##_CODE_QUALNAME, P##_CODE_NAME) + 8,                      \
		       PRESENT(P##_CODE_VERSION, P##_CODE_FIRSTLINENO) + 4)))
#define ID_OFF(P, F) (MAX2(P##_CODE_##F, ID_LO(P)) - ID_LO(P))
#define ID_U64(P, F) (P##_CODE_##F >= 0 ? FIELD_U64(cb, ID_OFF(P, F)) : 0)
#define ID_S32(P, F) (P##_CODE_##F >= 0 ? FIELD_S32(cb, ID_OFF(P, F)) : 0)

/*
 * The process's memory read: by the fast walks (bpf/python_fast.bpf.c,
 * Linux 5.5) with the helper for user memory, by the others with the one
 * 4.9 has. A harmless read of our own memory (where there is nothing to
 * read) fails with the first: its result is masked out either way.
 */
#define PY_READ(FAST, dst, len, src)                                                       \
	((FAST) ? bpf_probe_read_user(dst, len, src) : bpf_probe_read(dst, len, src))

/* Layouts whose frames live in the thread's data stack (3.11+). */
#define IN_BLOCKS(P) (P##_ENTRY_KIND != PY_ENTRY_NONE)

/*
 * Reads the span of memory from the start of the PY_BLOCK_SIZE-aligned
 * piece of the data stack that frame f (len bytes) is in to the frame's
 * end into w->block: the frame and its callers below it in that piece,
 * all mapped (the frame's page, and the frame), and nothing above it (in
 * the leaf's piece, stack not in use: a read costs by its size). Else the
 * frame alone; w->block_len 0: f could not be read.
 */
static __always_inline void refill_block(struct py_walk *w, __u32 len, __u64 f)
{
	__u64 base = f & ~(__u64)(PY_BLOCK_SIZE - 1);
	__u32 size = (__u32)((f - base) & (PY_BLOCK_SIZE - 1)) + len;

	if (!bpf_probe_read_user(w->block, size, (void *)base)) {
		w->block_base = base;
		w->block_len = size;
		return;
	}
	w->block_base = f;
	w->block_len = bpf_probe_read_user(w->block, len, (void *)f) ? 0 : len;
}

/*
 * Where frame f's len bytes are in w->block, read in if they are not
 * there; the offset is masked (in bounds for the verifier) and the frame
 * is there when *in (0 or 1). f 0: not there, nothing read.
 */
static __always_inline __u64 block_offset(struct py_walk *w, __u32 len, __u64 f, __u64 *in)
{
	__u64 off = f - w->block_base;

	if (f && (w->block_len < len || off > w->block_len - len))
		refill_block(w, len, f);
	off = f - w->block_base;
	*in = NONZERO(f) & NONZERO(w->block_len) & ((off >> PY_BLOCK_SHIFT) ^ 1);
	return off & (PY_BLOCK_SIZE - 1);
}

/*
 * One frame: read it, record it masked by whether it is there, mix it into
 * the hash, and step to its caller. f is 0 once the chain has ended or a
 * read failed (a failed read of a frame that should be there is a fault).
 * The frame's code object is read too, for its identity, unless it is the
 * frame before's (read in this walk, at this sample: the same object):
 * where there is none (no frame, a NULL code), the fast walk reads nothing,
 * the other our own piece instead, and the identity is 0. The identity
 * goes into the hash: a stack whose code objects were replaced by others
 * at the same addresses is another stack.
 */
#define WALK_FRAME(P, FAST, i)                                                             \
	do {                                                                               \
		__u64 f = w->frame, live, mask, code, lasti, entry, mixed, hash, cmask, ident; \
		/* The fast walk stops at the chain's end (the slots after it are not read). */ \
		if (FAST && !f)                                                            \
			goto walked;                                                       \
		void *fr; /* the frame's bytes: in the block or in fb */                   \
		long r;                                                                    \
		if (FAST && IN_BLOCKS(P)) {                                                \
			__u64 in, at = block_offset(w, P##_FRAME_READ, f, &in);            \
			fr = (void *)w->block + at;                                        \
			live = in;                                                         \
		} else {                                                                   \
			/* Past the end, a harmless read (our own state) instead of a fault at 0. */ \
			r = PY_READ(FAST, fb, P##_FRAME_READ,                              \
					   (void *)(f + (((__u64)w) & (NONZERO(f) - 1)))); \
			fr = fb;                                                           \
			live = NONZERO(f) & SUCCEEDED(r);                                  \
		}                                                                          \
		w->fault |= NONZERO(f) & (live ^ 1);                                       \
		mask = 0 - live;                                                           \
		code = FIELD_U64(fr, P##_FRAME_CODE) & ~(__u64)P##_CODE_TAG_BITS;          \
		if (P##_LASTI_KIND == PY_LASTI_BYTE_OFFSET ||                              \
		    P##_LASTI_KIND == PY_LASTI_INSN_INDEX)                                 \
			lasti = FIELD_S32(fr, P##_FRAME_LASTI);                            \
		else                                                                       \
			lasti = FIELD_U64(fr, P##_FRAME_LASTI);                            \
		entry = 0;                                                                 \
		if (P##_ENTRY_KIND == PY_ENTRY_IS_ENTRY)                                   \
			entry = NONZERO(FIELD_U8(fr, P##_FRAME_ENTRY));                    \
		else if (P##_ENTRY_KIND == PY_ENTRY_OWNER)                                 \
			entry = (2 - FIELD_U8(fr, P##_FRAME_ENTRY)) >> 63;                 \
		cmask = 0 - NONZERO(code & mask);                                          \
		if (FAST && (!cmask || code == w->last_code)) {                            \
			/*                                                                 \
			 * No frame here (past the chain's end: up to 15 a run), no read; \
			 * the caller's code object (recursion): one object, one identity. \
			 */                                                                \
			ident = w->last_ident & cmask;                                     \
		} else {                                                                   \
			/* A select, not a mask: the verifier refuses bitwise operations on pointers. */ \
			r = PY_READ(FAST, cb, ID_HI(P) - ID_LO(P),                         \
					   (void *)((cmask ? code : (__u64)piece) + ID_LO(P))); \
			ident = PY_CODE_IDENT(ID_S32(P, FIRSTLINENO), ID_S32(P, VERSION),  \
					      ID_U64(P, FILENAME), ID_U64(P, NAME),        \
					      ID_U64(P, QUALNAME), ID_U64(P, LINETABLE));  \
			ident &= cmask & (0 - SUCCEEDED(r));                               \
			w->last_code = code & cmask;                                       \
			w->last_ident = ident;                                             \
		}                                                                          \
		/* A shim's "code" is not a function's (3.13: None): no identity. */       \
		if (P##_ENTRY_KIND == PY_ENTRY_OWNER)                                      \
			ident &= entry - 1;                                                \
		code = (code | entry) & mask;                                              \
		lasti &= mask;                                                             \
		piece->frames[i].code = code;                                              \
		piece->frames[i].lasti = lasti;                                            \
		piece->frames[i].ident = ident;                                            \
		hash = w->hash;                                                            \
		mixed = (((((hash ^ code) * FNV_PRIME) ^ lasti) * FNV_PRIME) ^ ident) * FNV_PRIME; \
		w->hash = hash ^ ((mixed ^ hash) & mask);                                  \
		w->nr += live;                                                             \
		w->frame = FIELD_U64(fr, P##_FRAME_BACK) & mask;                           \
	} while (0)

/*
 * The body of layout P's walk, in a program of its own whose tail calls go
 * through PROGS (P's slot: itself; slot 0: the end); NO_END runs where the
 * end could not be called; the program returns RET.
 */
#define WALK_BODY(P, FAST, PROGS, NO_END, RET)                                             \
	{                                                                                  \
		__u64 fb[(P##_FRAME_READ + 7) / 8]; /* one frame at a time */              \
		_Static_assert(!FAST || !IN_BLOCKS(P) || P##_FRAME_READ <= PY_BLOCK_SLACK, \
			       "a frame read past the block's slack");                     \
		__u64 cb[(ID_HI(P) - ID_LO(P) + 7) / 8]; /* its code object's identity */  \
		struct py_piece *piece;                                                    \
		struct py_walk *w;                                                         \
		__u32 zero = 0, idx;                                                       \
                                                                                           \
		w = bpf_map_lookup_elem(&py_walk, &zero);                                  \
		if (!w)                                                                    \
			return RET;                                                        \
		if (w->piece == 0) {                                                       \
			char ts[TS_HI(P) - TS_LO(P)];                                      \
			__u64 top;                                                         \
                                                                                           \
			if (PY_READ(FAST, ts, sizeof(ts), (void *)(w->tstate + TS_LO(P))) || \
			    FIELD_U64(ts, CHECK_FIELD(P) - TS_LO(P)) != w->check) {        \
				w->why = PY_STACK_BAD_THREAD;                              \
				goto end;                                                  \
			}                                                                  \
			top = FIELD_U64(ts, P##_TSTATE_FRAME - TS_LO(P));                  \
			if (P##_CFRAME_CURRENT >= 0 && top &&                              \
			    PY_READ(FAST, &top, sizeof(top),                               \
					   (void *)(top + P##_CFRAME_CURRENT))) {          \
				w->why = PY_STACK_UNREADABLE;                              \
				goto end;                                                  \
			}                                                                  \
			if (!top) {                                                        \
				w->why = PY_STACK_IDLE;                                    \
				goto end;                                                  \
			}                                                                  \
			w->frame = top;                                                    \
		}                                                                          \
		idx = w->piece;                                                            \
		piece = bpf_map_lookup_elem(&py_frames, &idx);                             \
		if (!piece)                                                                \
			goto end;                                                          \
		w->fault = 0;                                                              \
		WALK_FRAME(P, FAST, 0);                                                    \
		WALK_FRAME(P, FAST, 1);                                                    \
		WALK_FRAME(P, FAST, 2);                                                    \
		WALK_FRAME(P, FAST, 3);                                                    \
		WALK_FRAME(P, FAST, 4);                                                    \
		WALK_FRAME(P, FAST, 5);                                                    \
		WALK_FRAME(P, FAST, 6);                                                    \
		WALK_FRAME(P, FAST, 7);                                                    \
		WALK_FRAME(P, FAST, 8);                                                    \
		WALK_FRAME(P, FAST, 9);                                                    \
		WALK_FRAME(P, FAST, 10);                                                   \
		WALK_FRAME(P, FAST, 11);                                                   \
		WALK_FRAME(P, FAST, 12);                                                   \
		WALK_FRAME(P, FAST, 13);                                                   \
		WALK_FRAME(P, FAST, 14);                                                   \
		WALK_FRAME(P, FAST, 15);                                                   \
	walked:                                                                            \
		w->piece = idx + 1;                                                        \
		if (w->fault)                                                              \
			w->status |= PY_WALK_FAULT;                                        \
		if (w->frame && !w->fault) {                                               \
			if (idx + 1 < PY_MAX_PIECES)                                       \
				bpf_tail_call(ctx, &PROGS, PY_LAYOUT_##P);                 \
			w->status |= PY_WALK_TRUNCATED;                                    \
		}                                                                          \
	end:                                                                               \
		bpf_tail_call(ctx, &PROGS, 0);                                             \
		NO_END;                                                                    \
		return RET;                                                                \
	}

/* Store piece p of the stack in stacks unless the stack has fewer pieces. */
#define STORE_PIECE(stacks, p)                                                             \
	do {                                                                               \
		__u32 pi = p;                                                              \
		struct py_piece *src;                                                      \
		if ((p) * PY_FRAMES_PER_PIECE < nr) {                                      \
			src = bpf_map_lookup_elem(&py_frames, &pi);                        \
			if (!src)                                                          \
				goto stored;                                               \
			__builtin_memcpy(&copy.frames, src->frames, sizeof(copy.frames));  \
			pk.piece = pi;                                                     \
			if (bpf_map_update_elem(stacks, &pk, &copy, BPF_NOEXIST) &&        \
			    !bpf_map_lookup_elem(stacks, &pk)) {                           \
				*full = 1;                                                 \
				goto stored;                                               \
			}                                                                  \
		}                                                                          \
	} while (0)

/*
 * The walk's outcome as a key's py_stack: why there are no frames, or the
 * stack's hash, its frames stored in stacks unless they are there (piece 0
 * is stored last: its presence says the stack is whole). *full when a piece
 * found no room (the stack is then unreadable), *fresh when this call
 * stored the stack whole.
 */
static __always_inline __u64 py_store(void *stacks, struct py_walk *w, __u32 tgid, int *full,
				      int *fresh)
{
	struct py_piece_key pk;
	struct py_piece copy;
	__u32 nr = w->nr;

	if (w->why)
		return w->why;
	if (!nr)
		return (w->status & PY_WALK_FAULT) ? PY_STACK_UNREADABLE : PY_STACK_IDLE;
	__builtin_memset(&pk, 0, sizeof(pk));
	pk.tgid = tgid;
	pk.hash = w->hash | PY_STACK_HASH;
	if (bpf_map_lookup_elem(stacks, &pk))
		return pk.hash;
	copy.nr_frames = nr;
	copy.status = w->status;
	STORE_PIECE(stacks, 7);
	STORE_PIECE(stacks, 6);
	STORE_PIECE(stacks, 5);
	STORE_PIECE(stacks, 4);
	STORE_PIECE(stacks, 3);
	STORE_PIECE(stacks, 2);
	STORE_PIECE(stacks, 1);
	STORE_PIECE(stacks, 0);
	*fresh = 1;
stored:
	return *full ? PY_STACK_UNREADABLE : pk.hash;
}

#endif
