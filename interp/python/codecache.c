// SPDX-License-Identifier: GPL-2.0
/*
 * Names, files and lines of one process's code objects, cached by address
 * and identity (PY_CODE_IDENT). A code object can be freed and its memory
 * given to another one between a sample and its naming: every lookup reads
 * the object's header again (one read) and names the frame from it only if
 * it is alive and has the identity the frame was read with; else only a
 * cached entry of that identity names it. Names and line tables are
 * interned, so a process running the same function a million times, or
 * making a million code objects share one 64 KiB line table, holds it once;
 * and what one process makes us hold is counted against one budget.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/lib/hashmap.h"
#include "interp/python/pyint.h"

/* Most code objects kept; past it the entries (not the names) are dropped and read again. */
#define CODES_MAX_ENTRIES 65536
/* Most bytes of names and line tables one process may make us hold (py_codes__set_limit). */
#define CODES_MAX_BYTES (32UL << 20)

/* What identifies a code object: the fields read again at every lookup. */
struct code_id {
	uint64_t type, name, qualname, file, table;
	int32_t firstline;
	uint32_t version;
};

/* An entry's key: the object's address and its identity then. */
struct code_key {
	uint64_t addr, ident;
};

/* A line table's bytes, interned: a bytes object's content, whoever points at it. */
struct line_table {
	uint64_t hash;
	size_t len;
	uint8_t *data;
};

struct code_entry {
	struct code_key key;
	struct code_id id;
	const char *name, *file;	/* interned */
	const struct line_table *table;	/* interned; NULL: unreadable, too long, refused */
};

struct py_codes {
	struct py_interp pi;
	const struct py_mem *mem;
	struct hashmap entries;		/* &entry->addr -> entry */
	struct hashmap strings;		/* text -> the same text */
	struct hashmap tables;		/* struct line_table * -> itself */
	struct py_codes_held held;
	size_t limit;			/* the most names and tables held may take */
	int32_t hdr_len;		/* bytes of a code object read at each lookup */
};

static uint64_t table_hash(const void *key)
{
	return ((const struct line_table *)key)->hash;
}

static bool table_equal(const void *a, const void *b)
{
	const struct line_table *x = a, *y = b;

	return x->hash == y->hash && x->len == y->len && !memcmp(x->data, y->data, x->len);
}

static uint64_t key_hash(const void *key)
{
	const struct code_key *k = key;

	return hash_u64(k->addr ^ hash_u64(k->ident));
}

static bool key_equal(const void *a, const void *b)
{
	const struct code_key *x = a, *y = b;

	return x->addr == y->addr && x->ident == y->ident;
}

/* The identity of a code object from its fields (PY_CODE_IDENT, as the in-kernel walk). */
static uint64_t ident_of(const struct code_id *id)
{
	return PY_CODE_IDENT(id->firstline, id->version, id->file, id->name, id->qualname,
			     id->table);
}

/*
 * Where the identity's fields lie in a code object of layout l: [*lo, *hi),
 * *lo a multiple of 8, the bytes the in-kernel walk reads.
 */
static void ident_span(const struct py_layout *l, int32_t *lo, int32_t *hi)
{
	const int32_t words[] = { l->code_filename, l->code_name, l->code_qualname,
				  l->code_linetable };
	const int32_t ints[] = { l->code_firstlineno, l->code_version };
	int32_t a = py_fields_end(words, 4, 8), b = py_fields_end(ints, 2, 4);

	*hi = a > b ? a : b;
	*lo = *hi;
	for (size_t i = 0; i < 4; i++)
		if (words[i] >= 0 && words[i] < *lo)
			*lo = words[i];
	for (size_t i = 0; i < 2; i++)
		if (ints[i] >= 0 && ints[i] < *lo)
			*lo = ints[i];
	*lo &= ~7;
}

/* The identity fields of a code object from buf, which holds its bytes from offset base. */
static void id_fields(const struct py_layout *l, const uint8_t *buf, int32_t base,
		      struct code_id *id)
{
	id->name = py_u64(buf, l->code_name - base);
	id->file = py_u64(buf, l->code_filename - base);
	id->table = py_u64(buf, l->code_linetable - base);
	id->qualname = l->code_qualname >= 0 ? py_u64(buf, l->code_qualname - base) : 0;
	id->firstline = (int32_t)py_u32(buf, l->code_firstlineno - base);
	id->version = l->code_version >= 0 ? py_u32(buf, l->code_version - base) : 0;
}

int py_code__ident(const struct py_layout *l, const struct py_mem *mem, uint64_t code,
		   uint64_t *ident)
{
	struct code_id id = { 0 };
	uint8_t buf[256];
	int32_t lo, hi;
	int err;

	*ident = 0;
	ident_span(l, &lo, &hi);
	if (lo < 0 || hi <= lo || (size_t)(hi - lo) > sizeof(buf))
		return -EINVAL;
	err = py_mem__read(mem, code + (uint64_t)lo, buf, (size_t)(hi - lo));
	if (err)
		return err;
	id_fields(l, buf, lo, &id);
	*ident = ident_of(&id);
	return 0;
}

struct py_codes *py_codes__new(const struct py_interp *pi, const struct py_mem *mem)
{
	const struct py_layout *l = pi->layout;
	const int32_t words[] = { PY_OB_TYPE, l->code_filename, l->code_name, l->code_qualname,
				  l->code_linetable };
	const int32_t ints[] = { l->code_firstlineno, l->code_version };
	struct py_codes *c;
	int32_t a, b;

	if (!l)
		return NULL;
	a = py_fields_end(words, sizeof(words) / sizeof(words[0]), 8);
	b = py_fields_end(ints, sizeof(ints) / sizeof(ints[0]), 4);
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->pi = *pi;
	c->mem = mem;
	c->hdr_len = a > b ? a : b;
	c->limit = CODES_MAX_BYTES;
	hashmap__init(&c->entries, key_hash, key_equal);
	hashmap__init(&c->strings, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&c->tables, table_hash, table_equal);
	return c;
}

static void free_entries(struct py_codes *c)
{
	struct hashmap_entry *e;
	size_t bkt;

	hashmap__for_each(&c->entries, bkt, e)
		free(e->value);
	hashmap__clear(&c->entries);
	hashmap__init(&c->entries, key_hash, key_equal);
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
	hashmap__for_each(&c->tables, bkt, e) {
		struct line_table *t = e->value;

		free(t->data);
		free(t);
	}
	hashmap__clear(&c->tables);
	free(c);
}

size_t py_codes__count(const struct py_codes *c)
{
	return c->entries.size;
}

void py_codes__held(const struct py_codes *c, struct py_codes_held *out)
{
	*out = c->held;
	out->limit = c->limit;
}

void py_codes__set_limit(struct py_codes *c, size_t bytes)
{
	c->limit = bytes;
}

/* Whether len more bytes fit the process's budget. */
static bool fits(const struct py_codes *c, size_t len)
{
	size_t held = c->held.name_bytes + c->held.table_bytes;

	return held <= c->limit && len <= c->limit - held;
}

/* The interned copy of s; NULL when out of memory or past the budget (*err says which). */
static const char *intern(struct py_codes *c, const char *s, int *err)
{
	size_t len = strlen(s);
	char *copy = hashmap__find(&c->strings, s);

	if (copy)
		return copy;
	if (!fits(c, len + 1)) {
		c->held.names_refused++;
		*err = -ENOSPC;
		return NULL;
	}
	copy = strdup(s);
	if (!copy || hashmap__add(&c->strings, copy, copy)) {
		free(copy);
		*err = -ENOMEM;
		return NULL;
	}
	c->held.name_bytes += len + 1;
	return copy;
}

/*
 * The interned copy of the line table in the bytes object at obj: read
 * whole each time (a bytes object freed and another at its address must
 * not lend its lines), kept once per content. NULL when unreadable, longer
 * than PY_LINETABLE_MAX, out of memory or past the budget (counted).
 */
static const struct line_table *intern_table(struct py_codes *c, uint64_t obj)
{
	struct line_table key, *t;

	if (py_bytes__read(c->pi.layout, c->mem, obj, c->pi.bytes_type, PY_LINETABLE_MAX,
			   &key.data, &key.len))
		return NULL;
	key.hash = hash_bytes(key.data, key.len, key.len);
	t = hashmap__find(&c->tables, &key);
	if (t) {
		free(key.data);
		return t;
	}
	if (!fits(c, key.len)) {
		c->held.tables_refused++;
		c->held.table_bytes_refused += key.len;
		free(key.data);
		return NULL;
	}
	t = malloc(sizeof(*t));
	if (t)
		*t = key;
	if (!t || hashmap__add(&c->tables, t, t)) {
		free(t);
		free(key.data);
		return NULL;
	}
	c->held.tables++;
	c->held.table_bytes += key.len;
	return t;
}

/*
 * Whether the reference count of the object at addr says it lives.
 * pymalloc keeps a freed block on its pool's list by a link in its first
 * word, where the count was: NULL, or another block of its pool (pools are
 * 4-16 KiB), usually above 4 GiB. A live count, even an immortal one
 * (3.12+), fits in 32 bits; bits 48-63 are 3.14's flags.
 */
static bool alive(uint64_t refcnt, uint64_t addr)
{
	return (uint32_t)refcnt != 0 && !(refcnt & 0x0000ffff00000000ULL) &&
	       (refcnt ^ addr) >= (1ULL << 20);
}

/* The header of the code object at code: its identity fields, and whether it lives. */
static int read_id(struct py_codes *c, uint64_t code, struct code_id *id, bool *live)
{
	uint8_t hdr[512];
	int err;

	if (c->hdr_len <= 0 || (size_t)c->hdr_len > sizeof(hdr))
		return -EINVAL;
	err = py_mem__read(c->mem, code, hdr, c->hdr_len);
	if (err)
		return err;
	memset(id, 0, sizeof(*id));
	id->type = py_u64(hdr, PY_OB_TYPE);
	id_fields(c->pi.layout, hdr, 0, id);
	*live = alive(py_u64(hdr, 0), code);
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
	ce->key = (struct code_key){ code, ident_of(id) };
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
	ce->table = intern_table(c, id->table);
	return 0;
}

static void fill_info(const struct py_codes *c, const struct code_entry *ce, uint64_t lasti,
		      struct py_code_info *info)
{
	int64_t addr = py_lines__addr(c->pi.layout, ce->key.addr, lasti);

	info->name = ce->name;
	info->file = ce->file;
	info->firstline = ce->id.firstline;
	info->line = ce->table ? py_lines__line(c->pi.layout, ce->table->data, ce->table->len,
						ce->id.firstline, addr) : 0;
	if (addr < 0 && ce->id.firstline > 0)
		info->line = ce->id.firstline;
	info->stale = false;
}

static bool same_id(const struct code_id *a, const struct code_id *b)
{
	return a->type == b->type && a->name == b->name && a->qualname == b->qualname &&
	       a->file == b->file && a->table == b->table && a->firstline == b->firstline &&
	       a->version == b->version;
}

static void drop(struct py_codes *c, struct code_entry *ce)
{
	hashmap__remove(&c->entries, &ce->key);
	free(ce);
}

bool py_codes__has(const struct py_codes *c, uint64_t code, uint64_t ident)
{
	struct code_key key = { code & ~(c->pi.layout->code_tag_bits | PY_FRAME_ENTRY), ident };

	return hashmap__find(&c->entries, &key) != NULL;
}

int py_codes__lookup(struct py_codes *c, uint64_t code, uint64_t ident, uint64_t lasti,
		     struct py_code_info *info)
{
	struct code_entry *ce;
	struct code_key key;
	struct code_id id;
	bool live = false;
	int err;

	code &= ~(c->pi.layout->code_tag_bits | PY_FRAME_ENTRY);
	err = read_id(c, code, &id, &live);
	if (err) {
		ce = hashmap__find(&c->entries, &(struct code_key){ code, ident });
		if (!ce || err == -EINVAL)
			return err;
		/* The process is gone or the object unmapped: what was read of it stands. */
		fill_info(c, ce, lasti, info);
		info->stale = true;
		return 0;
	}
	/* Not a code object now: garbage, or (a frame read with an identity) one since freed. */
	if (id.type != c->pi.code_type && !ident)
		return -EINVAL;
	key = (struct code_key){ code, ident_of(&id) };
	if (id.type != c->pi.code_type || !live || (ident && ident != key.ident)) {
		/*
		 * Not the object the frame ran: freed since (its fields still
		 * there, its strings maybe another's; or glibc's links over its
		 * head), or another in its memory. Only what was read of it
		 * while it lived names the frame.
		 */
		key.ident = ident ? ident : key.ident;
		ce = hashmap__find(&c->entries, &key);
		if (!ce)
			return -ESTALE;
		fill_info(c, ce, lasti, info);
		return 0;
	}
	ce = hashmap__find(&c->entries, &key);
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
		err = hashmap__add(&c->entries, &ce->key, ce);
	if (err) {
		free(ce);
		return err;
	}
	fill_info(c, ce, lasti, info);
	return 0;
}
