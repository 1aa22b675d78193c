// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void ring__init(struct perf_ring *ring, struct perf_event_mmap_page *meta, void *data,
		uint64_t size)
{
	memset(ring, 0, sizeof(*ring));
	ring->meta = meta;
	ring->data = data;
	ring->size = size;
}

int ring__mmap(struct perf_ring *ring, int fd, unsigned int data_pages)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t len = (1 + (size_t)data_pages) * page;
	struct perf_event_mmap_page *meta;
	void *base;

	/* PROT_WRITE: the kernel then honours data_tail and never overwrites unread data. */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED)
		return -errno;
	meta = base;
	/* data_offset/data_size exist since 4.1; before that data follows the first page. */
	if (meta->data_offset && meta->data_size)
		ring__init(ring, meta, (unsigned char *)base + meta->data_offset, meta->data_size);
	else
		ring__init(ring, meta, (unsigned char *)base + page, (uint64_t)data_pages * page);
	ring->mmap_base = base;
	ring->mmap_len = len;
	return 0;
}

void ring__fini(struct perf_ring *ring)
{
	if (ring->mmap_base)
		munmap(ring->mmap_base, ring->mmap_len);
	free(ring->scratch);
	memset(ring, 0, sizeof(*ring));
}

static const struct perf_event_header *record_at(struct perf_ring *ring, uint64_t pos,
						 uint64_t avail, int *err)
{
	uint64_t off = pos & (ring->size - 1);
	struct perf_event_header hdr;
	uint64_t first;

	/*
	 * The kernel keeps records 8-byte aligned, so an 8-byte header never
	 * wraps; a size that is not a multiple of 8 would put the next header
	 * across the end of the ring, so it is corrupt.
	 */
	if (pos % 8 || avail < sizeof(hdr)) {
		*err = -EBADMSG;
		return NULL;
	}
	memcpy(&hdr, ring->data + off, sizeof(hdr));
	if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail || hdr.size > ring->size) {
		*err = -EBADMSG;
		return NULL;
	}
	if (off + hdr.size <= ring->size)
		return (const struct perf_event_header *)(ring->data + off);

	if (hdr.size > ring->scratch_cap) {
		unsigned char *tmp = realloc(ring->scratch, hdr.size);

		if (!tmp) {
			*err = -ENOMEM;
			return NULL;
		}
		ring->scratch = tmp;
		ring->scratch_cap = hdr.size;
	}
	first = ring->size - off;
	memcpy(ring->scratch, ring->data + off, first);
	memcpy(ring->scratch + first, ring->data, hdr.size - first);
	return (const struct perf_event_header *)ring->scratch;
}

int ring__consume(struct perf_ring *ring, ring_record_fn fn, void *ctx)
{
	uint64_t head = __atomic_load_n(&ring->meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = ring->meta->data_tail;
	int cnt = 0, err = 0;

	while (tail < head) {
		const struct perf_event_header *hdr = record_at(ring, tail, head - tail, &err);

		if (!hdr) {
			if (err == -EBADMSG) {
				/* Cannot find the next boundary: drop what is there. */
				ring->corrupt++;
				tail = head;
				err = 0;
			}
			break;
		}
		err = fn(hdr, ctx);
		if (err == RING_KEEP) {
			err = 0;	/* left in the ring, for a later call */
			break;
		}
		tail += hdr->size;
		if (err)
			break;
		cnt++;
	}
	__atomic_store_n(&ring->meta->data_tail, tail, __ATOMIC_RELEASE);
	return err ? err : cnt;
}
