// SPDX-License-Identifier: GPL-2.0
/*
 * Names, files and lines of one process's code objects, cached by address.
 * A code object can be freed and its memory given to another one: every
 * lookup reads the object's header again (one read) and uses the entry
 * only if what identifies it is unchanged; names are interned, so a
 * process running the same function a million times holds its name once.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/lib/hashmap.h"
#include "interp/python/pyint.h"

/* Most code objects kept; past it the entries (not the names) are dropped and read again. */
#define CODES_MAX_ENTRIES 65536
/* Most bytes of names one process may make us hold. */
#define CODES_MAX_NAME_BYTES (32UL << 20)

/* What identifies a code object: the fields read again at every lookup. */
struct code_id {
	uint64_t type, name, qualname, file, table;
	int32_t firstline;
};

struct code_entry {
	uint64_t addr;
	struct code_id id;
	const char *name, *file;	/* interned */
	uint8_t *table;			/* the line table, NULL when unreadable or too long */
	size_t table_len;
};

struct py_codes {
	struct py_interp pi;
	const struct py_mem *mem;
	struct hashmap entries;		/* &entry->addr -> entry */
	struct hashmap strings;		/* text -> the same text */
	size_t name_bytes;
	int32_t hdr_len;		/* bytes of a code object read at each lookup */
};

static uint64_t addr_hash(const void *key)
{
	return hash_u64(*(const uint64_t *)key);
}

static bool addr_equal(const void *a, const void *b)
{
	return *(const uint64_t *)a == *(const uint64_t *)b;
}

struct py_codes *py_codes__new(const struct py_interp *pi, const struct py_mem *mem)
{
	const struct py_layout *l = pi->layout;
	const int32_t words[] = { PY_OB_TYPE, l->code_filename, l->code_name, l->code_qualname,
				  l->code_linetable };
	const int32_t ints[] = { l->code_firstlineno };
	struct py_codes *c;
	int32_t a, b;

	if (!l)
		return NULL;
	a = py_fields_end(words, sizeof(words) / sizeof(words[0]), 8);
	b = py_fields_end(ints, 1, 4);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pi = *pi;
	c->mem = mem;
	c->hdr_len = a > b ? a : b;
	hashmap__init(&c->entries, addr_hash, addr_equal);
	hashmap__init(&c->strings, hashmap_str_hash, hashmap_str_equal);
	return c;
}

static void free_entries(struct py_codes *c)
{
	struct hashmap_entry *e;
	size_t bkt;

	hashmap__for_each(&c->entries, bkt, e) {
		struct code_entry *ce = e->value;

		free(ce->table);
		free(ce);
	}
	hashmap__clear(&c->entries);
	hashmap__init(&c->entries, addr_hash, addr_equal);
}

void py_codes__free(struct py_codes *c)
{
	struct hashmap_entry *e;
	size_t bkt;

	if (!c)
		return;
	free_entries(c);
	hashmap__clear(&c->entries);
	hashmap__for_each(&c->strings, bkt, e)
		free(e->value);
	hashmap__clear(&c->strings);
	free(c);
}

size_t py_codes__count(const struct py_codes *c)
{
	return c->entries.size;
}

size_t py_codes__name_bytes(const struct py_codes *c)
{
	return c->name_bytes;
}

/* The interned copy of s; NULL when out of memory or past the budget (*err says which). */
static const char *intern(struct py_codes *c, const char *s, int *err)
{
	size_t len = strlen(s);
	char *copy = hashmap__find(&c->strings, s);

	if (copy)
		return copy;
	if (c->name_bytes + len + 1 > CODES_MAX_NAME_BYTES) {
		*err = -ENOSPC;
		return NULL;
	}
	copy = strdup(s);
	if (!copy || hashmap__add(&c->strings, copy, copy)) {
		free(copy);
		*err = -ENOMEM;
		return NULL;
	}
	c->name_bytes += len + 1;
	return copy;
}

static int read_id(struct py_codes *c, uint64_t code, struct code_id *id)
{
	const struct py_layout *l = c->pi.layout;
	uint8_t hdr[512];
	int err;

	if (c->hdr_len <= 0 || (size_t)c->hdr_len > sizeof(hdr))
		return -EINVAL;
	err = py_mem__read(c->mem, code, hdr, c->hdr_len);
	if (err)
		return err;
	memset(id, 0, sizeof(*id));
	id->type = py_u64(hdr, PY_OB_TYPE);
	id->name = py_u64(hdr, l->code_name);
	id->file = py_u64(hdr, l->code_filename);
	id->table = py_u64(hdr, l->code_linetable);
	if (l->code_qualname >= 0)
		id->qualname = py_u64(hdr, l->code_qualname);
	id->firstline = (int32_t)py_u32(hdr, l->code_firstlineno);
	return 0;
}

static int load_entry(struct py_codes *c, uint64_t code, const struct code_id *id,
		      struct code_entry *ce)
{
	const struct py_layout *l = c->pi.layout;
	char *text = malloc(PY_PATH_MAX);
	int err;

	if (!text)
		return -ENOMEM;
	ce->addr = code;
	ce->id = *id;
	err = py_str__read(l, c->mem, id->qualname ? id->qualname : id->name, c->pi.str_type,
			   text, PY_NAME_MAX);
	if (!err)
		ce->name = intern(c, text, &err);
	if (!err)
		err = py_str__read(l, c->mem, id->file, c->pi.str_type, text, PY_PATH_MAX);
	if (!err)
		ce->file = intern(c, text, &err);
	free(text);
	if (err)
		return err;
	/* Without its line table a frame still has its name: its line is 0. */
	if (py_bytes__read(l, c->mem, id->table, c->pi.bytes_type, PY_LINETABLE_MAX, &ce->table,
			   &ce->table_len))
		ce->table = NULL;
	return 0;
}

static void fill_info(const struct py_codes *c, const struct code_entry *ce, uint64_t lasti,
		      struct py_code_info *info)
{
	int64_t addr = py_lines__addr(c->pi.layout, ce->addr, lasti);

	info->name = ce->name;
	info->file = ce->file;
	info->firstline = ce->id.firstline;
	info->line = ce->table ? py_lines__line(c->pi.layout, ce->table, ce->table_len,
						ce->id.firstline, addr) : 0;
	if (addr < 0 && ce->id.firstline > 0)
		info->line = ce->id.firstline;
	info->stale = false;
}

static bool same_id(const struct code_id *a, const struct code_id *b)
{
	return a->type == b->type && a->name == b->name && a->qualname == b->qualname &&
	       a->file == b->file && a->table == b->table && a->firstline == b->firstline;
}

static void drop(struct py_codes *c, struct code_entry *ce)
{
	hashmap__remove(&c->entries, &ce->addr);
	free(ce->table);
	free(ce);
}

int py_codes__lookup(struct py_codes *c, uint64_t code, uint64_t lasti,
		     struct py_code_info *info)
{
	struct code_entry *ce;
	struct code_id id;
	int err;

	code &= ~(c->pi.layout->code_tag_bits | PY_FRAME_ENTRY);
	ce = hashmap__find(&c->entries, &code);
	err = read_id(c, code, &id);
	if (err) {
		if (!ce || err == -EINVAL)
			return err;
		/* The process is gone or the object unmapped: what was read of it stands. */
		fill_info(c, ce, lasti, info);
		info->stale = true;
		return 0;
	}
	if (id.type != c->pi.code_type) {
		if (ce)
			drop(c, ce);
		return -EINVAL;
	}
	if (ce && same_id(&ce->id, &id)) {
		fill_info(c, ce, lasti, info);
		return 0;
	}
	if (ce)
		drop(c, ce);
	if (c->entries.size >= CODES_MAX_ENTRIES)
		free_entries(c);
	ce = calloc(1, sizeof(*ce));
	if (!ce)
		return -ENOMEM;
	err = load_entry(c, code, &id, ce);
	if (!err)
		err = hashmap__add(&c->entries, &ce->addr, ce);
	if (err) {
		free(ce->table);
		free(ce);
		return err;
	}
	fill_info(c, ce, lasti, info);
	return 0;
}
