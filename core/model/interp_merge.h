/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where an interpreter's frames stand among the native frames of one stack
 * (a mixed stack): each native call of the eval loop gives way to the
 * interpreted frames it ran, the interpreter's own frames between them
 * go, and what the program entered below a Python call (zlib_compress,
 * deflate) stays under it. Pure: frames are indexes and roles, decided by
 * the caller from their names and files.
 */
#ifndef CORE_MODEL_INTERP_MERGE_H
#define CORE_MODEL_INTERP_MERGE_H

#include <stdbool.h>
#include <stdint.h>

enum native_role {
	NATIVE_OTHER,		/* not the interpreter's: the program's, libc's, a C extension's */
	NATIVE_EVAL,		/* a call of the eval loop (_PyEval_EvalFrameDefault) */
	NATIVE_INTERP,		/* the interpreter's own machinery: goes between Python frames */
	NATIVE_INTERP_KEEP,	/* the interpreter's, but worth seeing (time.sleep's C code...) */
};

struct merge_input {
	const uint32_t *native;		/* native user frames, leaf first */
	const uint8_t *role;		/* enum native_role of each */
	unsigned int nr_native;
	const uint32_t *interp;		/* interpreted frames, leaf first */
	/*
	 * run_end[j]: frame j is the last (rootmost) of what one call of the
	 * eval loop ran: every frame before 3.11, the frame a C call entered
	 * (is_entry, or the one below a shim frame) from 3.11.
	 */
	const bool *run_end;
	unsigned int nr_interp;
	bool keep_native;		/* keep every native frame (--python raw) */
	/*
	 * A walk was cut before its root (native frames at the depth limit,
	 * interpreted ones truncated or unreadable): where the eval calls and
	 * the runs differ in number they line up from the leaf. Otherwise from
	 * the root: the interpreted frames are read after the native stack
	 * (the perf backend's reader thread, 50-100 us later), and what
	 * changes meanwhile is the leaf's end, returns and new calls.
	 */
	bool root_cut;
};

struct merge_stats {
	bool no_eval;		/* no eval loop among the native frames: interpreted frames put under the leaf */
	bool extra_eval;	/* more eval calls than runs of interpreted frames */
	bool extra_interp;	/* more runs of interpreted frames than eval calls */
};

/*
 * The merged stack, leaf first, into out (room for nr_native + nr_interp);
 * returns its length.
 *
 * Without an eval loop call among the native frames (a frame-pointer walk
 * that stopped inside an interpreter built without frame pointers), the
 * interpreted frames become the callers of the native leaf frames up to the
 * first of the interpreter's, and the native frames past it go: what the
 * walk gave there is not the program's calls.
 */
unsigned int interp_merge(const struct merge_input *in, uint32_t *out, struct merge_stats *st);

#endif
