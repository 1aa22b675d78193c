// SPDX-License-Identifier: GPL-2.0
/* The native store's pure parts: row ranges, rule interning, page keys. */
#include "backend-bpf/native_parts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Ranges */

int native_ranges__init(struct native_ranges *r, uint32_t capacity)
{
	memset(r, 0, sizeof(*r));
	r->capacity = capacity;
	if (!capacity)
		return 0;
	r->free = malloc(16 * sizeof(*r->free));
	if (!r->free)
		return -ENOMEM;
	r->cap = 16;
	r->free[0] = (struct native_extent){ 0, capacity };
	r->nr_free = 1;
	return 0;
}

void native_ranges__fini(struct native_ranges *r)
{
	free(r->free);
	memset(r, 0, sizeof(*r));
}

int native_ranges__alloc(struct native_ranges *r, uint32_t n, uint32_t *first)
{
	if (!n)
		return -EINVAL;
	for (size_t i = 0; i < r->nr_free; i++) {
		struct native_extent *e = &r->free[i];

		if (e->nr < n)
			continue;
		*first = e->first;
		e->first += n;
		e->nr -= n;
		if (!e->nr) {
			memmove(e, e + 1, (r->nr_free - i - 1) * sizeof(*e));
			r->nr_free--;
		}
		r->used += n;
		return 0;
	}
	return -ENOSPC;
}

int native_ranges__free(struct native_ranges *r, uint32_t first, uint32_t n)
{
	size_t lo = 0, hi = r->nr_free;
	uint64_t end = (uint64_t)first + n;
	bool with_prev, with_next;

	if (!n || end > r->capacity)
		return -EINVAL;
	/* The first free range that starts after first. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->free[mid].first <= first)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0 && (uint64_t)r->free[lo - 1].first + r->free[lo - 1].nr > first)
		return -EINVAL;		/* part of it is free already */
	if (lo < r->nr_free && r->free[lo].first < end)
		return -EINVAL;
	with_prev = lo > 0 && r->free[lo - 1].first + r->free[lo - 1].nr == first;
	with_next = lo < r->nr_free && r->free[lo].first == end;
	if (with_prev && with_next) {
		r->free[lo - 1].nr += n + r->free[lo].nr;
		memmove(&r->free[lo], &r->free[lo + 1], (r->nr_free - lo - 1) * sizeof(*r->free));
		r->nr_free--;
	} else if (with_prev) {
		r->free[lo - 1].nr += n;
	} else if (with_next) {
		r->free[lo].first = first;
		r->free[lo].nr += n;
	} else {
		if (r->nr_free == r->cap) {
			size_t cap = r->cap ? 2 * r->cap : 16;
			struct native_extent *tmp = realloc(r->free, cap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			r->free = tmp;
			r->cap = cap;
		}
		memmove(&r->free[lo + 1], &r->free[lo], (r->nr_free - lo) * sizeof(*r->free));
		r->free[lo] = (struct native_extent){ first, n };
		r->nr_free++;
	}
	r->used -= n;
	return 0;
}

uint32_t native_ranges__largest(const struct native_ranges *r)
{
	uint32_t best = 0;

	for (size_t i = 0; i < r->nr_free; i++)
		if (r->free[i].nr > best)
			best = r->free[i].nr;
	return best;
}

/* Rules */

#define RULE_BYTES 12

struct native_rule_ent {
	unsigned char rule[RULE_BYTES];		/* the key */
	uint32_t id;
	uint32_t refs;
};

static uint64_t rule_hash(const void *key)
{
	return hash_bytes(key, RULE_BYTES, 0x6e72756c);
}

static bool rule_equal(const void *a, const void *b)
{
	return !memcmp(a, b, RULE_BYTES);
}

int native_rules__init(struct native_rules *ri, uint32_t max)
{
	memset(ri, 0, sizeof(*ri));
	hashmap__init(&ri->by_rule, rule_hash, rule_equal);
	if (max < 1)
		max = 1;
	ri->max = max;
	ri->next = 1;
	ri->used = 1;
	return 0;
}

void native_rules__fini(struct native_rules *ri)
{
	for (uint32_t i = 0; ri->by_id && i < ri->cap; i++)
		free(ri->by_id[i]);
	hashmap__clear(&ri->by_rule);
	free(ri->by_id);
	free(ri->free_ids);
	memset(ri, 0, sizeof(*ri));
}

/* by_id and free_ids grown to hold id (doubling, at most max). 0 or -ENOMEM. */
static int grow_ids(struct native_rules *ri, uint32_t id)
{
	uint32_t cap = ri->cap ? ri->cap : 1024;
	struct native_rule_ent **by_id;
	uint32_t *free_ids;

	while (cap <= id)
		cap *= 2;
	if (cap > ri->max)
		cap = ri->max;
	by_id = realloc(ri->by_id, cap * sizeof(*by_id));
	if (!by_id)
		return -ENOMEM;
	ri->by_id = by_id;
	memset(by_id + ri->cap, 0, (cap - ri->cap) * sizeof(*by_id));
	free_ids = realloc(ri->free_ids, cap * sizeof(*free_ids));
	if (!free_ids)
		return -ENOMEM;	/* by_id larger than cap says: harmless */
	ri->free_ids = free_ids;
	ri->cap = cap;
	return 0;
}

int native_rules__get(struct native_rules *ri, const void *rule, uint32_t *id, bool *fresh)
{
	static const unsigned char none[RULE_BYTES];
	struct native_rule_ent *e;
	uint32_t nid;

	*fresh = false;
	if (!memcmp(rule, none, RULE_BYTES)) {
		*id = 0;
		return 0;
	}
	e = hashmap__find(&ri->by_rule, rule);
	if (e) {
		e->refs++;
		*id = e->id;
		return 0;
	}
	if (ri->nr_free)
		nid = ri->free_ids[--ri->nr_free];
	else if (ri->next < ri->max)
		nid = ri->next++;
	else
		return -ENOSPC;
	/* Room for id nid: the ids in use, not the most there may be (65,536: 768 KB). */
	if (nid >= ri->cap && grow_ids(ri, nid)) {
		if (nid == ri->next - 1)
			ri->next--;
		return -ENOMEM;
	}
	e = malloc(sizeof(*e));
	if (e)
		memcpy(e->rule, rule, RULE_BYTES);
	if (!e || hashmap__add(&ri->by_rule, e->rule, e)) {
		free(e);
		ri->free_ids[ri->nr_free++] = nid;
		return -ENOMEM;
	}
	e->id = nid;
	e->refs = 1;
	ri->by_id[nid] = e;
	ri->used++;
	*id = nid;
	*fresh = true;
	return 0;
}

void native_rules__put(struct native_rules *ri, uint32_t id)
{
	struct native_rule_ent *e;

	if (!id || id >= ri->cap || !(e = ri->by_id[id]))
		return;
	if (--e->refs)
		return;
	hashmap__remove(&ri->by_rule, e->rule);
	ri->by_id[id] = NULL;
	ri->free_ids[ri->nr_free++] = id;
	ri->used--;
	free(e);
}

/* Pages */

static int cmp_span(const void *a, const void *b)
{
	const struct native_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static int cmp_entry(const void *a, const void *b)
{
	const struct native_page_key *x = &((const struct native_page_entry *)a)->key;
	const struct native_page_key *y = &((const struct native_page_entry *)b)->key;

	if (x->small != y->small)
		return x->small < y->small ? -1 : 1;
	return x->page < y->page ? -1 : x->page > y->page;
}

struct entries {
	struct native_page_entry *v;
	size_t nr, cap, max;
	uint32_t tgid;
};

static int emit(struct entries *e, uint32_t small, uint64_t page, const struct native_page *val)
{
	struct native_page_entry *x;

	if (e->nr >= e->max)
		return -E2BIG;
	if (e->nr == e->cap) {
		size_t cap = e->cap ? 2 * e->cap : 64;

		x = realloc(e->v, cap * sizeof(*x));
		if (!x)
			return -ENOMEM;
		e->v = x;
		e->cap = cap;
	}
	x = &e->v[e->nr++];
	memset(x, 0, sizeof(*x));
	x->key.tgid = e->tgid;
	x->key.small = small;
	x->key.page = page;
	x->val = *val;
	return 0;
}

int native_pages__split(uint32_t tgid, const struct native_span *spans, size_t nr,
			size_t max, struct native_page_entry **out, size_t *nr_out)
{
	const uint64_t small_mask = (1ull << NATIVE_SMALL_SHIFT) - 1;
	const struct native_page split = { .kind = NATIVE_PAGE_SPLIT };
	struct entries e = { .max = max, .tgid = tgid };
	struct native_span *s;
	uint64_t last_split = UINT64_MAX;
	int err = 0;

	*out = NULL;
	*nr_out = 0;
	s = malloc((nr ? nr : 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	if (nr)
		memcpy(s, spans, nr * sizeof(*s));
	qsort(s, nr, sizeof(*s), cmp_span);
	for (size_t i = 0; i < nr; i++)
		if (s[i].end <= s[i].start || (s[i].start & small_mask) || (s[i].end & small_mask) ||
		    (i && s[i].start < s[i - 1].end)) {
			free(s);
			return -EINVAL;
		}
	for (size_t i = 0; i < nr && !err; i++) {
		uint64_t first = s[i].start >> NATIVE_PAGE_SHIFT;
		uint64_t last = (s[i].end - 1) >> NATIVE_PAGE_SHIFT;
		bool shared_first = i && (s[i - 1].end - 1) >> NATIVE_PAGE_SHIFT == first;
		bool shared_last = i + 1 < nr && s[i + 1].start >> NATIVE_PAGE_SHIFT == last;

		/* Each turn emits an entry at least: bounded by max. */
		for (uint64_t p = first; p <= last && !err; p++) {
			uint64_t lo, hi;

			if (!((p == first && shared_first) || (p == last && shared_last))) {
				err = emit(&e, 0, p, &s[i].val);
				continue;
			}
			if (p != last_split) {
				err = emit(&e, 0, p, &split);
				last_split = p;
			}
			lo = s[i].start > p << NATIVE_PAGE_SHIFT ? s[i].start : p << NATIVE_PAGE_SHIFT;
			hi = s[i].end - 1 < ((p + 1) << NATIVE_PAGE_SHIFT) - 1
				     ? s[i].end - 1
				     : ((p + 1) << NATIVE_PAGE_SHIFT) - 1;
			for (uint64_t q = lo >> NATIVE_SMALL_SHIFT; q <= hi >> NATIVE_SMALL_SHIFT && !err;
			     q++)
				err = emit(&e, 1, q, &s[i].val);
		}
	}
	free(s);
	if (err) {
		free(e.v);
		return err;
	}
	if (e.nr)
		qsort(e.v, e.nr, sizeof(*e.v), cmp_entry);
	*out = e.v;
	*nr_out = e.nr;
	return 0;
}
