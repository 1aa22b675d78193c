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

void proctrack__counts_bytes(const struct proctrack *pt, struct proctrack_counts *out)
{
	size_t bytes = hashmap__bytes(&pt->procs, sizeof(struct proc)) +
		       hashmap__bytes(&pt->comms, sizeof(struct thread_comm)) +
		       hashmap__bytes(&pt->kinds, 0) + file_table__bytes(&pt->files);

	proctrack__counts(pt, out);
	for (const struct addr_space *as = pt->all; as; as = as->next_all) {
		/* A fork shares its parent's array until one side changes: a share each. */
		unsigned int refs = as->maps_refs && *as->maps_refs ? *as->maps_refs : 1;

		bytes += sizeof(*as) + as->cap_maps * sizeof(*as->maps) / refs;
	}
	out->bytes = bytes;
}
