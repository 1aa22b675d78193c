// SPDX-License-Identifier: GPL-2.0
/*
 * The native store made, freed and counted (native_tables.c: the tables;
 * native_procs.c: the processes; native_parts.c: ranges, rules, pages).
 */
#include "backend-bpf/native_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

void native_store__map_sizes(const struct native_store_opts *o, struct native_map_sizes *out)
{
	bool few = o && o->few;

	out->procs = few ? NATIVE_FEW_PROCS : NATIVE_DEFAULT_PROCS;
	out->pages = few ? NATIVE_FEW_PAGES : NATIVE_DEFAULT_PAGES;
	out->index = few ? NATIVE_FEW_INDEX : NATIVE_DEFAULT_INDEX;
	out->rows = o && o->max_rows ? o->max_rows : few ? NATIVE_FEW_ROWS : NATIVE_DEFAULT_ROWS;
	out->rules = o && o->max_rules ? o->max_rules : NATIVE_DEFAULT_RULES;
	/* A rule id is 16 bits in a row. */
	if (out->rules > NATIVE_DEFAULT_RULES)
		out->rules = NATIVE_DEFAULT_RULES;
	out->unknown = NATIVE_DEFAULT_UNKNOWN;
}

static uint64_t pid_hash(const void *key)
{
	return hash_u64((uint64_t)*(const pid_t *)key);
}

static bool pid_equal(const void *a, const void *b)
{
	return *(const pid_t *)a == *(const pid_t *)b;
}

struct native_store *native_store__new(const struct native_maps_fds *fds,
				       const struct native_store_opts *o, struct proctrack *pt)
{
	struct native_store *s = calloc(1, sizeof(*s));
	struct native_rule none = { 0 };
	__u32 zero = 0;

	if (!s)
		return NULL;
	s->fds = *fds;
	s->pt = pt;
	native_store__map_sizes(o, &s->sizes);
	s->budget = o && o->budget_bytes ? o->budget_bytes : NATIVE_DEFAULT_BUDGET;
	s->grace_ms = !o || !o->grace_ms ? NATIVE_TABLE_GRACE_MS : o->grace_ms < 0 ? 0 : o->grace_ms;
	native_tables__init(s);
	hashmap__init(&s->procs, pid_hash, pid_equal);
	hashmap__init(&s->polled, pid_hash, pid_equal);
	if (native_ranges__init(&s->rows, s->sizes.rows) ||
	    native_rules__init(&s->rules, s->sizes.rules)) {
		native_store__free(s);
		return NULL;
	}
	mapped_array__init(&s->rows_mem, s->fds.rows, sizeof(__u32), s->sizes.rows);
	mapped_array__init(&s->rules_mem, s->fds.rules, sizeof(struct native_rule), s->sizes.rules);
	/* Slot 0 is NONE whatever was there. */
	bpf_map_update_elem(s->fds.rules, &zero, &none, BPF_ANY);
	return s;
}

void native_store__free(struct native_store *s)
{
	if (!s)
		return;
	nproc__free_all(s);
	ntable__free_all(s);
	native_rules__fini(&s->rules);
	native_ranges__fini(&s->rows);
	free(s);
}

static void count_table(const struct ntable *t, struct native_store_stats *out)
{
	out->tables++;
	out->tables_loaded += t->way == NATIVE_WAY_TABLE;
	out->tables_fp += t->way == NATIVE_WAY_FP;
}

void native_store__stats(const struct native_store *s, struct native_store_stats *out)
{
	const struct hashmap_entry *ent;
	size_t bkt;

	*out = s->st;
	out->tables = out->tables_loaded = out->tables_fp = 0;
	out->tables_idle = s->idle;
	hashmap__for_each(&s->tables, bkt, ent)
		count_table(ent->value, out);
	if (s->vdso)
		count_table(s->vdso, out);
	out->rows = s->rows.used;
	out->rules = s->rules.used;
	out->index = s->index_used;
	out->pages = s->pages_used;
	out->bytes = native_store__bytes_used(s);
	out->processes = (unsigned int)s->procs.size - s->nr_copies_only;
	out->mapped = s->rows_mem.ok && s->rules_mem.ok;
}

static void tell(const struct ntable *t,
		 void (*fn)(void *arg, const char *path, const struct native_binary_info *info),
		 void *arg)
{
	struct native_binary_info info = {
		.way = t->way,
		.why = t->why,
		.table = t->id,
		.processes = t->refs,
		.functions = t->fp.functions,
		.rbp_frames = t->fp.rbp_frames,
		.code_bytes = t->fp.bytes,
		.rbp_bytes = t->fp.rbp_bytes,
		.rows = t->nr_rows,
		.rules = t->nr_rules,
		.bytes = t->bytes,
		.compile_ns = t->compile_ns,
	};

	fn(arg, t->path, &info);
}

void native_store__each_binary(const struct native_store *s,
			       void (*fn)(void *arg, const char *path,
					  const struct native_binary_info *info),
			       void *arg)
{
	const struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&s->tables, bkt, ent)
		tell(ent->value, fn, arg);
	if (s->vdso)
		tell(s->vdso, fn, arg);
}
