// SPDX-License-Identifier: GPL-2.0
/*
 * The tracker itself: made, freed and counted here; its rooms (see
 * README.md) keep address spaces, files, lifetimes, comms and /proc reads.
 */
#include "core/proc/proctrack_internal.h"

#include <stdint.h>
#include <stdlib.h>

static uint64_t pid_hash(const void *key)
{
	return hash_u64(*(const pid_t *)key);
}

/* Keys that are small integers stored in the pointer itself. */
static uint64_t value_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool value_equal(const void *a, const void *b)
{
	return a == b;
}

static bool pid_equal(const void *a, const void *b)
{
	return *(const pid_t *)a == *(const pid_t *)b;
}

struct proctrack *proctrack__new(void)
{
	struct proctrack *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	file_table__init(&pt->files);
	hashmap__init(&pt->procs, pid_hash, pid_equal);
	hashmap__init(&pt->comms, pid_hash, pid_equal);
	hashmap__init(&pt->kinds, value_hash, value_equal);
	return pt;
}

void proctrack__free(struct proctrack *pt)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!pt)
		return;
	hashmap__for_each(&pt->procs, bkt, ent)
		free(ent->value);
	hashmap__for_each(&pt->comms, bkt, ent)
		free(ent->value);
	while (pt->all) {
		struct addr_space *next = pt->all->next_all;

		addr_space__free(pt->all);
		pt->all = next;
	}
	file_table__fini(&pt->files);
	hashmap__clear(&pt->procs);
	hashmap__clear(&pt->comms);
	hashmap__clear(&pt->kinds);
	free(pt->ended);
	free(pt->released);
	retire_queue__free(&pt->retiring);
	free(pt);
}

void proctrack__counts(const struct proctrack *pt, struct proctrack_counts *out)
{
	*out = pt->counts;
	out->procs = pt->procs.size;
	out->comms = pt->comms.size;
	out->kinds = pt->kinds.size;
	out->paths = file_table__pooled_paths(&pt->files);
	out->retiring = retire_queue__len(&pt->retiring);
}
