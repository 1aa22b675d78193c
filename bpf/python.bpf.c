// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel Python walk (bpf/python_maps.h says what it does), on-CPU,
 * for Linux 4.9: no loops (the frames of a run are unrolled, and a walk
 * goes on by tail-calling itself), helper buffers on the BPF stack, helpers
 * from 4.9. The frames are read without a branch per frame: a frame that is
 * not there (the end of the chain, a read that failed) is masked out
 * arithmetically, which keeps the verifier on one path (4.9 allows 4096
 * instructions a program and 65536 verifier steps; a branch per frame
 * doubles the paths at every frame). The loader opens this object once per
 * layout it needs, loading that layout's walk and the end, on the counting
 * program's maps, where the kernel refuses bpf/python_fast.bpf.c's.
 *
 * bpf-compat: linux-4.9
 */
#define PY_WALK_FAST 0
#include "bpf/python_oncpu_progs.bpf.h"

char LICENSE[] SEC("license") = "GPL";
