// SPDX-License-Identifier: GPL-2.0
#include "core/model/diff.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/hashmap.h"
#include "core/lib/strbuf.h"

/*
 * A stack as a key: its comm (interned in out, so one pointer per name) and
 * its frames as indexes of out's frames, not as names: a stack of long names
 * costs four bytes a frame, whatever a file's names are.
 */
struct stack_key {
	const char *comm;
	uint32_t nr_kernel, n;
	uint32_t idx[];
};

static size_t key_size(const struct stack_key *k)
{
	return sizeof(*k) + k->n * sizeof(k->idx[0]);
}

static uint64_t key_hash(const void *k)
{
	return hash_bytes(k, key_size(k), 0);
}

static bool key_equal(const void *a, const void *b)
{
	const struct stack_key *x = a, *y = b;

	return x->n == y->n && !memcmp(x, y, key_size(x));
}

struct differ {
	struct profile *out;
	struct hashmap frames;	/* "K:name" -> index + 1 */
	struct hashmap stacks;	/* struct stack_key (ours) -> index + 1 */
	struct stack_key *key;	/* the one being looked up, of up to 1024 frames */
};

/* Frames of a stack compared at most (the readers keep 512). */
#define DIFF_MAX_FRAMES 1024

static const char *name_of(const struct profile_frame *f)
{
	return f->name ? f->name : "[unknown]";
}

/* The out frame of f's kind and name. */
static int frame_of(struct differ *d, const struct profile_frame *f)
{
	struct profile_frame nf = { .kind = f->kind };
	struct strbuf k = { 0 };
	const char *key;
	uintptr_t found;
	int idx;

	strbuf__puts(&k, f->kind == FRAME_KERNEL ? "K:" : f->kind == FRAME_MISSED ? "M:" : "U:");
	strbuf__puts(&k, name_of(f));
	if (k.oom)
		return -ENOMEM;
	found = (uintptr_t)hashmap__find(&d->frames, k.buf);
	key = found ? NULL : profile__intern(d->out, k.buf);
	strbuf__free(&k);
	if (found)
		return (int)found - 1;
	if (!key)
		return -ENOMEM;
	nf.name = f->name ? key + 2 : NULL;
	idx = profile__add_frame(d->out, &nf);
	if (idx < 0 || hashmap__add(&d->frames, key, (void *)(uintptr_t)(idx + 1)))
		return -ENOMEM;
	return idx;
}

/* Add s's value of from to column col of its stack in out (made the first time). */
static int add(struct differ *d, const struct profile *from, const struct profile_stack *s,
	       unsigned int col)
{
	unsigned int n = s->nr_kernel + s->nr_user;
	struct stack_key *k = d->key, *copy;
	uintptr_t found;
	int i;

	if (n > DIFF_MAX_FRAMES)
		n = DIFF_MAX_FRAMES;
	k->comm = profile__intern(d->out, s->comm);
	if (!k->comm)
		return -ENOMEM;
	k->n = n;
	k->nr_kernel = s->nr_kernel < n ? s->nr_kernel : n;
	for (unsigned int j = 0; j < n; j++) {
		int f = frame_of(d, profile__frame(from, s, j));

		if (f < 0)
			return f;
		k->idx[j] = (uint32_t)f;
	}
	found = (uintptr_t)hashmap__find(&d->stacks, k);
	if (found) {
		d->out->stacks[found - 1].values[col] += profile__text_value(from, s);
		return 0;
	}
	{
		struct profile_stack ns = { .pid = s->pid,
					    .nr_kernel = (uint16_t)k->nr_kernel,
					    .kernel_missed = s->kernel_missed,
					    .user_missed = s->user_missed };

		ns.nr_user = (uint16_t)(n - ns.nr_kernel);
		ns.comm = k->comm;
		ns.values[col] = profile__text_value(from, s);
		i = profile__add_stack(d->out, &ns, k->idx, n);
	}
	copy = i < 0 ? NULL : malloc(key_size(k));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, k, key_size(k));
	if (hashmap__add(&d->stacks, copy, (void *)(uintptr_t)(i + 1))) {
		free(copy);
		return -ENOMEM;
	}
	return 0;
}

int profile__diff(const struct profile *base, const struct profile *new, struct profile *out)
{
	struct differ d = { .out = out };
	struct hashmap_entry *ent;
	size_t bkt;
	int err = 0;

	profile__init(out);
	out->differential = true;
	out->columns[0] = (struct profile_column){ "base", "count", false };
	out->columns[1] = (struct profile_column){ "new", "count", true };
	out->nr_columns = 2;
	hashmap__init(&d.frames, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&d.stacks, key_hash, key_equal);
	d.key = malloc(sizeof(*d.key) + DIFF_MAX_FRAMES * sizeof(d.key->idx[0]));
	if (!d.key)
		err = -ENOMEM;
	for (size_t i = 0; i < base->nr_stacks && !err; i++)
		err = add(&d, base, &base->stacks[i], 0);
	for (size_t i = 0; i < new->nr_stacks && !err; i++)
		err = add(&d, new, &new->stacks[i], 1);
	hashmap__for_each(&d.stacks, bkt, ent)
		free((void *)ent->key);
	hashmap__clear(&d.frames);
	hashmap__clear(&d.stacks);
	free(d.key);
	return err;
}

void profile__diff_totals(const struct profile *diff, uint64_t *base, uint64_t *new)
{
	*base = *new = 0;
	for (size_t i = 0; i < diff->nr_stacks; i++) {
		*base += diff->stacks[i].values[0];
		*new += diff->stacks[i].values[1];
	}
}

static int cmp_change(const void *a, const void *b)
{
	const struct diff_function *x = a, *y = b;
	double dx = x->new - x->base, dy = y->new - y->base;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->name, y->name);
}

int profile__diff_functions(const struct profile *diff, struct diff_function **out, size_t *nr)
{
	/* A function's self share: the stacks whose leaf it is (kernel leaf first, else user). */
	struct diff_function *fns = calloc(diff->nr_frames ? diff->nr_frames : 1, sizeof(*fns));
	uint64_t tb, tn;

	*out = NULL;
	*nr = 0;
	if (!fns)
		return -ENOMEM;
	profile__diff_totals(diff, &tb, &tn);
	for (size_t i = 0; i < diff->nr_stacks; i++) {
		const struct profile_stack *s = &diff->stacks[i];
		uint32_t leaf;

		if (!(s->nr_kernel + s->nr_user))
			continue;
		leaf = diff->stack_frames[s->first];
		fns[leaf].base += tb ? 100.0 * s->values[0] / tb : 0;
		fns[leaf].new += tn ? 100.0 * s->values[1] / tn : 0;
	}
	/* Frames of the same name (kernel and user kinds apart) are one function. */
	for (size_t i = 0; i < diff->nr_frames; i++) {
		fns[i].name = name_of(&diff->frames[i]);
		if (fns[i].base == 0 && fns[i].new == 0)
			continue;
		fns[(*nr)++] = fns[i];
	}
	qsort(fns, *nr, sizeof(*fns), cmp_change);
	*out = fns;
	return 0;
}
