/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of interp/node share and nobody else calls. */
#ifndef INTERP_NODE_NODEINT_H
#define INTERP_NODE_NODEINT_H

#include "interp/node/node.h"

/*
 * The int32 constants an ELF file defines under the names a Node binary
 * carries (every v8dbg_*, V8's Version::*_), read from .dynsym and, when
 * asked, .symtab. Names point into the file's string tables: valid while
 * its Elf is open.
 */
struct node_consts {
	struct node_const {
		const char *name;
		int32_t value;
		uint32_t order;		/* .dynsym before .symtab, first definition wins */
	} *v;
	size_t nr, cap;
	bool symtab_read;
	bool has_register;	/* node_module_register: the addon ABI only Node exports */
};

/* More than any Node has (531 in Node 20): a file with more is not believed past them. */
#define NODE_MAX_CONSTS 4096

/* Reads .dynsym (symtab: also .symtab) into c: 0, -ENOMEM. Call node_consts__free after. */
int node_consts__read(Elf *elf, struct node_consts *c, bool symtab);
void node_consts__free(struct node_consts *c);
/* The value of name: true and *v, or false. */
bool node_consts__get(const struct node_consts *c, const char *name, int32_t *v);

/* Node's version from the strings of .rodata that name it: 0, or -ENOENT (none, or they disagree). */
int node_elf__rodata_version(Elf *elf, int *major, int *minor, int *patch);
/* Whether DT_SONAME starts with "libnode.so". */
bool node_elf__is_libnode(Elf *elf);

/* Fills l from c for V8 major.minor.build: 0, or -ENOTSUP with why (the fields missing). */
int node_v8_layout__fill(struct node_v8_layout *l, const struct node_consts *c, int major,
			 int minor, int build, struct errmsg *why);

/* ---- heap.c: tagged values and heap objects of a process ---- */

static inline bool node_is_heap(const struct node_v8_layout *l, uint64_t v)
{
	return (v & (uint64_t)l->heap_object_tag_mask) == (uint64_t)l->heap_object_tag &&
	       v >= 4096;
}

static inline bool node_is_smi(const struct node_v8_layout *l, uint64_t v)
{
	return (v & (uint64_t)l->smi_tag_mask) == (uint64_t)l->smi_tag;
}

/* A Smi's value (64-bit V8: the high 32 bits). */
static inline int64_t node_smi_value(const struct node_v8_layout *l, uint64_t v)
{
	return (int64_t)v >> (l->smi_shift_size + l->smi_value_shift);
}

/* The untagged address of field off of the tagged object obj. */
static inline uint64_t node_field(const struct node_v8_layout *l, uint64_t obj, int32_t off)
{
	return obj - (uint64_t)l->heap_object_tag + (uint64_t)(int64_t)off;
}

/* One 8-byte word at addr: 0 or the reader's error. */
int node_read_word(const struct node_mem *mem, uint64_t addr, uint64_t *w);
/* The word in field off of the tagged object obj. */
int node_read_field(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t obj,
		    int32_t off, uint64_t *w);
/*
 * The instance type of the tagged value v: 0 with *type, -EINVAL when v is
 * not a heap object (or its map is not one), or the reader's error.
 */
int node_obj_type(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		  uint16_t *type);
/* Whether v is a heap object of instance type want (false when unreadable). */
bool node_obj_is(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		 int32_t want);
/*
 * The bytes of a (Trusted)ByteArray v, at most max: 0 with *len, -EINVAL
 * when v is not one, -E2BIG when longer than max, or the reader's error.
 */
int node_byte_array(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		    uint8_t *buf, size_t max, size_t *len);

/* ---- strings.c: V8 strings ---- */

/* Cons strings and slices followed for one string at most; deeper ones fail (-ELOOP). */
#define NODE_STR_MAX_PARTS 256

/*
 * Calls emit with the code units [start, start + count) of the string v in
 * order, in chunks (one-byte: units8, two-byte: units16; the other NULL),
 * at most max units in all; emit returns nonzero to stop (then that is
 * returned). Sequential, cons, thin and sliced strings; external ones are
 * -ENOTSUP. 0, -EINVAL (not a string), -ELOOP, or the reader's error.
 */
typedef int (*node_str_emit)(void *ctx, const uint8_t *units8, const uint16_t *units16,
			     size_t n);
int node_str_units(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		   size_t max, node_str_emit emit, void *ctx);
/* The length of the string v in code units: 0, -EINVAL, or the reader's error. */
int node_str_length(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		    uint32_t *len);
/*
 * The string v as valid UTF-8 in buf (cap bytes, NUL-terminated, cut at a
 * character boundary when longer; lone surrogates and NUL as U+FFFD).
 * 0, or as node_str_units.
 */
int node_str_utf8(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		  char *buf, size_t cap);

/* ---- positions.c: source positions and lines ---- */

/* Longest source position table read. */
#define NODE_POSITIONS_MAX (256 * 1024)

/*
 * The source position of code offset off in V8's source position table
 * (table, len bytes: pairs of zigzag VLQs, code offset and position deltas
 * from (-1, 0), a negative code delta marking a statement): the position of
 * the last entry at or before off. 0 with *script_offset (the character
 * offset in the script, -1 for none) and *inlined (the inlining id, 0: not
 * inlined); -ENOENT when no entry is at or before off, -EINVAL for a table
 * that does not decode.
 */
int node_position_at(const uint8_t *table, size_t len, int64_t off, int64_t *script_offset,
		     unsigned int *inlined);
/*
 * The 1-based line of character offset pos of the Script script: from its
 * line_ends (a FixedArray of Smis) when V8 built them, else by counting
 * newlines of its source (NODE_SOURCE_MAX code units at most). 0 with
 * *line, -ENOENT (neither can be read), or the reader's error.
 */
int node_script_line(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t script,
		     int64_t pos, int *line);

#endif
