// SPDX-License-Identifier: GPL-2.0
/*
 * The profile as pprof: a gzip-compressed profile.proto, encoded with
 * protobuf-c. One Sample per stack with a value per column, one Location
 * per frame of the profile (an address of an address space) with a Line per
 * function there (those inlined first, as profile.proto orders them, each
 * with file and line when DWARF gave them), Mappings as the profile has
 * them with flags that say what their Locations hold, Functions by name,
 * file and first line; comm and pid as labels. A frame no symbol named in a
 * file has one Line, of a Function named by the file's base name
 * ("[libcrypto.so.3]", what pprof itself shows for a Location without Lines,
 * so that other readers show it too); a frame in no file has no Line. Either
 * way its Mapping says has_functions false, and its address and mapping
 * (file, build-id, offset) let pprof symbolize it later: pprof symbolizes
 * such a Mapping's Locations and replaces their Lines.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "core/lib/hashmap.h"
#include "core/lib/interrupt.h"
#include "core/lib/utf8.h"
#include "core/output/writer.h"
#include "profile.pb-c.h"

/* Growing arrays of the tables the profile refers to by index or id. */
struct pprof_builder {
	char **strings;
	size_t nr_strings, cap_strings;
	struct hashmap string_ids;	/* string -> index + 1 */
	Perftools__Profiles__Function **functions;
	size_t nr_functions, cap_functions;
	struct hashmap function_ids;	/* struct function_key * -> id */
	Perftools__Profiles__Mapping **mappings;
	size_t nr_mappings, cap_mappings;
	uint64_t kernel_mapping;	/* for kernel frames without one (read from files) */
	Perftools__Profiles__Location **locations;
	size_t nr_locations, cap_locations;
	uint64_t *location_ids;		/* profile frame index -> Location id, 0 if none yet */
	struct mapping_count *counts;	/* per profile mapping: what its Locations hold */
	Perftools__Profiles__Sample **samples;
	size_t nr_samples, cap_samples;
	bool oom;
};

/* A Function is its name, its file and its first line: static functions of two files differ. */
struct function_key {
	int64_t name, file, start_line;
};

/* Locations of one mapping, and how many of them have a function, files, line numbers. */
struct mapping_count {
	size_t locations, functions, files, lines;
};

static uint64_t function_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct function_key), 0);
}

static bool function_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct function_key));
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

/*
 * profile.proto's strings must be UTF-8 (proto3 readers such as Go's reject
 * the whole file otherwise); names from hostile binaries need not be: other
 * bytes are written as \xNN.
 */
static char *utf8_copy(const char *s)
{
	size_t n = strlen(s), o = 0;
	char *out = malloc(4 * n + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n;) {
		size_t len = utf8__seq_len((const unsigned char *)s + i, n - i);

		if (len) {
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
		} else {
			o += (size_t)sprintf(out + o, "\\x%02x", (unsigned char)s[i++]);
		}
	}
	out[o] = '\0';
	return out;
}

static int64_t intern(struct pprof_builder *b, const char *s)
{
	char *copy = utf8_copy(s);
	uintptr_t idx = copy ? (uintptr_t)hashmap__find(&b->string_ids, copy) : 0;

	if (idx) {
		free(copy);
		return (int64_t)idx - 1;
	}
	if (!PUSH(b, strings, copy))
		return 0;
	if (hashmap__add(&b->string_ids, copy, (void *)(uintptr_t)b->nr_strings))
		b->oom = true;
	return (int64_t)b->nr_strings - 1;
}

/* The Function of pf, or with name, of a module (no file, no line): pf's own is ignored. */
static uint64_t function_id(struct pprof_builder *b, const struct profile_frame *pf,
			    const char *name)
{
	struct function_key k = {
		.name = intern(b, name ? name : pf->name ? pf->name : "[unknown]"),
		.file = !name && pf->func_file ? intern(b, pf->func_file) : 0,
		.start_line = name ? 0 : pf->func_line,
	};
	Perftools__Profiles__Function *f;
	struct function_key *key;
	void *found = hashmap__find(&b->function_ids, &k);

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
	f->name = k.name;
	f->system_name = k.name;
	f->filename = k.file;
	f->start_line = k.start_line;
	*key = k;
	if (!PUSH(b, functions, f) || hashmap__add(&b->function_ids, key, (void *)(uintptr_t)f->id)) {
		b->oom = true;
		return 0;
	}
	return f->id;
}

static void add_mapping(struct pprof_builder *b, const struct profile_mapping *pm)
{
	Perftools__Profiles__Mapping *m = malloc(sizeof(*m));

	if (!m) {
		b->oom = true;
		return;
	}
	perftools__profiles__mapping__init(m);
	m->id = b->nr_mappings + 1;
	m->memory_start = pm->start;
	m->memory_limit = pm->limit;
	m->file_offset = pm->offset;
	m->filename = intern(b, pm->file ? pm->file : "");
	if (pm->build_id)
		m->build_id = intern(b, pm->build_id);
	if (!PUSH(b, mappings, m))
		free(m);
}

/*
 * The profile's mappings, in order: Mapping id i + 1 is the profile's
 * mapping i. Kernel frames of profiles read from files have none: they get
 * one "[kernel.kallsyms]", which is how readers tell kernel frames apart.
 */
static void add_mappings(struct pprof_builder *b, const struct profile *p)
{
	for (size_t i = 0; i < p->nr_mappings && !b->oom; i++)
		add_mapping(b, &p->mappings[i]);
	for (size_t i = 0; i < p->nr_frames && !b->oom; i++)
		if (p->frames[i].kind == FRAME_KERNEL && !p->frames[i].mapping) {
			add_mapping(b, &(struct profile_mapping){ .limit = UINT64_MAX,
								  .file = "[kernel.kallsyms]" });
			b->kernel_mapping = b->nr_mappings;
			/* Frames read from files all have names. */
			if (!b->oom)
				b->mappings[b->nr_mappings - 1]->has_functions = true;
			break;
		}
}

static void free_location(Perftools__Profiles__Location *loc)
{
	for (size_t i = 0; i < loc->n_line; i++)
		free(loc->line[i]);
	free(loc->line);
	free(loc);
}

/* What a Location of mapping m holds, for the Mapping's flags. */
static void count_location(struct pprof_builder *b, const struct profile *p, uint32_t m,
			   const Perftools__Profiles__Location *loc, const struct profile_frame *f)
{
	struct mapping_count *c;
	/* A module's Line is no function: pprof is to symbolize the Location still. */
	bool named = f->name, files = named, lines = named;

	if (!m || m > p->nr_mappings)
		return;
	for (size_t i = 0; named && i < loc->n_line; i++) {
		const struct profile_frame *lf = f - (loc->n_line - 1 - i);

		files &= lf->file != NULL;
		lines &= lf->line != 0;
	}
	c = &b->counts[m - 1];
	c->locations++;
	c->functions += named;
	c->files += files;
	c->lines += lines;
}

/*
 * The Location of a profile frame, made on first use: a Line for each
 * function inlined there (innermost first) and one for the frame's own; when
 * no symbol named it, one of its module's, or none without a module.
 */
static uint64_t location_id(struct pprof_builder *b, const struct profile *p, uint32_t frame)
{
	const struct profile_frame *f = &p->frames[frame];
	const char *module = profile_frame__unnamed_module(f);
	unsigned int nr = f->name ? 1 + (frame >= f->nr_inline ? f->nr_inline : 0) : !!module;
	char *module_name = NULL;
	Perftools__Profiles__Location *loc;

	if (b->location_ids[frame])
		return b->location_ids[frame];
	if (module && asprintf(&module_name, "[%s]", module) < 0) {
		b->oom = true;
		return 0;
	}
	loc = malloc(sizeof(*loc));
	if (loc)
		perftools__profiles__location__init(loc);
	if (!loc || !(loc->line = calloc(nr ? nr : 1, sizeof(*loc->line)))) {
		free(loc);
		free(module_name);
		b->oom = true;
		return 0;
	}
	loc->id = b->nr_locations + 1;
	loc->address = f->address;
	loc->mapping_id = f->mapping ? f->mapping
			  : f->kind == FRAME_KERNEL ? b->kernel_mapping : 0;
	for (unsigned int i = 0; i < nr; i++) {
		const struct profile_frame *lf = f - (nr - 1 - i);
		Perftools__Profiles__Line *line = malloc(sizeof(*line));

		if (!line) {
			free_location(loc);
			free(module_name);
			b->oom = true;
			return 0;
		}
		perftools__profiles__line__init(line);
		line->function_id = function_id(b, lf, module_name);
		line->line = module_name ? 0 : lf->line;
		loc->line[loc->n_line++] = line;
	}
	free(module_name);
	if (!PUSH(b, locations, loc)) {
		free_location(loc);
		return 0;
	}
	count_location(b, p, f->mapping, loc, f);
	b->location_ids[frame] = loc->id;
	return loc->id;
}

/* What every Location of each Mapping holds; false for a Mapping without any. */
static void set_mapping_flags(struct pprof_builder *b)
{
	for (size_t i = 0; i < b->nr_mappings; i++) {
		const struct mapping_count *c = &b->counts[i];
		Perftools__Profiles__Mapping *m = b->mappings[i];

		m->has_functions = c->locations && c->functions == c->locations;
		m->has_filenames = c->locations && c->files == c->locations;
		m->has_line_numbers = c->locations && c->lines == c->locations;
		/* Lines come from DWARF, which also gave each address its inlined calls. */
		m->has_inline_frames = m->has_line_numbers;
	}
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
static void add_sample(struct pprof_builder *b, const struct profile *p,
		       const struct profile_stack *ps)
{
	Perftools__Profiles__Sample *s = malloc(sizeof(*s));
	size_t n = ps->nr_kernel + ps->nr_user, nr_loc = 0;

	if (!s) {
		b->oom = true;
		return;
	}
	perftools__profiles__sample__init(s);
	s->location_id = calloc(n ? n : 1, sizeof(*s->location_id));
	s->value = calloc(p->nr_columns ? p->nr_columns : 1, sizeof(*s->value));
	s->label = calloc(2, sizeof(*s->label));
	if (!s->location_id || !s->value || !s->label || !PUSH(b, samples, s)) {
		free(s->location_id);
		free(s->value);
		free(s->label);
		free(s);
		b->oom = true;
		return;
	}
	/* Inlined calls (--inline) are Lines of the Location of the frame after them. */
	for (size_t i = 0; i < n; i++)
		if (profile__frame(p, ps, (unsigned int)i)->kind != FRAME_INLINE)
			s->location_id[nr_loc++] = location_id(b, p, p->stack_frames[ps->first + i]);
	s->n_location_id = nr_loc;
	s->n_value = p->nr_columns;
	for (unsigned int c = 0; c < p->nr_columns; c++)
		s->value[c] = (int64_t)ps->values[c];
	s->n_label = 2;
	s->label[0] = label(b, "comm", ps->comm, 0);
	s->label[1] = label(b, ps->tid ? "tid" : "pid", NULL, ps->tid ? ps->tid : ps->pid);
}

static void builder_free(struct pprof_builder *b)
{
	struct hashmap_entry *ent;
	size_t bkt;

	for (size_t i = 0; i < b->nr_samples; i++) {
		Perftools__Profiles__Sample *s = b->samples[i];

		for (size_t j = 0; j < s->n_label; j++)
			free(s->label[j]);
		free(s->label);
		free(s->value);
		free(s->location_id);
		free(s);
	}
	for (size_t i = 0; i < b->nr_locations; i++)
		free_location(b->locations[i]);
	for (size_t i = 0; i < b->nr_functions; i++)
		free(b->functions[i]);
	for (size_t i = 0; i < b->nr_mappings; i++)
		free(b->mappings[i]);
	for (size_t i = 0; i < b->nr_strings; i++)
		free(b->strings[i]);
	hashmap__for_each(&b->function_ids, bkt, ent)
		free((void *)ent->key);
	hashmap__clear(&b->string_ids);
	hashmap__clear(&b->function_ids);
	free(b->location_ids);
	free(b->counts);
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
			err = errno ? -errno : -EIO;
			break;
		}
	} while (ret != Z_STREAM_END);
	deflateEnd(&zs);
	return err;
}

int writer__pprof(FILE *out, const struct profile *p, const struct writer_opts *o)
{
	Perftools__Profiles__Profile prof = PERFTOOLS__PROFILES__PROFILE__INIT;
	Perftools__Profiles__ValueType types[PROFILE_MAX_COLUMNS];
	Perftools__Profiles__ValueType *typep[PROFILE_MAX_COLUMNS];
	Perftools__Profiles__ValueType period_type;
	struct pprof_builder b = { 0 };
	int64_t comment;
	uint8_t *buf = NULL;
	size_t len;
	int err = 0;

	hashmap__init(&b.string_ids, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&b.function_ids, function_hash, function_equal);
	intern(&b, "");		/* string 0 is always "" */
	b.location_ids = calloc(p->nr_frames ? p->nr_frames : 1, sizeof(*b.location_ids));
	b.counts = calloc(p->nr_mappings ? p->nr_mappings : 1, sizeof(*b.counts));
	if (!b.location_ids || !b.counts) {
		err = -ENOMEM;
		goto out;
	}

	for (unsigned int c = 0; c < p->nr_columns; c++) {
		perftools__profiles__value_type__init(&types[c]);
		types[c].type = intern(&b, p->columns[c].type);
		types[c].unit = intern(&b, p->columns[c].unit);
		typep[c] = &types[c];
	}
	add_mappings(&b, p);
	for (size_t i = 0; i < p->nr_stacks && !b.oom && !interrupt__pending(); i++)
		add_sample(&b, p, &p->stacks[i]);
	if (!b.oom)
		set_mapping_flags(&b);
	if (b.oom) {
		err = -ENOMEM;
		goto out;
	}

	prof.n_sample_type = p->nr_columns;
	prof.sample_type = typep;
	if (p->nr_columns) {
		period_type = types[p->period_column];
		prof.period_type = &period_type;
		prof.period = (int64_t)p->period;
	}
	prof.time_nanos = (int64_t)p->start_ns;
	prof.duration_nanos = (int64_t)p->duration_ns;
	if (p->comment) {
		comment = intern(&b, p->comment);
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
	if (b.oom) {
		err = -ENOMEM;
		goto out;
	}

	len = perftools__profiles__profile__get_packed_size(&prof);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	perftools__profiles__profile__pack(&prof, buf);
	err = write_gzip(out, buf, len);
	if (!err)
		err = writer__flush(out);
	if (!err) {
		bool collision, map_full;

		/* A Sample per stack: each stack's markers are written (see writer.h). */
		writer__printed_missed(o, profile__missed_stacks(p, &collision, &map_full));
	}
out:
	free(buf);
	builder_free(&b);
	return err;
}
