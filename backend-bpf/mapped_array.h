/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ARRAY map's values written in place through a window of its memory
 * mapped for the write (BPF_F_MMAPABLE, Linux 5.5+), not copied in by a
 * syscall each: the native store's 40,000 rows of a new process's
 * libraries took 15-20 ms by syscalls (its first samples go by frame
 * pointers until they are in), 1 ms in place.
 *
 * Only the pages written are mapped, and only while written: the kernel
 * maps a window's pages all at once (remap_vmalloc_range), and the whole
 * 32 MiB of native_rows mapped for the run would count in the profiler's
 * RSS.
 */
#ifndef BPFBACKEND_MAPPED_ARRAY_H
#define BPFBACKEND_MAPPED_ARRAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct mapped_array {
	int fd;
	size_t stride;		/* the value's size rounded up to 8, as the kernel lays them out */
	size_t page;
	uint32_t max;		/* max_entries */
	bool ok;		/* fd is an ARRAY of such values made mappable, and mapped once */
};

/* m set up for fd, an ARRAY of max values of size bytes; m->ok false where it cannot be mapped. */
void mapped_array__init(struct mapped_array *m, int fd, size_t size, uint32_t max);
/*
 * n values of size bytes at keys (NULL: first, first + 1, ...), written
 * through windows of at most 256 KiB (mapped_array.c), each mapped where
 * the next key is not in the last. 0, -E2BIG for a key past max (nothing
 * written), or -errno of an mmap (the values before it written).
 */
int mapped_array__write(const struct mapped_array *m, const uint32_t *keys, uint32_t first,
			const void *values, size_t size, uint32_t n);

#endif
