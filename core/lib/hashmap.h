/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A small chained hash map from opaque keys to opaque values. The caller owns
 * keys and values; the map only stores pointers.
 */
#ifndef CORE_LIB_HASHMAP_H
#define CORE_LIB_HASHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t (*hashmap_hash_fn)(const void *key);
typedef bool (*hashmap_equal_fn)(const void *a, const void *b);

struct hashmap_entry {
	const void *key;
	void *value;
	uint64_t hash;
	struct hashmap_entry *next;
};

struct hashmap {
	hashmap_hash_fn hash;
	hashmap_equal_fn equal;
	struct hashmap_entry **buckets;
	size_t nr_buckets;	/* a power of two */
	size_t size;
};

void hashmap__init(struct hashmap *map, hashmap_hash_fn hash, hashmap_equal_fn equal);
/* Frees the map's own memory; keys and values are the caller's. */
void hashmap__clear(struct hashmap *map);

void *hashmap__find(const struct hashmap *map, const void *key);
/* Adds key -> value; the key must not be present. Returns 0 or -ENOMEM. */
int hashmap__add(struct hashmap *map, const void *key, void *value);
/* key -> value, replacing what key had. Returns 0 or -ENOMEM. */
int hashmap__set(struct hashmap *map, const void *key, void *value);
/* Removes key; returns its value (the caller frees it), or NULL if it was not there. */
void *hashmap__remove(struct hashmap *map, const void *key);

#define hashmap__for_each(map, bkt, ent)                                        \
	for ((bkt) = 0; (bkt) < (map)->nr_buckets; (bkt)++)                     \
		for ((ent) = (map)->buckets[bkt]; (ent); (ent) = (ent)->next)

/*
 * A hash of bytes for hash tables: SipHash-2-4 under a key chosen at random
 * for each run (and seed), so that crafted names cannot all collide. Its
 * values differ between runs: nothing printed may depend on them, nor on
 * the order in which a map's entries are visited.
 */
uint64_t hash_bytes(const void *data, size_t len, uint64_t seed);
/* SipHash-2-4 itself, for a given key. */
uint64_t siphash24(const void *data, size_t len, uint64_t k0, uint64_t k1);
/* Hash and equality of NUL-terminated string keys (keyed, as hash_bytes). */
uint64_t hashmap_str_hash(const void *key);
bool hashmap_str_equal(const void *a, const void *b);
/* A hash that is the same in every run (colours of a frame's name), not for tables of user data. */
uint64_t hash_bytes_fixed(const void *data, size_t len, uint64_t seed);
/* A mixer for integer keys (pids, addresses: not chosen freely by a user). */
static inline uint64_t hash_u64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

#endif
