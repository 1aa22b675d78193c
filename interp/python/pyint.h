/* SPDX-License-Identifier: GPL-2.0 */
/* What the rooms of interp/python share and nobody else calls. */
#ifndef INTERP_PYTHON_PYINT_H
#define INTERP_PYTHON_PYINT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "interp/python/python.h"

/* Little-endian fields of a buffer read from the process (x86-64). */
static inline uint64_t py_u64(const void *buf, size_t off)
{
	uint64_t v;

	memcpy(&v, (const uint8_t *)buf + off, sizeof(v));
	return v;
}

static inline uint32_t py_u32(const void *buf, size_t off)
{
	uint32_t v;

	memcpy(&v, (const uint8_t *)buf + off, sizeof(v));
	return v;
}

/* One pointer-sized word of the process. */
static inline int py_read_u64(const struct py_mem *mem, uint64_t addr, uint64_t *v)
{
	return py_mem__read(mem, addr, v, sizeof(*v));
}

/*
 * The identity (PY_CODE_IDENT) of the code object at code, read as the
 * in-kernel walk reads it (the same bytes). 0, or the reader's error
 * (*ident 0).
 */
int py_code__ident(const struct py_layout *l, const struct py_mem *mem, uint64_t code,
		   uint64_t *ident);

/* The end of the furthest of n field offsets (-1: absent) of size bytes each. */
int32_t py_fields_end(const int32_t *offs, size_t n, int32_t size);

/*
 * The text of the str object at obj (PEP 393 unicode, or 2.7's str) as
 * valid UTF-8 into out (at most out_len - 1 bytes, cut at a character,
 * NUL-terminated): bad characters and NULs become U+FFFD. type, when not 0,
 * must be the object's ob_type. 0, -EINVAL for an object that is not such a
 * string, or the reader's error.
 */
int py_str__read(const struct py_layout *l, const struct py_mem *mem, uint64_t obj,
		 uint64_t type, char *out, size_t out_len);

/*
 * The bytes of a bytes object (2.7: str) at obj, at most max: a buffer to
 * free and its length. type as for py_str__read. -E2BIG when it holds more.
 */
int py_bytes__read(const struct py_layout *l, const struct py_mem *mem, uint64_t obj,
		   uint64_t type, size_t max, uint8_t **data, size_t *len);

/*
 * The line of byte offset addr in a code object's line table, as
 * PyCode_Addr2Line computes it: -1 when the table says no line or ends
 * before addr. A negative addr (a frame just pushed) is the first line.
 */
int py_lines__lnotab(const uint8_t *t, size_t len, int firstline, int64_t addr,
		     bool signed_delta);
int py_lines__linetable310(const uint8_t *t, size_t len, int firstline, int64_t addr);
int py_lines__locations(const uint8_t *t, size_t len, int firstline, int64_t addr);
/* The byte offset a frame's lasti stands for in l's units, given its code object (-1: none). */
int64_t py_lines__addr(const struct py_layout *l, uint64_t code, uint64_t lasti);
/* py_lines__* by l's kind: the line, 0 when unknown. */
int py_lines__line(const struct py_layout *l, const uint8_t *t, size_t len, int firstline,
		   int64_t addr);

#endif
