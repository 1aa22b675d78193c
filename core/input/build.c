// SPDX-License-Identifier: GPL-2.0
#include "core/input/build.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/strbuf.h"

void builder__init(struct profile_builder *b, struct profile *p)
{
	b->p = p;
	b->total = 0;
	b->oom = false;
	hashmap__init(&b->frames, hashmap_str_hash, hashmap_str_equal);
}

void builder__fini(struct profile_builder *b)
{
	hashmap__clear(&b->frames);
}

int builder__frame(struct profile_builder *b, enum frame_kind kind, const char *name, size_t len)
{
	struct strbuf key = { 0 };
	struct profile_frame f = { .kind = kind };
	const char *k;
	uintptr_t found;
	int idx;

	strbuf__puts(&key, kind == FRAME_KERNEL ? "K:" : "U:");
	strbuf__putn(&key, name, len);
	if (key.oom)
		return -ENOMEM;
	found = (uintptr_t)hashmap__find(&b->frames, key.buf);
	if (found) {
		strbuf__free(&key);
		return (int)found - 1;
	}
	k = profile__intern(b->p, key.buf);
	strbuf__free(&key);
	if (!k)
		return -ENOMEM;
	f.name = k + 2;		/* the pool keeps "K:name": the name is its tail */
	/* A file's "[unknown]" is a frame without a name, as the run's own. */
	if (!strcmp(f.name, "[unknown]"))
		f.name = NULL;
	idx = profile__add_frame(b->p, &f);
	if (idx < 0 || hashmap__add(&b->frames, k, (void *)(uintptr_t)(idx + 1)))
		return -ENOMEM;
	return idx;
}

int builder__stack(struct profile_builder *b, const char *comm, pid_t pid, const uint32_t *frames,
		   unsigned int nr_kernel, unsigned int nr, uint64_t value)
{
	struct profile_stack s = { .pid = pid, .nr_kernel = (uint16_t)nr_kernel,
				   .nr_user = (uint16_t)(nr - nr_kernel) };

	if (__builtin_add_overflow(b->total, value, &b->total))
		return -EOVERFLOW;
	s.comm = profile__intern(b->p, comm);
	if (!s.comm)
		return -ENOMEM;
	s.values[0] = value;
	return profile__add_stack(b->p, &s, frames, nr) < 0 ? -ENOMEM : 0;
}
