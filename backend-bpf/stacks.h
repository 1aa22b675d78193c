/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The stacks of one generation's BPF stack maps by id (the first map, the
 * overflow map for ids with PROFILE_STACK_OVERFLOW, the table of user
 * stacks the program walked for ids with PROFILE_STACK_WALKED), each read
 * from the kernel once and kept at its depth until the generation is
 * cleared. The maps are emptied only after every count key naming their ids
 * was drained.
 */
#ifndef BPFBACKEND_STACKS_H
#define BPFBACKEND_STACKS_H

#include <stdint.h>

#include "core/lib/hashmap.h"

struct stack_cache {
	int fd;			/* the BPF_MAP_TYPE_STACK_TRACE map */
	int overflow_fd;	/* the generation's overflow stack map, or -1 */
	int walked_fd;		/* its table of walked user stacks (bpf/fpwalk.bpf.h), or -1 */
	/*
	 * Where that table is an ARRAY (bpf/native.bpf.h), the hash of its
	 * claimed slots, emptied instead of it; else -1.
	 */
	int claims_fd;
	uint64_t walked;	/* stacks read from that table */
	struct hashmap copies;	/* id -> struct stack_copy */
	uint64_t stale;		/* ids that named no stack (cleared too early: a bug) */
};

void stack_cache__init(struct stack_cache *sc, int fd);
/* The generation's overflow map, for ids with PROFILE_STACK_OVERFLOW. */
void stack_cache__set_overflow(struct stack_cache *sc, int overflow_fd);
/* The generation's table of walked user stacks, for ids with PROFILE_STACK_WALKED. */
void stack_cache__set_walked(struct stack_cache *sc, int walked_fd);
/* The same for an ARRAY of walked stacks whose slots are claimed in claims_fd. */
void stack_cache__set_walked_claims(struct stack_cache *sc, int walked_fd, int claims_fd);
void stack_cache__fini(struct stack_cache *sc);
/*
 * The stack of id, zero-terminated unless PROFILE_MAX_STACK_DEPTH long;
 * NULL for a negative id, or if the map lacks it.
 */
const uint64_t *stack_cache__get(struct stack_cache *sc, int32_t id);
/*
 * Empty the stack maps and the copies: the ids read, then (Linux 4.16+,
 * where stack maps can be walked) whatever else is left, such as the stacks
 * of samples the full count map dropped. Returns how many stacks were left
 * behind without a count, or -errno.
 */
int stack_cache__clear(struct stack_cache *sc);

#endif
