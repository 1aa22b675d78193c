// SPDX-License-Identifier: GPL-2.0
#include "core/model/profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void profile__init(struct profile *p)
{
	memset(p, 0, sizeof(*p));
	hashmap__init(&p->strings, hashmap_str_hash, hashmap_str_equal);
}

void profile__fini(struct profile *p)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&p->strings, bkt, ent)
		free(ent->value);
	hashmap__clear(&p->strings);
	free(p->frames);
	free(p->stack_frames);
	free(p->stacks);
	free(p->mappings);
	memset(p, 0, sizeof(*p));
}

const char *profile__intern(struct profile *p, const char *s)
{
	char *copy = hashmap__find(&p->strings, s);

	if (copy)
		return copy;
	copy = strdup(s);
	if (!copy)
		return NULL;
	if (hashmap__add(&p->strings, copy, copy)) {
		free(copy);
		return NULL;
	}
	return copy;
}

/* Room for n more elements of size sz in a growing array. */
static bool reserve(void **arr, size_t *cap, size_t nr, size_t n, size_t sz)
{
	size_t ncap;
	void *tmp;

	if (nr + n <= *cap)
		return true;
	ncap = *cap ? *cap * 2 : 256;
	while (ncap < nr + n)
		ncap *= 2;
	tmp = realloc(*arr, ncap * sz);
	if (!tmp)
		return false;
	*arr = tmp;
	*cap = ncap;
	return true;
}

#define RESERVE(p, field, n)                                                               \
	reserve((void **)&(p)->field, &(p)->cap_##field, (p)->nr_##field, n, sizeof(*(p)->field))

int profile__add_frame(struct profile *p, const struct profile_frame *f)
{
	if (p->nr_frames >= UINT32_MAX || !RESERVE(p, frames, 1))
		return -ENOMEM;
	p->frames[p->nr_frames] = *f;
	return (int)p->nr_frames++;
}

int profile__add_mapping(struct profile *p, const struct profile_mapping *m)
{
	if (!RESERVE(p, mappings, 1))
		return -ENOMEM;
	p->mappings[p->nr_mappings] = *m;
	return (int)p->nr_mappings++;
}

int profile__add_stack(struct profile *p, const struct profile_stack *s, const uint32_t *frames,
		       unsigned int nr)
{
	struct profile_stack *dst;

	if (p->nr_stack_frames + nr > UINT32_MAX || !RESERVE(p, stack_frames, nr) ||
	    !RESERVE(p, stacks, 1))
		return -ENOMEM;
	dst = &p->stacks[p->nr_stacks];
	*dst = *s;
	dst->first = (uint32_t)p->nr_stack_frames;
	if (nr)		/* a stack of a comm alone ("comm 5" in a file) has no frames */
		memcpy(p->stack_frames + p->nr_stack_frames, frames, nr * sizeof(*frames));
	p->nr_stack_frames += nr;
	return (int)p->nr_stacks++;
}

int profile__add_stack_run(struct profile *p, const struct profile_stack *s)
{
	if ((size_t)s->first + s->nr_kernel + s->nr_user > p->nr_stack_frames ||
	    !RESERVE(p, stacks, 1))
		return -ENOMEM;
	p->stacks[p->nr_stacks] = *s;
	return (int)p->nr_stacks++;
}

uint64_t profile__text_value(const struct profile *p, const struct profile_stack *s)
{
	uint64_t v = 0;

	for (unsigned int c = 0; c < p->nr_columns; c++)
		if (p->columns[c].in_text)
			v += s->values[c];
	return v;
}

uint64_t profile__missed_stacks(const struct profile *p, bool *collision, bool *map_full)
{
	uint64_t n = 0;

	*collision = *map_full = false;
	for (size_t i = 0; i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		n += profile_stack__kernel_lost(s) + profile_stack__user_lost(s);
		*collision |= s->collision;
		*map_full |= s->map_full;
	}
	return n;
}
