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
/* Bytes of the map's own memory, and value_size for each value (-v's account of memory). */
size_t hashmap__bytes(const struct hashmap *map, size_t value_size);

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
/* Its 128-bit output (the reference's 16 bytes: out[0] the first eight, little-endian). */
void siphash24_128(const void *data, size_t len, uint64_t k0, uint64_t k1, uint64_t out[2]);
/*
 * A 128-bit fingerprint of bytes under the run's random key (SipHash-2-4-128):
 * equal fingerprints stand for equal bytes. Without the key, which nothing
 * prints, no one can choose two inputs that share one (SipHash is a keyed
 * pseudo-random function); by chance, two of n inputs do with probability
 * n^2 / 2^129 (10^-25 for ten million).
 */
void hash_bytes128(const void *data, size_t len, uint64_t out[2]);
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

/*
 * A set of 32-bit ids whose keys live in the caller's own arrays: open
 * addressing, 8 bytes a slot holding the id and 32 bits of its hash (most
 * probes are told apart without touching a key), at most 70% full. For
 * tables of millions of small entries, where struct hashmap's allocation
 * per entry would weigh more than the entries. The 32 bits also place the
 * id: hashes must be uniform there (hash_bytes is).
 */
struct idtable {
	uint64_t *slots;	/* 0: free; else the hash's high 32 bits << 32 | (id + 1) */
	size_t nr_slots;	/* 0 or a power of two */
	size_t size;
};

/* Whether id is the one looked for (ctx says what that is). */
typedef bool (*idtable_match_fn)(const void *ctx, uint32_t id);

void idtable__init(struct idtable *t);
void idtable__clear(struct idtable *t);
/* The id added under this hash for which match(ctx, id) holds, or -1. */
int64_t idtable__find(const struct idtable *t, uint64_t hash, idtable_match_fn match,
		      const void *ctx);
/* Adds id (< UINT32_MAX, not already there) under hash. Returns 0 or -ENOMEM. */
int idtable__add(struct idtable *t, uint64_t hash, uint32_t id);

#endif
