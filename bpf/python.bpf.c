// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel Python walk (bpf/python_maps.h says what it does): one
 * program per CPython layout, with that layout's offsets as constants, and
 * the program that ends every walk. The loader opens this object once per
 * layout it needs, loading that layout's walk and the end, on the counting
 * program's maps; so a host with one Python version verifies one walk.
 *
 * Written for Linux 4.9: no loops (the frames of a run are unrolled, and a
 * walk goes on by tail-calling itself), helper buffers on the BPF stack,
 * helpers from 4.9. The frames are read without a branch per frame: a
 * frame that is not there (the end of the chain, a read that failed) is
 * masked out arithmetically, which keeps the verifier on one path (4.9
 * allows 4096 instructions a program and 65536 verifier steps; a branch per
 * frame doubles the paths at every frame).
 *
 * bpf-compat: linux-4.9
 */
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
	WALK_BODY(P, py_progs,                                                             \
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

char LICENSE[] SEC("license") = "GPL";
