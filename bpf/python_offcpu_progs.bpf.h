/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU walk's programs (bpf/python_offcpu.bpf.h): the same walk as
 * on-CPU, as tracepoint programs tail-called by the off-CPU program at a
 * switch-out, and their end, which stores the stack and gives its hash to
 * the thread's start entry. Tracepoint programs return 1: a 0 would keep
 * sched_switch's perf events (another tool's) from recording the event.
 * Stamped by bpf/python_offcpu.bpf.c (Linux 4.9) and
 * bpf/python_offcpu_fast.bpf.c (5.5), PY_WALK_FAST set.
 */
#ifndef BPF_PYTHON_OFFCPU_PROGS_BPF_H
#define BPF_PYTHON_OFFCPU_PROGS_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#include "bpf/offcpu.bpf.h"
#include "bpf/python_offcpu.bpf.h"
#include "bpf/python_walk.bpf.h"

#define WALK_PROGRAM(P)                                                                    \
	SEC("tracepoint/sched/sched_switch")                                               \
	int py_offwalk_##P(void *ctx)                                                      \
	WALK_BODY(P, PY_WALK_FAST, py_progs_off, stat_inc(OFFCPU_STAT_PY_NO_PROG),         \
		  LET_OTHERS_RECORD)

PY_LAYOUTS(WALK_PROGRAM)

SEC("tracepoint/sched/sched_switch")
int py_offend(void *ctx)
{
	struct offcpu_start *st;
	struct py_walk *w;
	struct py_piece_key fk;
	__u32 zero = 0, tid, one = 1;
	__u64 stack;
	int full = 0, fresh = 0;

	w = bpf_map_lookup_elem(&py_walk, &zero);
	if (!w)
		return LET_OTHERS_RECORD;
	tid = w->key.tid;
	stack = py_store(&py_stacks_off, w, w->key.tgid, &full, &fresh);
	if (full)
		stat_inc(OFFCPU_STAT_PY_FULL);
	/*
	 * A new stack: user space names its frames soon, while the process
	 * lives. Its interval may end only at the process's end (a thread
	 * that waits in a join the whole run), and be drained after it.
	 */
	if (fresh) {
		__builtin_memset(&fk, 0, sizeof(fk));
		fk.tgid = w->key.tgid;
		fk.hash = stack;
		if (!bpf_map_update_elem(&py_fresh, &fk, &one, BPF_NOEXIST))
			stat_inc(OFFCPU_STAT_PY_FRESH);
	}
	/* Still the thread's: it is switching out on this CPU, its switch-in comes after. */
	st = bpf_map_lookup_elem(&start, &tid);
	if (st)
		st->py_stack = stack;
	return LET_OTHERS_RECORD;
}

#endif
