// SPDX-License-Identifier: GPL-2.0
#include "core/pprof.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/hashmap.h"
#include "profile.pb-c.h"

/* Growing arrays of the tables the profile refers to by index or id. */
struct pprof_builder {
	struct symbolizer *sym;
	char **strings;
	size_t nr_strings, cap_strings;
	struct hashmap string_ids;	/* string -> index + 1 */
	Perftools__Profiles__Function **functions;
	size_t nr_functions, cap_functions;
	struct hashmap function_ids;	/* name index -> id */
	Perftools__Profiles__Mapping **mappings;
	size_t nr_mappings, cap_mappings;
	struct hashmap mapping_ids;	/* const struct mapping * -> id */
	uint64_t kernel_mapping;
	Perftools__Profiles__Location **locations;
	size_t nr_locations, cap_locations;
	struct hashmap location_ids;	/* struct loc_key -> id */
	Perftools__Profiles__Sample **samples;
	size_t nr_samples, cap_samples;
	bool oom;
};

struct loc_key {
	const void *space;	/* addr_space, or the builder for kernel frames */
	uint64_t ip;
	uint64_t caller;
};

static uint64_t str_hash(const void *k)
{
	return hash_bytes(k, strlen(k), 0);
}

static bool str_equal(const void *a, const void *b)
{
	return !strcmp(a, b);
}

static uint64_t u64_hash(const void *k)
{
	return hash_u64(*(const uint64_t *)k);
}

static bool u64_equal(const void *a, const void *b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

static uint64_t ptr_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

static bool ptr_equal(const void *a, const void *b)
{
	return a == b;
}

static uint64_t loc_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct loc_key), 0);
}

static bool loc_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct loc_key));
}

/* Append p to a growing array of pointers. */
static bool push(struct pprof_builder *b, void ***arr, size_t *nr, size_t *cap, void *p)
{
	if (!p) {
		b->oom = true;
		return false;
	}
	if (*nr == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		void **tmp = realloc(*arr, ncap * sizeof(*tmp));

		if (!tmp) {
			b->oom = true;
			return false;
		}
		*arr = tmp;
		*cap = ncap;
	}
	(*arr)[(*nr)++] = p;
	return true;
}

#define PUSH(b, field, p)                                                                  \
	push(b, (void ***)&(b)->field, &(b)->nr_##field, &(b)->cap_##field, p)

static int64_t intern(struct pprof_builder *b, const char *s)
{
	uintptr_t idx = (uintptr_t)hashmap__find(&b->string_ids, s);
	char *copy;

	if (idx)
		return (int64_t)idx - 1;
	copy = strdup(s);
	if (!PUSH(b, strings, copy))
		return 0;
	if (hashmap__add(&b->string_ids, copy, (void *)(uintptr_t)b->nr_strings))
		b->oom = true;
	return (int64_t)b->nr_strings - 1;
}

static uint64_t function_id(struct pprof_builder *b, const char *name)
{
	int64_t name_idx = intern(b, name);
	Perftools__Profiles__Function *f;
	uint64_t *key;
	void *found = hashmap__find(&b->function_ids, &name_idx);

	if (found)
		return (uint64_t)(uintptr_t)found;
	f = malloc(sizeof(*f));
	key = malloc(sizeof(*key));
	if (!f || !key) {
		free(f);
		free(key);
		b->oom = true;
		return 0;
	}
	perftools__profiles__function__init(f);
	f->id = b->nr_functions + 1;
	f->name = name_idx;
	f->system_name = name_idx;
	*key = (uint64_t)name_idx;
	if (!PUSH(b, functions, f) || hashmap__add(&b->function_ids, key, (void *)(uintptr_t)f->id)) {
		b->oom = true;
		return 0;
	}
	return f->id;
}

static Perftools__Profiles__Mapping *new_mapping(struct pprof_builder *b)
{
	Perftools__Profiles__Mapping *m = malloc(sizeof(*m));

	if (!m)
		return NULL;
	perftools__profiles__mapping__init(m);
	m->id = b->nr_mappings + 1;
	m->has_functions = true;
	if (!PUSH(b, mappings, m))
		return NULL;
	return m;
}

static uint64_t mapping_id(struct pprof_builder *b, const struct addr_space *as,
			   const struct mapping *map)
{
	Perftools__Profiles__Mapping *m;
	const char *build_id;
	void *found;

	if (!map)
		return 0;
	found = hashmap__find(&b->mapping_ids, map);
	if (found)
		return (uint64_t)(uintptr_t)found;
	m = new_mapping(b);
	if (!m)
		return 0;
	m->memory_start = map->start;
	m->memory_limit = map->end;
	m->file_offset = map->pgoff;
	m->filename = intern(b, map->path);
	build_id = symbolizer__build_id(b->sym, as, map);
	if (build_id)
		m->build_id = intern(b, build_id);
	if (hashmap__add(&b->mapping_ids, map, (void *)(uintptr_t)m->id))
		b->oom = true;
	return m->id;
}

static uint64_t kernel_mapping_id(struct pprof_builder *b)
{
	Perftools__Profiles__Mapping *m;

	if (b->kernel_mapping)
		return b->kernel_mapping;
	m = new_mapping(b);
	if (!m)
		return 0;
	m->memory_start = 0xffff800000000000ULL;
	m->memory_limit = UINT64_MAX;
	m->filename = intern(b, "[kernel.kallsyms]");
	b->kernel_mapping = m->id;
	return m->id;
}

/* A new Location for key, with one Line naming function. Returns its id, 0 when out of memory. */
static uint64_t add_location(struct pprof_builder *b, const struct loc_key *key, uint64_t address,
			     uint64_t mapping, const char *function)
{
	Perftools__Profiles__Location *loc = malloc(sizeof(*loc));
	Perftools__Profiles__Line *line = malloc(sizeof(*line));
	struct loc_key *kcopy = malloc(sizeof(*kcopy));

	if (!loc || !line || !kcopy) {
		free(loc);
		free(line);
		free(kcopy);
		b->oom = true;
		return 0;
	}
	perftools__profiles__location__init(loc);
	perftools__profiles__line__init(line);
	loc->id = b->nr_locations + 1;
	loc->address = address;
	loc->mapping_id = mapping;
	line->function_id = function_id(b, function);
	loc->line = malloc(sizeof(*loc->line));
	if (!loc->line) {
		free(loc);
		free(line);
		free(kcopy);
		b->oom = true;
		return 0;
	}
	loc->n_line = 1;
	loc->line[0] = line;
	*kcopy = *key;
	if (!PUSH(b, locations, loc) ||
	    hashmap__add(&b->location_ids, kcopy, (void *)(uintptr_t)loc->id)) {
		b->oom = true;
		return 0;
	}
	return loc->id;
}

/* One Location per (address space, address); return addresses resolve at ip - 1. */
static uint64_t location_id(struct pprof_builder *b, const struct addr_space *as, uint64_t ip,
			    bool kernel, bool caller)
{
	struct loc_key key = { kernel ? (const void *)b : (const void *)as, ip, caller };
	void *found = hashmap__find(&b->location_ids, &key);
	struct frame_sym fs;
	uint64_t mapping;

	if (found)
		return (uint64_t)(uintptr_t)found;
	if (kernel) {
		symbolizer__kernel(b->sym, ip - caller, &fs);
		mapping = kernel_mapping_id(b);
	} else {
		symbolizer__user_frame(b->sym, as, ip, caller, &fs);
		mapping = as ? mapping_id(b, as, addr_space__find(as, ip - caller)) : 0;
	}
	return add_location(b, &key, ip, mapping, fs.name ? fs.name : "[unknown]");
}

/* A placeholder frame for a stack the kernel could not store. */
static uint64_t missed_location(struct pprof_builder *b, bool kernel)
{
	static const struct addr_space missed_user, missed_kernel;
	struct loc_key key = { kernel ? &missed_kernel : &missed_user, 0, 0 };
	void *found = hashmap__find(&b->location_ids, &key);

	if (found)
		return (uint64_t)(uintptr_t)found;
	return add_location(b, &key, 0, 0,
			    kernel ? "[Missed Kernel Stack]" : "[Missed User Stack]");
}

static Perftools__Profiles__Label *label(struct pprof_builder *b, const char *k, const char *str,
					 int64_t num)
{
	Perftools__Profiles__Label *l = malloc(sizeof(*l));

	if (!l) {
		b->oom = true;
		return NULL;
	}
	perftools__profiles__label__init(l);
	l->key = intern(b, k);
	if (str)
		l->str = intern(b, str);
	else
		l->num = num;
	return l;
}

/* Leaf first: kernel leaf..root, then user leaf..root. */
static void add_sample(struct pprof_builder *b, const struct agg_entry *e,
		       const struct pprof_meta *meta)
{
	Perftools__Profiles__Sample *s = malloc(sizeof(*s));
	size_t n = 0, max = e->nr_kernel + e->nr_user + 2;

	if (!s) {
		b->oom = true;
		return;
	}
	perftools__profiles__sample__init(s);
	s->location_id = calloc(max, sizeof(*s->location_id));
	s->value = calloc(2, sizeof(*s->value));
	s->label = calloc(2, sizeof(*s->label));
	if (!s->location_id || !s->value || !s->label || !PUSH(b, samples, s)) {
		b->oom = true;
		return;
	}
	if (!meta->user_only) {
		if (e->kernel_err)
			s->location_id[n++] = missed_location(b, true);
		for (unsigned int i = 0; i < e->nr_kernel && !e->kernel_err; i++)
			s->location_id[n++] = location_id(b, NULL, e->ips[i], true, i > 0);
	}
	if (!meta->kernel_only) {
		if (e->user_err)
			s->location_id[n++] = missed_location(b, false);
		for (unsigned int i = 0; i < e->nr_user && !e->user_err; i++)
			s->location_id[n++] = location_id(b, e->as, e->ips[e->nr_kernel + i], false,
							  i > 0);
	}
	s->n_location_id = n;
	s->n_value = 2;
	s->value[0] = (int64_t)e->count;
	s->value[1] = (int64_t)(e->count * meta->period_ns);
	s->n_label = 2;
	s->label[0] = label(b, "comm", e->comm, 0);
	s->label[1] = label(b, "pid", NULL, e->pid);
}

static void builder_free(struct pprof_builder *b)
{
	struct hashmap_entry *ent;
	size_t bkt;

	for (size_t i = 0; i < b->nr_samples; i++) {
		Perftools__Profiles__Sample *s = b->samples[i];

		for (size_t j = 0; s->label && j < s->n_label; j++)
			free(s->label[j]);
		free(s->label);
		free(s->value);
		free(s->location_id);
		free(s);
	}
	for (size_t i = 0; i < b->nr_locations; i++) {
		if (b->locations[i]->line)
			free(b->locations[i]->line[0]);
		free(b->locations[i]->line);
		free(b->locations[i]);
	}
	for (size_t i = 0; i < b->nr_functions; i++)
		free(b->functions[i]);
	for (size_t i = 0; i < b->nr_mappings; i++)
		free(b->mappings[i]);
	for (size_t i = 0; i < b->nr_strings; i++)
		free(b->strings[i]);
	hashmap__for_each(&b->function_ids, bkt, ent)
		free((void *)ent->key);
	hashmap__for_each(&b->location_ids, bkt, ent)
		free((void *)ent->key);
	hashmap__clear(&b->string_ids);
	hashmap__clear(&b->function_ids);
	hashmap__clear(&b->mapping_ids);
	hashmap__clear(&b->location_ids);
	free(b->samples);
	free(b->locations);
	free(b->functions);
	free(b->mappings);
	free(b->strings);
}

/* gzip (deflate with a gzip header) of buf into out. */
static int write_gzip(FILE *out, const uint8_t *buf, size_t len)
{
	z_stream zs = { 0 };
	uint8_t chunk[65536];
	int ret, err = 0;

	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	zs.next_in = (uint8_t *)buf;
	zs.avail_in = (uInt)len;
	do {
		zs.next_out = chunk;
		zs.avail_out = sizeof(chunk);
		ret = deflate(&zs, Z_FINISH);
		if (ret == Z_STREAM_ERROR) {
			err = -EIO;
			break;
		}
		if (fwrite(chunk, 1, sizeof(chunk) - zs.avail_out, out) !=
		    sizeof(chunk) - zs.avail_out) {
			err = -EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	return err;
}

int pprof__write(FILE *out, const struct agg *agg, struct symbolizer *sym,
		 const struct pprof_meta *meta)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType st[2], pt;
	Perftools__Profiles__ValueType *stp[2] = { &st[0], &st[1] };
	struct pprof_builder b = { .sym = sym };
	struct hashmap_entry *ent;
	struct agg_entry *e;
	int64_t comment;
	uint8_t *buf = NULL;
	size_t bkt, len;
	int err = 0;

	hashmap__init(&b.string_ids, str_hash, str_equal);
	hashmap__init(&b.function_ids, u64_hash, u64_equal);
	hashmap__init(&b.mapping_ids, ptr_hash, ptr_equal);
	hashmap__init(&b.location_ids, loc_hash, loc_equal);
	intern(&b, "");		/* string 0 is always "" */

	perftools__profiles__value_type__init(&st[0]);
	perftools__profiles__value_type__init(&st[1]);
	perftools__profiles__value_type__init(&pt);
	st[0].type = intern(&b, "samples");
	st[0].unit = intern(&b, "count");
	st[1].type = intern(&b, "cpu");
	st[1].unit = intern(&b, "nanoseconds");
	pt = st[1];
	agg__for_each(agg, bkt, ent, e)
		add_sample(&b, e, meta);
	if (b.oom) {
		err = -ENOMEM;
		goto out;
	}

	prof.n_sample_type = 2;
	prof.sample_type = stp;
	prof.period_type = &pt;
	prof.period = (int64_t)meta->period_ns;
	prof.time_nanos = (int64_t)meta->start_ns;
	prof.duration_nanos = (int64_t)meta->duration_ns;
	if (meta->comment) {
		comment = intern(&b, meta->comment);
		prof.n_comment = 1;
		prof.comment = &comment;
	}
	prof.n_sample = b.nr_samples;
	prof.sample = b.samples;
	prof.n_mapping = b.nr_mappings;
	prof.mapping = b.mappings;
	prof.n_location = b.nr_locations;
	prof.location = b.locations;
	prof.n_function = b.nr_functions;
	prof.function = b.functions;
	prof.n_string_table = b.nr_strings;
	prof.string_table = b.strings;

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&prof, buf);
	err = write_gzip(out, buf, len);
	if (!err && fflush(out))
		err = -EIO;
out:
	free(buf);
	builder_free(&b);
	return err;
}
