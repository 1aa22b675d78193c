// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/stacks.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/profile_maps.h"

/* A stack map value, kept to its depth (most stacks are far shallower than the map's 127). */
struct stack_copy {
	int32_t id;
	uint64_t ips[];		/* zero-terminated unless PROFILE_MAX_STACK_DEPTH long */
};

static uint64_t id_hash(const void *key)
{
	return hash_u64((uint64_t)(uint32_t)*(const int32_t *)key);
}

static bool id_equal(const void *a, const void *b)
{
	return *(const int32_t *)a == *(const int32_t *)b;
}

void stack_cache__init(struct stack_cache *sc, int fd)
{
	sc->fd = fd;
	sc->overflow_fd = -1;
	sc->walked_fd = -1;
	sc->claims_fd = -1;
	sc->walked = 0;
	sc->stale = 0;
	hashmap__init(&sc->copies, id_hash, id_equal);
}

void stack_cache__set_overflow(struct stack_cache *sc, int overflow_fd)
{
	sc->overflow_fd = overflow_fd;
}

void stack_cache__set_walked(struct stack_cache *sc, int walked_fd)
{
	sc->walked_fd = walked_fd;
	sc->claims_fd = -1;
}

void stack_cache__set_walked_claims(struct stack_cache *sc, int walked_fd, int claims_fd)
{
	sc->walked_fd = walked_fd;
	sc->claims_fd = claims_fd;
}

static void free_copies(struct stack_cache *sc)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&sc->copies, bkt, ent)
		free(ent->value);
	hashmap__clear(&sc->copies);
}

void stack_cache__fini(struct stack_cache *sc)
{
	free_copies(sc);
}

/* The map that holds id, and the id there. */
static int map_of(const struct stack_cache *sc, int32_t id, __u32 *key)
{
	*key = (__u32)id & ~(__u32)(PROFILE_STACK_OVERFLOW | PROFILE_STACK_WALKED);
	if (id & PROFILE_STACK_WALKED)
		return sc->walked_fd;
	return (id & PROFILE_STACK_OVERFLOW) ? sc->overflow_fd : sc->fd;
}

/*
 * The ips of id into ips (PROFILE_MAX_STACK_DEPTH of them, zeros after the
 * stack), from its map. Returns 0 or -errno.
 */
static int read_stack(struct stack_cache *sc, int32_t id, uint64_t *ips)
{
	struct profile_ustack walked;
	__u32 key;
	int fd = map_of(sc, id, &key);

	if (fd < 0)
		return -ENOENT;
	if (!(id & PROFILE_STACK_WALKED))
		return bpf_map_lookup_elem(fd, &key, ips) ? -errno : 0;
	if (bpf_map_lookup_elem(fd, &key, &walked))
		return -errno;
	/* The program's count, checked: the table is the kernel's, but a bug must not overrun. */
	if (walked.depth > PROFILE_MAX_STACK_DEPTH)
		walked.depth = PROFILE_MAX_STACK_DEPTH;
	memset(ips, 0, PROFILE_MAX_STACK_DEPTH * sizeof(*ips));
	memcpy(ips, walked.ips, walked.depth * sizeof(*ips));
	sc->walked++;
	return 0;
}

const uint64_t *stack_cache__get(struct stack_cache *sc, int32_t id)
{
	uint64_t ips[PROFILE_MAX_STACK_DEPTH];
	unsigned int depth = 0;
	struct stack_copy *c;

	if (id < 0)
		return NULL;
	c = hashmap__find(&sc->copies, &id);
	if (c)
		return c->ips;
	if (read_stack(sc, id, ips)) {
		sc->stale++;
		return NULL;
	}
	while (depth < PROFILE_MAX_STACK_DEPTH && ips[depth])
		depth++;
	/* One more slot for the terminating zero, unless the stack fills the map's value. */
	c = calloc(1, sizeof(*c) + (depth + (depth < PROFILE_MAX_STACK_DEPTH)) * sizeof(ips[0]));
	if (!c)
		return NULL;
	c->id = id;
	memcpy(c->ips, ips, depth * sizeof(ips[0]));
	if (hashmap__add(&sc->copies, &c->id, c)) {
		free(c);
		return NULL;
	}
	return c->ips;
}

/*
 * Delete what a walk finds. -EINVAL before Linux 4.16 (stack maps had no
 * get_next_key): there, only the ids read were deleted.
 */
static int delete_rest(int fd)
{
	__u32 start = UINT32_MAX, id;	/* above any bucket: the walk starts at the first */
	int n = 0;

	while (!bpf_map_get_next_key(fd, &start, &id)) {
		if (bpf_map_delete_elem(fd, &id) && errno != ENOENT)
			return -errno;
		n++;
	}
	if (errno != ENOENT && errno != EINVAL)
		return -errno;
	return n;
}

int stack_cache__clear(struct stack_cache *sc)
{
	struct hashmap_entry *ent;
	int left = 0, n;
	size_t bkt;

	hashmap__for_each(&sc->copies, bkt, ent) {
		const struct stack_copy *c = ent->value;
		__u32 key;
		int fd = map_of(sc, c->id, &key);

		/* An ARRAY's slot stays; its claim goes. */
		if ((c->id & PROFILE_STACK_WALKED) && sc->claims_fd >= 0)
			fd = sc->claims_fd;

		if (bpf_map_delete_elem(fd, &key) && errno != ENOENT)
			return -errno;
	}
	free_copies(sc);
	n = delete_rest(sc->fd);
	if (n < 0)
		return n;
	left += n;
	if (sc->overflow_fd >= 0) {
		n = delete_rest(sc->overflow_fd);
		if (n < 0)
			return n;
		left += n;
	}
	if (sc->walked_fd >= 0) {
		n = delete_rest(sc->claims_fd >= 0 ? sc->claims_fd : sc->walked_fd);
		if (n < 0)
			return n;
		left += n;
	}
	return left;
}
