/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Reader of one perf_event mmap ring: records between data_tail and
 * data_head, a record that wraps past the end copied whole into scratch.
 */
#ifndef PERFRING_RING_H
#define PERFRING_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct perf_ring {
	struct perf_event_mmap_page *meta;
	unsigned char *data;
	uint64_t size;			/* a power of two */
	void *mmap_base;		/* NULL when not mmap'ed by ring__mmap */
	size_t mmap_len;
	unsigned char *scratch;		/* for records that wrap */
	size_t scratch_cap;
	uint64_t corrupt;		/* records with an impossible size */
};

/* Map the ring of an event fd with 2^n data pages. Returns 0 or -errno. */
int ring__mmap(struct perf_ring *ring, int fd, unsigned int data_pages);
/* Use an existing metadata page and data area (tests, and ring__mmap). */
void ring__init(struct perf_ring *ring, struct perf_event_mmap_page *meta, void *data,
		uint64_t size);
void ring__fini(struct perf_ring *ring);

/* Returns 0, RING_KEEP (stop, this record stays in the ring) or -errno (stop). */
typedef int (*ring_record_fn)(const struct perf_event_header *hdr, void *ctx);
#define RING_KEEP 1

/*
 * Hand every complete record to fn, then release them to the kernel, up to
 * the one fn keeps. The record is valid only during the call. Returns the
 * number of records released or -errno (from fn, or -ENOMEM).
 */
int ring__consume(struct perf_ring *ring, ring_record_fn fn, void *ctx);

#endif
