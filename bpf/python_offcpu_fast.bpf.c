// SPDX-License-Identifier: GPL-2.0
/*
 * The fast in-kernel Python walk of off-CPU time, for Linux 5.5, as
 * bpf/python_fast.bpf.c is on-CPU.
 *
 * bpf-compat: linux-5.5
 */
#define PY_WALK_FAST 1
#include "bpf/python_offcpu_progs.bpf.h"

char LICENSE[] SEC("license") = "GPL";
