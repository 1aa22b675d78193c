/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The on-CPU walk's programs (bpf/python_maps.h says what the walk does):
 * one program per CPython layout, with that layout's offsets as constants,
 * and the program that ends every walk. Stamped by bpf/python.bpf.c (the
 * walk for Linux 4.9) and bpf/python_fast.bpf.c (5.5), PY_WALK_FAST set.
 */
#ifndef BPF_PYTHON_ONCPU_PROGS_BPF_H
#define BPF_PYTHON_ONCPU_PROGS_BPF_H

#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf/counting.bpf.h"
#include "bpf/python.bpf.h"
#include "bpf/python_walk.bpf.h"

#define WALK_PROGRAM(P)                                                                    \
	SEC("perf_event")                                                                  \
	int py_walk_##P(struct bpf_perf_event_data *ctx)                                   \
	WALK_BODY(P, PY_WALK_FAST, py_progs,                                               \
		  { stat_inc(PROFILE_STAT_PY_NO_PROG); stat_inc(PROFILE_STAT_RUNS_DONE); }, 0)

PY_LAYOUTS(WALK_PROGRAM)

/* Counts the sample with the walk's outcome in its key. */
static __always_inline void store_and_count(void *stacks, void *counts, struct py_walk *w)
{
	struct profile_key key;
	int full = 0, fresh = 0;

	__builtin_memcpy(&key, &w->key, sizeof(key));
	key.py_stack = py_store(stacks, w, key.tgid, &full, &fresh);
	if (full)
		stat_inc(PROFILE_STAT_PY_FULL);
	stat_inc(PROFILE_STAT_PY_WALKED);
	count(counts, &key);
}

SEC("perf_event")
int py_end(struct bpf_perf_event_data *ctx)
{
	struct py_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&py_walk, &zero);
	if (w) {
		if (w->gen)
			store_and_count(&py_stacks1, &counts1, w);
		else
			store_and_count(&py_stacks0, &counts0, w);
	}
	stat_inc(PROFILE_STAT_RUNS_DONE);
	return 0;
}

#endif
