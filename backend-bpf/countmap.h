/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Draining an in-kernel count map (HASH, key -> __u64) into the pipeline,
 * and reading per-CPU statistics. Batch lookup-and-delete where the kernel
 * has it (5.6), a key-by-key walk before (4.9: from a key no program can
 * write, since get_next_key(NULL) needs 4.12).
 */
#ifndef BPFBACKEND_COUNTMAP_H
#define BPFBACKEND_COUNTMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One entry, handed over during the drain. Returns 0 or -errno (stops the drain). */
typedef int (*countmap_entry_fn)(void *ctx, const void *key, uint64_t value);

struct countmap {
	int fd;
	size_t key_size;
	bool *no_batch;		/* shared by the maps of one kernel: learnt once */
};

/* Hand every entry to fn and empty the map. Returns 0 or -errno. */
int countmap__drain(const struct countmap *cm, countmap_entry_fn fn, void *ctx);

/* The sum over CPUs of slot of a PERCPU_ARRAY of __u64; 0 if it cannot be read. */
uint64_t percpu_stat(int fd, uint32_t slot, int nr_cpus);
/* Each CPU's value of slot into vals[nr_cpus]. Returns 0 or -errno. */
int percpu_values(int fd, uint32_t slot, int nr_cpus, uint64_t *vals);

#endif
