/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pure parts of the native store (no maps, no /proc), tested alone:
 * the allocator of row ranges in native_rows, the host-wide interning of
 * rules, and the cutting of a process's mappings into native_pages keys.
 */
#ifndef BPFBACKEND_NATIVE_PARTS_H
#define BPFBACKEND_NATIVE_PARTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/native_maps.h"
#include "core/lib/hashmap.h"

/*
 * First-fit ranges over [0, capacity): the free ranges sorted by start,
 * neighbours merged when freed.
 */
struct native_extent {
	uint32_t first, nr;
};

struct native_ranges {
	struct native_extent *free;
	size_t nr_free, cap;
	uint32_t capacity;
	uint64_t used;
};

int native_ranges__init(struct native_ranges *r, uint32_t capacity);
void native_ranges__fini(struct native_ranges *r);
/* n > 0 slots in a row: 0 with *first, or -ENOSPC (no free range that long). */
int native_ranges__alloc(struct native_ranges *r, uint32_t n, uint32_t *first);
/* Give back [first, first + n): 0, -EINVAL if any of it is free already or outside, -ENOMEM. */
int native_ranges__free(struct native_ranges *r, uint32_t first, uint32_t n);
uint32_t native_ranges__largest(const struct native_ranges *r);

/*
 * Rules by their 12 bytes -> host-wide ids in [1, max), refcounted; id 0 is
 * NONE (the all-zero rule), never counted. An id freed is reused.
 */
struct native_rule_ent;

struct native_rules {
	struct hashmap by_rule;
	struct native_rule_ent **by_id;		/* cap, grown as ids are first given */
	uint32_t *free_ids;			/* a stack, as large as by_id */
	uint32_t nr_free, next, max, used;	/* used: ids held, 0 included */
	uint32_t cap;
};

int native_rules__init(struct native_rules *ri, uint32_t max);
void native_rules__fini(struct native_rules *ri);
/*
 * The id of the 12 bytes at rule, one reference more: 0 with *id (and
 * *fresh when the id is new or reused: its slot must be written), -ENOSPC
 * when max ids are in use, -ENOMEM.
 */
int native_rules__get(struct native_rules *ri, const void *rule, uint32_t *id, bool *fresh);
void native_rules__put(struct native_rules *ri, uint32_t id);

/* One executable mapping of a process and what its pages are to say. */
struct native_span {
	uint64_t start, end;		/* 4 KiB aligned, end exclusive */
	struct native_page val;
};

struct native_page_entry {
	struct native_page_key key;
	struct native_page val;
};

/*
 * The native_pages entries of a process's spans (any order, disjoint): a
 * 64 KiB page of one span is one entry with its value; a 64 KiB page
 * touched by several gets a SPLIT entry and one small entry for each 4 KiB
 * page of each of them. Sorted by (small, page). 0 with *out (free it),
 * -EINVAL (unaligned or overlapping spans), -E2BIG (more than max
 * entries), -ENOMEM.
 */
int native_pages__split(uint32_t tgid, const struct native_span *spans, size_t nr,
			size_t max, struct native_page_entry **out, size_t *nr_out);

#endif
