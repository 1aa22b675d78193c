// SPDX-License-Identifier: GPL-2.0
/*
 * The list read from a file made the table lookups search: one symbol per
 * address (the best of its aliases), sizes bounded by the next symbol, and
 * 16-byte entries over a pool of only the names they use.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/elfsym_internal.h"

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/*
 * Aliases: prefer a typed symbol to a label, then a sized one, then a
 * global one, then the plainest name ("read" over "__libc_read"), then the
 * first by name.
 */
int elf_sym__cmp_alias(const struct elf_sym *x, const struct elf_sym *y)
{
	size_t ux, uy;

	if ((x->flags & SYM_UNTYPED) != (y->flags & SYM_UNTYPED))
		return x->flags & SYM_UNTYPED ? 1 : -1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if ((x->flags & SYM_GLOBAL) != (y->flags & SYM_GLOBAL))
		return x->flags & SYM_GLOBAL ? -1 : 1;
	ux = leading_underscores(x->name);
	uy = leading_underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	return strcmp(x->name, y->name);
}

int elf_sym__cmp(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return elf_sym__cmp_alias(x, y);
}

/* One symbol per address; an alias starting with prefer (if any) wins. */
void elf_symtab__sort(struct elf_symtab *st, const char *prefer)
{
	size_t out = 0;

	elf_symtab__point_names(st);
	if (st->nr_syms)
		qsort(st->syms, st->nr_syms, sizeof(*st->syms), elf_sym__cmp);
	for (size_t i = 0; i < st->nr_syms; i++) {
		if (!out || st->syms[out - 1].addr != st->syms[i].addr)
			st->syms[out++] = st->syms[i];
		else if (prefer && !strncmp(st->syms[i].name, prefer, strlen(prefer)) &&
			 strncmp(st->syms[out - 1].name, prefer, strlen(prefer)))
			st->syms[out - 1] = st->syms[i];
	}
	st->nr_syms = out;
}

/*
 * Symbols without a size (labels, asm functions without .size) extend to
 * the next symbol, within their section. A label inside a sized function is
 * not a function of its own: the function keeps its name there.
 */
void elf_symtab__bound(struct elf_symtab *st)
{
	uint64_t covered = 0;	/* end of the sized typed symbols seen so far */
	size_t out = 0;

	for (size_t i = 0; i < st->nr_syms; i++) {
		struct elf_sym *s = &st->syms[i];

		if ((s->flags & SYM_UNTYPED) && s->addr < covered)
			continue;
		if (!(s->flags & SYM_UNTYPED) && s->size)
			covered = s->addr + s->size < s->addr ? UINT64_MAX :
				  (s->addr + s->size > covered ? s->addr + s->size : covered);
		st->syms[out++] = *s;
	}
	st->nr_syms = out;
	for (size_t i = 0; i < st->nr_syms; i++) {
		struct elf_sym *s = &st->syms[i];
		const struct section_range *r;
		uint64_t end;

		if (s->size || !s->shndx || s->shndx >= st->nr_sections)
			continue;
		r = &st->sections[s->shndx];
		if (s->addr < r->start || s->addr >= r->end)
			continue;
		end = r->end;
		if (i + 1 < st->nr_syms && st->syms[i + 1].addr < end)
			end = st->syms[i + 1].addr;
		s->size = end - s->addr;
	}
}

/*
 * The loaded symbols as lookups need them: the table, and a string pool of
 * only the names it uses, where that is smaller than the pool it has (the
 * string tables whole, and copies: most names of a table are of objects
 * and aliases, dropped); a pool of names that overlap, as a hostile table
 * makes them, is kept as it is. No slack is left in either.
 */
int elf_symtab__compact(struct elf_symtab *st)
{
	size_t need = 0, at = 0;
	char *names = NULL;

	for (size_t i = 0; i < st->nr_syms; i++)
		need += strlen(st->names + st->syms[i].name_off) + 1;
	if (need < st->names_len) {
		names = malloc(need ? need : 1);
		if (!names)
			return -ENOMEM;
	} else if (st->names_len > UINT32_MAX) {
		return -EFBIG;	/* offsets are 32-bit: a 4 GiB pool is no symbol table */
	}
	st->table = malloc((st->nr_syms ? st->nr_syms : 1) * sizeof(*st->table));
	if (!st->table) {
		free(names);
		return -ENOMEM;
	}
	for (size_t i = 0; i < st->nr_syms; i++) {
		const struct elf_sym *s = &st->syms[i];
		struct sym_entry *e = &st->table[i];

		e->addr = s->addr;
		e->size = s->size < UINT32_MAX ? (uint32_t)s->size : UINT32_MAX;
		if (names) {
			size_t len = strlen(st->names + s->name_off) + 1;

			memcpy(names + at, st->names + s->name_off, len);
			e->name = (uint32_t)at;
			at += len;
		} else {
			e->name = (uint32_t)s->name_off;
		}
	}
	if (names) {
		free(st->names);
		st->names = names;
		st->names_len = st->names_cap = need;
	} else if (st->names_len < st->names_cap) {
		char *tmp = realloc(st->names, st->names_len ? st->names_len : 1);

		if (tmp) {
			st->names = tmp;
			st->names_cap = st->names_len;
		}
	}
	free(st->syms);
	st->syms = NULL;
	st->syms_cap = 0;
	free(st->sections);
	st->sections = NULL;
	st->nr_sections = 0;
	return 0;
}
