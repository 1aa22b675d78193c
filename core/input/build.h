/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Building a profile from names, for the readers: frames told apart by kind
 * and name only (files carry no address spaces), stacks from root-first
 * name lists as files write them.
 */
#ifndef CORE_INPUT_BUILD_H
#define CORE_INPUT_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lib/hashmap.h"
#include "core/model/profile.h"

/* Frames of a stack read at most: deeper ones are cut (and marked). */
#define INPUT_MAX_FRAMES 512

struct profile_builder {
	struct profile *p;
	struct hashmap frames;	/* "K:name" or "U:name" (interned) -> index + 1 */
	uint64_t total;		/* of the values added: shares are of it, so it must not wrap */
	bool oom;
};

void builder__init(struct profile_builder *b, struct profile *p);
void builder__fini(struct profile_builder *b);
/* The frame of this kind and name (a new one the first time); -ENOMEM. */
int builder__frame(struct profile_builder *b, enum frame_kind kind, const char *name, size_t len);
/*
 * Add a stack: frames[] are frame indexes leaf first, the first nr_kernel
 * of them kernel frames. Returns 0, -ENOMEM, or -EOVERFLOW when the values
 * added sum past 2^64 (a report of shares of a wrapped total is wrong).
 */
int builder__stack(struct profile_builder *b, const char *comm, pid_t pid, const uint32_t *frames,
		   unsigned int nr_kernel, unsigned int nr, uint64_t value);

#endif
