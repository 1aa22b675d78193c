// SPDX-License-Identifier: GPL-2.0
/*
 * The layout read here (Go's runtime/symtab.go, pcHeader and functab):
 *
 *   header  magic u32, pad u8 u8, minLC u8, ptrSize u8, nfunc, nfiles,
 *           [textStart: 1.18 on], funcnameOffset, cuOffset, filetabOffset,
 *           pctabOffset, pclnOffset (each ptrSize bytes, offsets from the
 *           header)
 *   functab at pclnOffset: nfunc pairs {entry, funcoff} and one more entry,
 *           the end of the last function; 1.18 on u32 offsets from
 *           textStart, before that ptrSize addresses
 *   _func   at pclnOffset + funcoff: entry (as above), nameOff i32 into the
 *           names at funcnameOffset, NUL-terminated
 */
#include "core/sym/gopclntab.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#define GO_1_16_MAGIC 0xfffffffau
#define GO_1_18_MAGIC 0xfffffff0u
#define GO_1_20_MAGIC 0xfffffff1u

struct table {
	const unsigned char *p;
	size_t size;
	unsigned int ptr;	/* 4 or 8 */
	unsigned int word;	/* the width of a functab field: 4 from 1.18 on, else ptr */
	bool relative;		/* 1.18 on: functab entries are offsets from text_start */
	uint64_t text_start;
	uint64_t nfunc;
	uint64_t names;		/* offset of the function names */
	uint64_t functab;	/* offset of functab (pclnOffset) */
};

/* The little-endian unsigned of width 4 or 8 at off, if it lies inside. */
static bool read_uint(const struct table *t, uint64_t off, unsigned int width, uint64_t *v)
{
	if (off > t->size || width > t->size - off)
		return false;
	if (width == 4) {
		uint32_t x;

		memcpy(&x, t->p + off, 4);
		*v = x;
	} else {
		memcpy(v, t->p + off, 8);
	}
	return true;
}

static int read_header(struct table *t, uint64_t text_addr)
{
	uint64_t magic, off = 8, fields[5];
	bool v118;

	if (!read_uint(t, 0, 4, &magic) || t->size < 8)
		return -ENOENT;
	if (magic != GO_1_16_MAGIC && magic != GO_1_18_MAGIC && magic != GO_1_20_MAGIC)
		return -ENOENT;
	if (t->p[4] || t->p[5] || (t->p[7] != 4 && t->p[7] != 8))
		return -ENOENT;
	v118 = magic != GO_1_16_MAGIC;
	t->ptr = t->p[7];
	t->word = v118 ? 4 : t->ptr;
	t->relative = v118;
	if (!read_uint(t, off, t->ptr, &t->nfunc))
		return -EINVAL;
	off += 2 * t->ptr;	/* nfunc, nfiles */
	t->text_start = 0;
	if (v118) {
		if (!read_uint(t, off, t->ptr, &t->text_start))
			return -EINVAL;
		off += t->ptr;
		if (!t->text_start)
			t->text_start = text_addr;	/* relocated at run time */
	}
	/* funcname, cu, filetab, pctab, pcln */
	for (int i = 0; i < 5; i++, off += t->ptr)
		if (!read_uint(t, off, t->ptr, &fields[i]))
			return -EINVAL;
	t->names = fields[0];
	t->functab = fields[4];
	if (t->names >= t->size || t->functab >= t->size || t->size - t->functab < t->word)
		return -EINVAL;
	/* nfunc pairs and one more entry must fit: the count bounds the loop. */
	if (t->nfunc > (t->size - t->functab - t->word) / (2 * t->word))
		return -EINVAL;
	return 0;
}

/* The address of functab entry i (i <= nfunc: the last is the end of the text). */
static bool entry_addr(const struct table *t, uint64_t i, uint64_t *addr)
{
	uint64_t v;

	if (!read_uint(t, t->functab + i * 2 * t->word, t->word, &v))
		return false;
	*addr = t->relative ? t->text_start + v : v;
	if (t->ptr == 4)
		*addr = (uint32_t)*addr;
	return true;
}

/* Function i's name: its _func record's nameOff into the names. */
static const char *func_name(const struct table *t, uint64_t i, size_t *len)
{
	uint64_t funcoff, rec, name_off;
	uint64_t raw;
	const char *name, *nul;
	int32_t off;

	if (!read_uint(t, t->functab + i * 2 * t->word + t->word, t->word, &funcoff))
		return NULL;
	rec = t->functab + funcoff;
	if (rec < t->functab || rec > t->size || !read_uint(t, rec + t->word, 4, &raw))
		return NULL;
	off = (int32_t)(uint32_t)raw;
	if (off < 0 || (uint64_t)off >= t->size - t->names)
		return NULL;
	name_off = t->names + (uint64_t)off;
	name = (const char *)t->p + name_off;
	nul = memchr(name, '\0', t->size - name_off);
	if (!nul || nul == name)
		return NULL;
	*len = (size_t)(nul - name);
	return name;
}

int go_pclntab__for_each(const void *data, size_t size, uint64_t text_addr, go_func_fn fn,
			 void *arg)
{
	struct table t = { .p = data, .size = size };
	uint64_t addr, end;
	int err, n = 0;

	if (!data)
		return -ENOENT;
	err = read_header(&t, text_addr);
	if (err)
		return err;
	if (!entry_addr(&t, 0, &addr))
		return -EINVAL;
	for (uint64_t i = 0; i < t.nfunc; i++, addr = end) {
		const char *name;
		size_t len;

		if (!entry_addr(&t, i + 1, &end))
			return -EINVAL;
		/* Out of order or empty: no range to name, the rest may still be good. */
		if (end <= addr)
			continue;
		name = func_name(&t, i, &len);
		if (!name)
			continue;
		err = fn(addr, end - addr, name, len, arg);
		if (err)
			return err;
		n++;
	}
	return n;
}
