// SPDX-License-Identifier: GPL-2.0
/*
 * pprof files: gzip'ed profile.proto, decoded by protobuf-c (which checks
 * the wire format); every id and string index in it is checked here. The
 * first sample type is the value read.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/input/build.h"
#include "core/input/read.h"
#include "profile.pb-c.h"

/*
 * What a pprof file of len bytes may grow to, so that a small file cannot
 * take the memory of a large one: inflated, at most 64 times its size (this
 * tool's and Go's files inflate 3 to 10 times) and 1 MiB more; decoded, at
 * most 16 times that and 4 MiB more (a message decodes to 5 to 8 times its
 * bytes); and at most 4 frames in stacks per inflated byte and 1 Mi more (a
 * location's inlined lines are a frame each).
 */
#define PPROF_INFLATE_RATIO 64
#define PPROF_INFLATE_SLACK (1u << 20)
#define PPROF_DECODE_RATIO 16
#define PPROF_DECODE_SLACK (4u << 20)
#define PPROF_FRAMES_PER_BYTE 4
#define PPROF_FRAMES_SLACK (1u << 20)
/*
 * And the names of those frames at most 64 bytes per inflated byte and
 * 64 MiB more: a frame costs a byte or two of a sample, its name is in the
 * string table once, and what a report prints or --diff compares is the
 * names of every stack's frames.
 */
#define PPROF_NAMES_PER_BYTE 64
#define PPROF_NAMES_SLACK (64u << 20)

/* protobuf-c's allocations, counted against a budget: past it, decoding fails. */
struct budget {
	size_t used, max;
};

static void *budget_alloc(void *data, size_t size)
{
	struct budget *b = data;

	/* malloc's own header counts too: a flood of empty messages is mostly that. */
	if (size > b->max || b->used + size + 16 > b->max) {
		b->used = b->max;
		return NULL;
	}
	b->used += size + 16;
	return malloc(size);
}

static void budget_free(void *data, void *ptr)
{
	(void)data;
	free(ptr);
}

/* Inflate a gzip stream, at most max bytes (-EFBIG past it). */
static int gunzip(const unsigned char *in, size_t len, size_t max, unsigned char **out,
		  size_t *out_len)
{
	z_stream zs = { 0 };
	size_t cap = 1 << 20;
	unsigned char *buf = malloc(cap);
	int ret;

	if (!buf || inflateInit2(&zs, 15 + 16) != Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_in = (unsigned char *)in;
	zs.avail_in = (uInt)(len > UINT32_MAX ? UINT32_MAX : len);
	do {
		if (zs.total_out == cap) {
			unsigned char *tmp;

			if (cap >= max) {
				ret = Z_MEM_ERROR;
				break;
			}
			tmp = realloc(buf, cap * 2 < max ? cap * 2 : max);
			if (!tmp) {
				ret = Z_BUF_ERROR;
				break;
			}
			buf = tmp;
			cap = cap * 2 < max ? cap * 2 : max;
		}
		zs.next_out = buf + zs.total_out;
		zs.avail_out = (uInt)(cap - zs.total_out);
		ret = inflate(&zs, Z_NO_FLUSH);
	} while (ret == Z_OK);
	*out_len = zs.total_out;
	inflateEnd(&zs);
	if (ret != Z_STREAM_END) {
		free(buf);
		return ret == Z_MEM_ERROR ? -EFBIG : ret == Z_BUF_ERROR ? -ENOMEM : -EINVAL;
	}
	*out = buf;
	return 0;
}

static const char *string_at(const Perftools__Profiles__Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table && p->string_table[i] ? p->string_table[i]
									   : "";
}

/* A table's entries sorted by id, for lookups by id. */
struct by_id {
	struct id_entry {
		uint64_t id;
		const void *item;
	} *e;
	size_t nr;
};

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = ((const struct id_entry *)a)->id, y = ((const struct id_entry *)b)->id;

	return x < y ? -1 : x > y;
}

static const void *find_id(const struct by_id *t, uint64_t id)
{
	struct id_entry key = { .id = id }, *e;

	e = t->nr ? bsearch(&key, t->e, t->nr, sizeof(*t->e), cmp_id) : NULL;
	return e ? e->item : NULL;
}

static int by_id__init(struct by_id *t, size_t nr)
{
	t->nr = nr;
	t->e = calloc(nr ? nr : 1, sizeof(*t->e));
	return t->e ? 0 : -ENOMEM;
}

static void by_id__sort(struct by_id *t)
{
	if (t->nr)
		qsort(t->e, t->nr, sizeof(*t->e), cmp_id);
}

/* The name of a location's line i (innermost first), "[unknown]" without one. */
static const char *line_name(const Perftools__Profiles__Profile *p, const struct by_id *fns,
			     const Perftools__Profiles__Location *loc, size_t i)
{
	const Perftools__Profiles__Function *f;

	if (i >= loc->n_line || !loc->line[i])
		return "[unknown]";
	f = find_id(fns, loc->line[i]->function_id);
	return f ? string_at(p, f->name) : "[unknown]";
}

static bool is_kernel(const Perftools__Profiles__Profile *p, const struct by_id *maps,
		      const Perftools__Profiles__Location *loc)
{
	const Perftools__Profiles__Mapping *m = find_id(maps, loc->mapping_id);

	return m && !strcmp(string_at(p, m->filename), "[kernel.kallsyms]");
}

/*
 * Every sample into b; *cut counts those deeper than INPUT_MAX_FRAMES, cut at
 * the leaf. -E2BIG past max_frames frames in all, or max_names bytes of
 * their names.
 */
static int add_samples(struct profile_builder *b, const Perftools__Profiles__Profile *p,
		       size_t max_frames, size_t max_names, unsigned int *cut)
{
	size_t names = 0;
	struct by_id locs = { 0 }, fns = { 0 }, maps = { 0 };
	int err;

	err = by_id__init(&locs, p->n_location) || by_id__init(&fns, p->n_function) ||
	      by_id__init(&maps, p->n_mapping) ? -ENOMEM : 0;
	for (size_t i = 0; !err && i < p->n_location; i++)
		locs.e[i] = (struct id_entry){ p->location[i]->id, p->location[i] };
	for (size_t i = 0; !err && i < p->n_function; i++)
		fns.e[i] = (struct id_entry){ p->function[i]->id, p->function[i] };
	for (size_t i = 0; !err && i < p->n_mapping; i++)
		maps.e[i] = (struct id_entry){ p->mapping[i]->id, p->mapping[i] };
	by_id__sort(&locs);
	by_id__sort(&fns);
	by_id__sort(&maps);
	for (size_t i = 0; i < p->n_sample && !err; i++) {
		const Perftools__Profiles__Sample *s = p->sample[i];
		uint32_t idx[INPUT_MAX_FRAMES];
		unsigned int n = 0, nk = 0;
		const char *comm = "?";
		int64_t pid = 0;

		for (size_t j = 0; j < s->n_label; j++) {
			const char *key = string_at(p, s->label[j]->key);

			if (!strcmp(key, "comm"))
				comm = string_at(p, s->label[j]->str);
			else if (!strcmp(key, "pid") || !strcmp(key, "tid"))
				pid = s->label[j]->num;
		}
		/*
		 * Leaf first, kernel frames first: the model's order, and pprof's.
		 * A location's lines are its inlined calls, innermost first: one
		 * frame each.
		 */
		for (size_t j = 0; j < s->n_location_id && !err; j++) {
			const Perftools__Profiles__Location *loc = find_id(&locs, s->location_id[j]);
			bool kernel = loc && is_kernel(p, &maps, loc);
			size_t lines = loc && loc->n_line ? loc->n_line : 1;

			for (size_t l = 0; l < lines && !err; l++) {
				const char *name = loc ? line_name(p, &fns, loc, l) : "[unknown]";
				int f;

				if (n == INPUT_MAX_FRAMES) {
					(*cut)++;
					goto full;
				}
				names += strnlen(name, max_names + 1);
				if (names > max_names) {
					err = -E2BIG;
					break;
				}
				f = builder__frame(b, kernel ? FRAME_KERNEL : FRAME_USER, name,
						   strlen(name));
				if (f < 0)
					err = f;
				else
					idx[n++] = (uint32_t)f;
				nk += kernel && nk == n - 1;
			}
		}
full:
		if (!err && b->p->nr_stack_frames + n > max_frames)
			err = -E2BIG;
		if (!err)
			err = builder__stack(b, comm, (pid_t)pid, idx, nk, n,
					     s->n_value && s->value[0] > 0 ? (uint64_t)s->value[0] : 0);
	}
	free(locs.e);
	free(fns.e);
	free(maps.e);
	return err;
}

int profile__read_pprof(const unsigned char *gz, size_t len, struct profile *out,
			struct errmsg *err)
{
	size_t max_raw = len > (PROFILE_FILE_MAX - PPROF_INFLATE_SLACK) / PPROF_INFLATE_RATIO ?
			 PROFILE_FILE_MAX : len * PPROF_INFLATE_RATIO + PPROF_INFLATE_SLACK;
	struct budget budget = { 0 };
	ProtobufCAllocator alloc = { budget_alloc, budget_free, &budget };
	Perftools__Profiles__Profile *p;
	struct profile_builder b;
	unsigned int cut = 0;
	unsigned char *raw;
	size_t raw_len;
	int ret;

	profile__init(out);
	ret = gunzip(gz, len, max_raw, &raw, &raw_len);
	if (ret) {
		if (ret == -EFBIG)
			errmsg__set(err, "pprof: inflates to more than %zu bytes (%zu times its %zu "
					 "and %u MiB): not a profile this tool reads",
				    max_raw, (size_t)PPROF_INFLATE_RATIO, len, PPROF_INFLATE_SLACK >> 20);
		else
			errmsg__set(err, ret == -ENOMEM ? "pprof: out of memory inflating"
							: "pprof: not a gzip stream");
		return ret;
	}
	budget.max = raw_len * PPROF_DECODE_RATIO + PPROF_DECODE_SLACK;
	p = perftools__profiles__profile__unpack(&alloc, raw_len, raw);
	free(raw);
	if (!p) {
		if (budget.used >= budget.max)
			errmsg__set(err, "pprof: decodes to more than %zu bytes (%u times its %zu "
					 "inflated bytes and %u MiB): not a profile this tool reads",
				    budget.max, PPROF_DECODE_RATIO, raw_len, PPROF_DECODE_SLACK >> 20);
		else
			errmsg__set(err, "pprof: not a profile.proto message");
		return budget.used >= budget.max ? -E2BIG : -EINVAL;
	}
	out->columns[0] = (struct profile_column){ "samples", "count", true };
	if (p->n_sample_type) {
		out->columns[0].type = profile__intern(out, string_at(p, p->sample_type[0]->type));
		out->columns[0].unit = profile__intern(out, string_at(p, p->sample_type[0]->unit));
	}
	out->nr_columns = 1;
	builder__init(&b, out);
	ret = out->columns[0].type && out->columns[0].unit ?
	      add_samples(&b, p, raw_len * PPROF_FRAMES_PER_BYTE + PPROF_FRAMES_SLACK,
			  raw_len * PPROF_NAMES_PER_BYTE + PPROF_NAMES_SLACK, &cut) :
	      -ENOMEM;
	builder__fini(&b);
	perftools__profiles__profile__free_unpacked(p, &alloc);
	if (ret == -E2BIG)
		errmsg__set(err, "pprof: more frames in its stacks than %u per inflated byte and "
				 "%u more, or more bytes of their names than %u per byte and %u MiB "
				 "more: not a profile this tool reads",
			    PPROF_FRAMES_PER_BYTE, PPROF_FRAMES_SLACK, PPROF_NAMES_PER_BYTE,
			    PPROF_NAMES_SLACK >> 20);
	else if (ret == -EOVERFLOW)
		errmsg__set(err, "pprof: its counts sum past 2^64: not a profile this tool reads");
	else if (ret)
		errmsg__set(err, "out of memory reading a pprof file");
	else if (cut)
		pr_warn("WARNING: %u stacks deeper than %u frames were cut to their %u innermost\n",
			cut, INPUT_MAX_FRAMES, INPUT_MAX_FRAMES);
	if (ret)
		profile__fini(out);
	return ret;
}
