// SPDX-License-Identifier: GPL-2.0
#include "core/agg/agg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Everything up to the weights identifies the stack, then the ips. */
static size_t key_len(const struct agg_entry *e)
{
	return offsetof(struct agg_entry, weights);
}

static uint64_t entry_hash(const void *key)
{
	const struct agg_entry *e = key;
	uint64_t h = hash_bytes(e, key_len(e), 0);

	return hash_bytes(e->ips, (e->nr_kernel + e->nr_user) * sizeof(e->ips[0]), h);
}

static bool entry_equal(const void *a, const void *b)
{
	const struct agg_entry *x = a, *y = b;

	return !memcmp(x, y, key_len(x)) &&
	       !memcmp(x->ips, y->ips, (x->nr_kernel + x->nr_user) * sizeof(x->ips[0]));
}

void agg__init(struct agg *agg)
{
	hashmap__init(&agg->map, entry_hash, entry_equal);
	memset(agg->totals, 0, sizeof(agg->totals));
	agg->fresh = NULL;
	agg->nr_fresh = agg->cap_fresh = 0;
}

/* Not tracked when out of memory: the report resolves it at the end instead. */
static void remember_fresh(struct agg *agg, struct agg_entry *e)
{
	if (agg->nr_fresh == agg->cap_fresh) {
		size_t cap = agg->cap_fresh ? agg->cap_fresh * 2 : 1024;
		void *p = realloc(agg->fresh, cap * sizeof(*agg->fresh));

		if (!p)
			return;
		agg->fresh = p;
		agg->cap_fresh = cap;
	}
	agg->fresh[agg->nr_fresh++] = e;
}

void agg__fini(struct agg *agg)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&agg->map, bkt, ent)
		free(ent->value);
	hashmap__clear(&agg->map);
	memset(agg->totals, 0, sizeof(agg->totals));
	free(agg->fresh);
	agg->fresh = NULL;
	agg->nr_fresh = agg->cap_fresh = 0;
}

size_t agg__size(const struct agg *agg)
{
	return agg->map.size;
}

uint64_t agg__total(const struct agg *agg, enum weight_kind kind)
{
	return (unsigned int)kind < NR_WEIGHT_KINDS ? agg->totals[kind] : 0;
}

void agg__forget_fresh(struct agg *agg, size_t n)
{
	if (n > agg->nr_fresh)
		n = agg->nr_fresh;
	if (!n)
		return;		/* fresh may still be NULL */
	memmove(agg->fresh, agg->fresh + n, (agg->nr_fresh - n) * sizeof(*agg->fresh));
	agg->nr_fresh -= n;
}

int agg__add(struct agg *agg, const struct sample *s, const struct addr_space *as, pid_t tid)
{
	unsigned int nr_k = s->nr_kernel > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_kernel;
	unsigned int nr_u = s->nr_user > MAX_STACK_DEPTH ? MAX_STACK_DEPTH : s->nr_user;
	size_t size = sizeof(struct agg_entry) + (nr_k + nr_u) * sizeof(uint64_t);
	struct agg_entry *key, *found;
	union {
		struct agg_entry e;
		char buf[sizeof(struct agg_entry) + 2 * MAX_STACK_DEPTH * sizeof(uint64_t)];
	} tmp;

	/* Zeroed so that padding hashes and compares equal. */
	memset(&tmp, 0, size);
	key = &tmp.e;
	key->as = as;
	key->pid = s->pid;
	key->tid = tid;
	memcpy(key->comm, s->comm, strnlen(s->comm, sizeof(key->comm) - 1));
	key->kernel_err = s->kernel_err;
	key->user_err = s->user_err;
	key->nr_kernel = nr_k;
	key->nr_user = nr_u;
	sample__copy_ips(s, key->ips, nr_k, nr_u);

	found = hashmap__find(&agg->map, key);
	if (!found) {
		found = malloc(size);
		if (!found)
			return -ENOMEM;
		memcpy(found, key, size);
		if (hashmap__add(&agg->map, found, found)) {
			free(found);
			return -ENOMEM;
		}
		remember_fresh(agg, found);
	}
	found->weights[s->kind] += s->weight;
	agg->totals[s->kind] += s->weight;
	return 0;
}
