// SPDX-License-Identifier: GPL-2.0
#include "core/lib/hashmap.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

/*
 * The run's key for hash_bytes: random, so that names a user wrote into a
 * file or a binary cannot be chosen to share one bucket (a flood turns every
 * lookup into a walk of all the names). Set before main; with no getrandom
 * (before 3.17) from /dev/urandom, else from what differs between runs.
 */
static uint64_t run_key[2];

static void __attribute__((constructor)) init_run_key(void)
{
	size_t got = 0;
	int fd;

	while (got < sizeof(run_key)) {
		ssize_t n = getrandom((char *)run_key + got, sizeof(run_key) - got, GRND_NONBLOCK);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got == sizeof(run_key))
		return;
	fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (read(fd, run_key, sizeof(run_key)) == (ssize_t)sizeof(run_key)) {
			close(fd);
			return;
		}
		close(fd);
	}
	{
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		run_key[0] = hash_u64((uint64_t)ts.tv_nsec ^ (uint64_t)ts.tv_sec << 32);
		run_key[1] = hash_u64((uint64_t)getpid() ^ (uint64_t)(uintptr_t)&ts);
	}
}

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                        \
	do {                                                                            \
		v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);              \
		v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;                                  \
		v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;                                  \
		v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);              \
	} while (0)

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of len bytes under the key k0,
 * k1: one 64-bit word, or with wide the reference's 128-bit output in out[0]
 * (its first eight bytes, little-endian) and out[1].
 */
static void siphash(const void *data, size_t len, uint64_t k0, uint64_t k1, bool wide,
		    uint64_t *out)
{
	const unsigned char *p = data, *end = p + (len & ~(size_t)7);
	uint64_t v0 = k0 ^ 0x736f6d6570736575ULL, v1 = k1 ^ 0x646f72616e646f6dULL;
	uint64_t v2 = k0 ^ 0x6c7967656e657261ULL, v3 = k1 ^ 0x7465646279746573ULL;
	uint64_t b = (uint64_t)len << 56;

	if (wide)
		v1 ^= 0xee;
	for (; p != end; p += 8) {
		uint64_t m = 0;

		/* Little-endian words, whatever the host's order, as the reference reads them. */
		for (int i = 0; i < 8; i++)
			m |= (uint64_t)p[i] << (8 * i);
		v3 ^= m;
		SIPROUND;
		SIPROUND;
		v0 ^= m;
	}
	for (size_t i = 0; i < (len & 7); i++)
		b |= (uint64_t)p[i] << (8 * i);
	v3 ^= b;
	SIPROUND;
	SIPROUND;
	v0 ^= b;
	v2 ^= wide ? 0xee : 0xff;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	out[0] = v0 ^ v1 ^ v2 ^ v3;
	if (!wide)
		return;
	v1 ^= 0xdd;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	SIPROUND;
	out[1] = v0 ^ v1 ^ v2 ^ v3;
}

uint64_t siphash24(const void *data, size_t len, uint64_t k0, uint64_t k1)
{
	uint64_t h;

	siphash(data, len, k0, k1, false, &h);
	return h;
}

void siphash24_128(const void *data, size_t len, uint64_t k0, uint64_t k1, uint64_t out[2])
{
	siphash(data, len, k0, k1, true, out);
}

void hash_bytes128(const void *data, size_t len, uint64_t out[2])
{
	siphash(data, len, run_key[0], run_key[1], true, out);
}

uint64_t hash_bytes(const void *data, size_t len, uint64_t seed)
{
	return siphash24(data, len, run_key[0] ^ seed, run_key[1]);
}

/* Eight bytes at a time through a multiply-xorshift mixer; the tail byte-wise. */
uint64_t hash_bytes_fixed(const void *data, size_t len, uint64_t seed)
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

size_t hashmap__bytes(const struct hashmap *map, size_t value_size)
{
	return map->nr_buckets * sizeof(*map->buckets) +
	       map->size * (sizeof(struct hashmap_entry) + value_size);
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

uint64_t hashmap_str_hash(const void *key)
{
	return hash_bytes(key, strlen(key), 0);
}

bool hashmap_str_equal(const void *a, const void *b)
{
	return !strcmp(a, b);
}

void idtable__init(struct idtable *t)
{
	t->slots = NULL;
	t->nr_slots = 0;
	t->size = 0;
}

void idtable__clear(struct idtable *t)
{
	free(t->slots);
	idtable__init(t);
}

static inline uint32_t idtable_tag(uint64_t hash)
{
	return (uint32_t)(hash >> 32);
}

int64_t idtable__find(const struct idtable *t, uint64_t hash, idtable_match_fn match,
		      const void *ctx)
{
	uint32_t tag = idtable_tag(hash);
	size_t mask = t->nr_slots - 1;

	if (!t->nr_slots)
		return -1;
	for (size_t i = tag & mask;; i = (i + 1) & mask) {
		uint64_t slot = t->slots[i];

		if (!slot)
			return -1;
		if ((uint32_t)(slot >> 32) == tag && match(ctx, (uint32_t)slot - 1))
			return (int64_t)((uint32_t)slot - 1);
	}
}

/* Put a slot in the first free place from its tag's (there is one: never full). */
static void idtable_place(uint64_t *slots, size_t nr_slots, uint64_t slot)
{
	size_t mask = nr_slots - 1;
	size_t i = (size_t)(slot >> 32) & mask;

	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = slot;
}

int idtable__add(struct idtable *t, uint64_t hash, uint32_t id)
{
	if (id == UINT32_MAX)
		return -ENOMEM;
	/* Grown at 70% full: linear probing stays short. */
	if ((t->size + 1) * 10 > t->nr_slots * 7) {
		size_t nr = t->nr_slots ? t->nr_slots * 2 : 64;
		uint64_t *slots;

		/* Tags place ids: a table of more than 2^32 slots would not spread them. */
		if (nr > ((size_t)1 << 32))
			return -ENOMEM;
		slots = calloc(nr, sizeof(*slots));
		if (!slots)
			return -ENOMEM;
		for (size_t i = 0; i < t->nr_slots; i++)
			if (t->slots[i])
				idtable_place(slots, nr, t->slots[i]);
		free(t->slots);
		t->slots = slots;
		t->nr_slots = nr;
	}
	idtable_place(t->slots, t->nr_slots, (uint64_t)idtable_tag(hash) << 32 | ((uint64_t)id + 1));
	t->size++;
	return 0;
}
