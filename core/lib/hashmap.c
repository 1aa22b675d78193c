// SPDX-License-Identifier: GPL-2.0
#include "core/lib/hashmap.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Eight bytes at a time through a multiply-xorshift mixer; the tail byte-wise. */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ seed ^ len;

	for (; len >= 8; p += 8, len -= 8) {
		uint64_t w;

		memcpy(&w, p, 8);
		h = hash_u64(h ^ w);
	}
	if (len) {
		uint64_t w = 0;

		memcpy(&w, p, len);
		h = hash_u64(h ^ w ^ 0xff51afd7ed558ccdULL);
	}
	return h;
}

void hashmap__init(struct hashmap *map, hashmap_hash_fn hash, hashmap_equal_fn equal)
{
	map->hash = hash;
	map->equal = equal;
	map->buckets = NULL;
	map->nr_buckets = 0;
	map->size = 0;
}

void hashmap__clear(struct hashmap *map)
{
	for (size_t b = 0; b < map->nr_buckets; b++) {
		struct hashmap_entry *ent = map->buckets[b], *next;

		for (; ent; ent = next) {
			next = ent->next;
			free(ent);
		}
	}
	free(map->buckets);
	map->buckets = NULL;
	map->nr_buckets = 0;
	map->size = 0;
}

void *hashmap__find(const struct hashmap *map, const void *key)
{
	uint64_t h;

	if (!map->nr_buckets)
		return NULL;
	h = map->hash(key);
	for (struct hashmap_entry *ent = map->buckets[h & (map->nr_buckets - 1)]; ent;
	     ent = ent->next)
		if (ent->hash == h && map->equal(ent->key, key))
			return ent->value;
	return NULL;
}

static int grow(struct hashmap *map)
{
	size_t new_nr = map->nr_buckets ? map->nr_buckets * 2 : 64;
	struct hashmap_entry **nb = calloc(new_nr, sizeof(*nb));

	if (!nb)
		return -ENOMEM;
	for (size_t b = 0; b < map->nr_buckets; b++) {
		struct hashmap_entry *ent = map->buckets[b], *next;

		for (; ent; ent = next) {
			next = ent->next;
			ent->next = nb[ent->hash & (new_nr - 1)];
			nb[ent->hash & (new_nr - 1)] = ent;
		}
	}
	free(map->buckets);
	map->buckets = nb;
	map->nr_buckets = new_nr;
	return 0;
}

int hashmap__add(struct hashmap *map, const void *key, void *value)
{
	struct hashmap_entry *ent;
	size_t b;

	if (map->size >= map->nr_buckets) {
		int err = grow(map);

		if (err)
			return err;
	}
	ent = malloc(sizeof(*ent));
	if (!ent)
		return -ENOMEM;
	ent->key = key;
	ent->value = value;
	ent->hash = map->hash(key);
	b = ent->hash & (map->nr_buckets - 1);
	ent->next = map->buckets[b];
	map->buckets[b] = ent;
	map->size++;
	return 0;
}

int hashmap__set(struct hashmap *map, const void *key, void *value)
{
	uint64_t h;

	if (map->nr_buckets) {
		h = map->hash(key);
		for (struct hashmap_entry *ent = map->buckets[h & (map->nr_buckets - 1)]; ent;
		     ent = ent->next)
			if (ent->hash == h && map->equal(ent->key, key)) {
				ent->value = value;
				return 0;
			}
	}
	return hashmap__add(map, key, value);
}

void *hashmap__remove(struct hashmap *map, const void *key)
{
	struct hashmap_entry **link;
	uint64_t h;

	if (!map->nr_buckets)
		return NULL;
	h = map->hash(key);
	for (link = &map->buckets[h & (map->nr_buckets - 1)]; *link; link = &(*link)->next) {
		struct hashmap_entry *ent = *link;

		if (ent->hash == h && map->equal(ent->key, key)) {
			void *value = ent->value;

			*link = ent->next;
			free(ent);
			map->size--;
			return value;
		}
	}
	return NULL;
}
