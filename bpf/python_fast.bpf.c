// SPDX-License-Identifier: GPL-2.0
/*
 * The fast in-kernel Python walk, on-CPU, for Linux 5.5 (bpf_probe_read_user;
 * a map value as a helper's buffer): 3.11+'s data stack read in blocks, a
 * code object read once for its recursive calls (bpf/python_walk.bpf.h).
 * Two branches a frame whose paths meet at once, which the verifier prunes.
 * The loader tries it first; bpf/python.bpf.c where the kernel refuses it.
 *
 * bpf-compat: linux-5.5
 */
#define PY_WALK_FAST 1
#include "bpf/python_oncpu_progs.bpf.h"

char LICENSE[] SEC("license") = "GPL";
