// SPDX-License-Identifier: GPL-2.0
#include "core/agg/agg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_ENTRIES ((size_t)1 << AGG_CHUNK_SHIFT)

void agg__init(struct agg *agg)
{
	memset(agg, 0, sizeof(*agg));
	idtable__init(&agg->index);
}

/* Every entry, and its index, freed. */
static void free_entries(struct agg *agg)
{
	size_t id;
	struct agg_entry *e;

	agg__for_each(agg, id, e)
		free(e->raw);
	for (size_t i = 0; i < agg->nr_chunks; i++)
		free(agg->chunks[i]);
	free(agg->chunks);
	idtable__clear(&agg->index);
}

void agg__fini(struct agg *agg)
{
	free_entries(agg);
	agg__init(agg);
}

void agg__forget_entries(struct agg *agg)
{
	free_entries(agg);
	agg->chunks = NULL;
	agg->nr_forgotten += agg->nr;
	agg->nr = agg->nr_chunks = agg->cap_chunks = 0;
	agg->nr_seen = agg->nr_released = agg->raw_bytes = 0;
}

size_t agg__size(const struct agg *agg)
{
	return agg->nr + agg->nr_forgotten;
}

uint64_t agg__total(const struct agg *agg, enum weight_kind kind)
{
	return (unsigned int)kind < NR_WEIGHT_KINDS ? agg->totals[kind] : 0;
}

size_t agg__bytes(const struct agg *agg)
{
	return agg->nr_chunks * CHUNK_ENTRIES * sizeof(struct agg_entry) +
	       agg->cap_chunks * sizeof(*agg->chunks) + agg->index.nr_slots * sizeof(*agg->index.slots) + agg->raw_bytes;
}

static size_t raw_size(const struct agg_stack *st)
{
	size_t words = st->nr_kernel + st->nr_user + INTERP_FRAME_WORDS * st->nr_interp;

	return sizeof(*st) + words * sizeof(st->ips[0]);
}

void agg__release(struct agg *agg, struct agg_entry *e)
{
	if (!e->raw)
		return;
	agg->raw_bytes -= raw_size(e->raw);
	free(e->raw);
	e->raw = NULL;
	agg->nr_released++;
}

struct fp_query {
	const struct agg *agg;
	const uint64_t *fp;
};

static bool fp_match(const void *ctx, uint32_t id)
{
	const struct fp_query *q = ctx;
	const struct agg_entry *e = agg__entry(q->agg, id);

	return e->fp[0] == q->fp[0] && e->fp[1] == q->fp[1];
}

/* A new entry at the end, zeroed; NULL when out of memory. */
static struct agg_entry *new_entry(struct agg *agg)
{
	size_t chunk = agg->nr >> AGG_CHUNK_SHIFT;

	if (agg->nr >= UINT32_MAX)
		return NULL;	/* ids are 32-bit */
	if (chunk == agg->cap_chunks) {
		/*
		 * Doubled, not grown by one: each move of the array leaves a
		 * hole behind it, between chunks, that only smaller blocks can
		 * use. Grown by one, the holes summed to 4 n^2 bytes for n
		 * chunks: free heap that grew with the square of the run's
		 * length (9.7 MB after 22 minutes of a compile loop).
		 */
		size_t cap = agg->cap_chunks ? 2 * agg->cap_chunks : 64;
		struct agg_entry **chunks = realloc(agg->chunks, cap * sizeof(*chunks));

		if (!chunks)
			return NULL;
		agg->chunks = chunks;
		agg->cap_chunks = cap;
	}
	if (chunk == agg->nr_chunks) {
		agg->chunks[chunk] = calloc(CHUNK_ENTRIES, sizeof(struct agg_entry));
		if (!agg->chunks[chunk])
			return NULL;
		agg->nr_chunks++;
	}
	return agg__entry(agg, agg->nr);
}

int agg__add(struct agg *agg, const struct sample *s, const struct addr_space *as, pid_t tid)
{
	unsigned int nr_k = s->nr_kernel > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_kernel;
	unsigned int nr_u = s->nr_user > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_user;
	unsigned int nr_i = s->nr_interp > MAX_INTERP_DEPTH ? MAX_INTERP_DEPTH : s->nr_interp;
	size_t size = sizeof(struct agg_stack) +
		      (nr_k + nr_u + INTERP_FRAME_WORDS * nr_i) * sizeof(uint64_t);
	struct agg_stack *key;
	struct agg_entry *e;
	uint64_t fp[2];
	int64_t found;
	union {
		struct agg_stack st;
		char buf[sizeof(struct agg_stack) +
			 (2 * MAX_STACK_DEPTH + INTERP_FRAME_WORDS * MAX_INTERP_DEPTH) *
				 sizeof(uint64_t)];
	} tmp;

	/* Zeroed so that the comm's tail is the same in every copy of a stack. */
	memset(&tmp, 0, size);
	key = &tmp.st;
	key->as = as;
	key->pid = s->pid;
	key->tid = tid;
	memcpy(key->comm, s->comm, strnlen(s->comm, sizeof(key->comm) - 1));
	key->kernel_err = s->kernel_err;
	key->user_err = s->user_err;
	key->nr_kernel = nr_k;
	key->nr_user = nr_u;
	key->nr_interp = s->interp_frames ? nr_i : 0;
	key->interp_status = s->interp_status;
	if (nr_i < s->nr_interp)
		key->interp_status |= INTERP_TRUNCATED;
	sample__copy_ips(s, key->ips, nr_k, nr_u);
	if (key->nr_interp)
		memcpy(key->ips + nr_k + nr_u, s->interp_frames,
		       key->nr_interp * sizeof(*s->interp_frames));

	/*
	 * The image by its id, not its address: an ended process's image is
	 * freed once its stacks are in the model, and a new one may take the
	 * address (with the pid, and the same addresses, a stack of another
	 * binary would count as the old one's).
	 */
	key->as = NULL;
	hash_bytes128(key, size, fp);
	key->as = as;
	if (as) {
		fp[0] ^= hash_u64((uint64_t)as->id + 1);
		fp[1] ^= hash_u64(((uint64_t)as->id + 1) << 32);
	}
	found = idtable__find(&agg->index, fp[0], fp_match, &(struct fp_query){ agg, fp });
	if (found >= 0) {
		e = agg__entry(agg, (size_t)found);
	} else {
		e = new_entry(agg);
		if (!e)
			return -ENOMEM;
		e->raw = malloc(size);
		if (!e->raw)
			return -ENOMEM;
		memcpy(e->raw, key, size);
		if (idtable__add(&agg->index, fp[0], (uint32_t)agg->nr)) {
			free(e->raw);
			e->raw = NULL;
			return -ENOMEM;
		}
		e->fp[0] = fp[0];
		e->fp[1] = fp[1];
		agg->nr++;
		agg->raw_bytes += size;
	}
	e->weights[s->kind] += s->weight;
	agg->totals[s->kind] += s->weight;
	return 0;
}
