// SPDX-License-Identifier: GPL-2.0
/*
 * The in-kernel Python walk of off-CPU time (bpf/python_offcpu_progs.bpf.h)
 * for Linux 4.9, as bpf/python.bpf.c is on-CPU. Loaded per layout on the
 * off-CPU program's maps, where the kernel refuses
 * bpf/python_offcpu_fast.bpf.c's.
 *
 * bpf-compat: linux-4.9
 */
#define PY_WALK_FAST 0
#include "bpf/python_offcpu_progs.bpf.h"

char LICENSE[] SEC("license") = "GPL";
