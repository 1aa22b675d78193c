/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks unwound in the kernel by the native tables (issue 45,
 * bpf/native.bpf.h): the program loaded on the counting program's maps,
 * and the maps that the store (backend-bpf/native_store.h) fills: the
 * processes the program notes are handed to it as the run goes (its
 * native_unknown), -p's at the start.
 */
#ifndef BACKEND_BPF_NATIVE_H
#define BACKEND_BPF_NATIVE_H

#include <stdbool.h>
#include <stdint.h>

#include "backend-bpf/native_store.h"
#include "bpf/native_maps.h"

struct native_stats {
	uint64_t walked, kernel_mode, compat, unknown, noted, full, no_prog;
	uint64_t no_cfi, read, unmapped, truncated;
	uint64_t copied;	/* of processes not loaded, sent as stack copies (first_copies.c) */
	uint64_t unmapped_copied;	/* walks whose leaf was in code mapped since, sent so instead */
	uint64_t interp_copied;	/* samples of processes left to copies (Node's), sent so */
	uint64_t interp_fp;	/* ... walked by frame pointers instead: the lease was out */
};

/* Tests: the kernel refuses the program (the fallback to stack copies). */
extern bool bpf_native__test_refuse;
/* Tests: noted processes are read this long after the start (tables late, as under emulation). */
extern unsigned int bpf_native__test_late_ms;

struct backend;
/* The maps of b's native program into *out: 0, or -ENOENT where it is not loaded. */
int bpf_native__fds(const struct backend *b, struct native_maps_fds *out);

#endif
