// SPDX-License-Identifier: GPL-2.0
#include "core/agg/members.h"

#include <errno.h>
#include <stdlib.h>

static uint64_t id_hash(const void *key)
{
	return hash_u64(*(const pid_t *)key);
}

static bool id_equal(const void *a, const void *b)
{
	return *(const pid_t *)a == *(const pid_t *)b;
}

void members__init(struct members *ms)
{
	hashmap__init(&ms->map, id_hash, id_equal);
	ms->newest = 0;
	ms->ended = 0;
}

void members__fini(struct members *ms)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&ms->map, bkt, ent)
		free(ent->value);
	hashmap__clear(&ms->map);
}

static void note(struct members *ms, uint64_t time)
{
	if (time > ms->newest)
		ms->newest = time;
}

struct member *members__find(const struct members *ms, pid_t id)
{
	return hashmap__find(&ms->map, &id);
}

int members__begin(struct members *ms, pid_t id, uint64_t start, int threads)
{
	struct member *m = members__find(ms, id);

	note(ms, start);
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m)
			return -ENOMEM;
		m->id = id;
		if (hashmap__add(&ms->map, &m->id, m)) {
			free(m);
			return -ENOMEM;
		}
	}
	/* A number seen again: a new lifetime, the old one's samples being older than start. */
	m->start = start;
	m->end = MEMBER_LIVE;
	m->threads = threads;
	m->leader_gone = false;
	return 0;
}

void member__end(struct members *ms, struct member *m, uint64_t time)
{
	note(ms, time);
	/* A record without a time ends it for all that is dated. */
	if (m->end == MEMBER_LIVE) {
		m->end = time ? time : 1;
		ms->ended++;
	}
}

void member__thread_born(struct members *ms, struct member *m, uint64_t time)
{
	note(ms, time);
	if (m->end == MEMBER_LIVE)
		m->threads++;
}

void member__thread_exited(struct members *ms, struct member *m, bool leader, uint64_t time)
{
	note(ms, time);
	if (m->end != MEMBER_LIVE)
		return;
	m->threads--;
	m->leader_gone |= leader;
	/*
	 * The number is free only once every thread has gone; until the main
	 * thread has, a count at 0 is one of lost records (a thread's birth
	 * missed): the main thread's exit tells then.
	 */
	if (m->leader_gone && m->threads <= 0)
		member__end(ms, m, time);
	else if (m->threads < 0)
		m->threads = 0;
}

bool member__covers(const struct member *m, uint64_t t0, uint64_t t1)
{
	/* No time at all: the process that has the number now, as ever. */
	if (t0 == UINT64_MAX)
		return true;
	return t1 >= m->start && (m->end == MEMBER_LIVE || t0 <= m->end);
}

size_t members__forget_ended(struct members *ms, uint64_t grace)
{
	struct hashmap_entry *ent;
	struct member **gone;
	size_t bkt, n = 0;

	if (ms->newest <= grace || !ms->map.size)
		return 0;
	/* Collected first: removing entries while walking the buckets would skip some. */
	gone = malloc(ms->map.size * sizeof(*gone));
	if (!gone)
		return 0;	/* out of memory: forgotten at a later sweep */
	hashmap__for_each(&ms->map, bkt, ent) {
		struct member *m = ent->value;

		if (m->end != MEMBER_LIVE && m->end < ms->newest - grace)
			gone[n++] = m;
	}
	for (size_t i = 0; i < n; i++) {
		hashmap__remove(&ms->map, &gone[i]->id);
		free(gone[i]);
	}
	free(gone);
	return n;
}
