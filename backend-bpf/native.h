/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks unwound in the kernel by the native tables (issue 45,
 * bpf/native.bpf.h): the program loaded on the counting program's maps,
 * and the maps that the store (backend-bpf/native_store.h) fills.
 */
#ifndef BACKEND_BPF_NATIVE_H
#define BACKEND_BPF_NATIVE_H

#include <stdint.h>

#include "bpf/native_maps.h"

/* The sizes the maps are loaded with (bpf/native_maps.h says what each holds). */
#define NATIVE_MAX_PROCS 1024		/* native_procs */
#define NATIVE_MAX_PAGES 65536		/* native_pages: 64 KiB and 4 KiB pages of processes */
#define NATIVE_MAX_INDEX 65536		/* native_index: 64 KiB pages of tables */
#define NATIVE_MAX_ROWS (1u << 21)	/* native_rows: 8 MiB (libc 15k rows, python 36k) */
#define NATIVE_MAX_RULES (1u << 16)	/* native_rules, host-wide */
#define NATIVE_MAX_UNKNOWN 256		/* native_unknown: emptied by user space */

/* The maps the store fills, and the one it polls for processes the program met. */
struct native_maps_fds {
	int procs;		/* native_procs: u32 tgid -> u32 */
	int pages;		/* native_pages */
	int index;		/* native_index */
	int rows;		/* native_rows */
	int rules;		/* native_rules */
	int unknown;		/* native_unknown: u32 tgid -> u32, noted once each */
	int stats;		/* the per-CPU stats; PROFILE_STAT_NATIVE_NOTED counts the notes */
};

struct native_stats {
	uint64_t walked, kernel_mode, compat, unknown, noted, full, no_prog;
	uint64_t no_cfi, read, unmapped, truncated;
};

struct backend;

/*
 * Tests, until the store lands: called with each process the program
 * noted (and with the maps' descriptors) to load its tables.
 */
extern void (*bpf_native__test_add)(const struct native_maps_fds *fds, int pid);

/* The maps of b's native program into *out: 0, or -ENOENT where it is not loaded. */
int bpf_native__fds(const struct backend *b, struct native_maps_fds *out);

#endif
