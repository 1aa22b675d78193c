// SPDX-License-Identifier: GPL-2.0
/*
 * The names of a table being built: string tables kept once in a pool and
 * referenced, the names that are not in one (demangled, "@plt", Go's)
 * copied within a budget, each ended at its first '@' and cut at
 * ELF_NAME_MAX bytes.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/demangle.h"
#include "core/sym/elfsym_internal.h"

/*
 * "_ZN2ns5ClassIlE6methodEv" -> "ns::Class<long>::method",
 * "_Z5twiceIlET_S0_" -> "ns::twice<long>": demangled, then without the
 * return type and the parameter list, as perf prints frames.
 */
char *elf_demangle(const char *name, size_t len)
{
	return demangle_cxx(name, len);
}

/* Append a name to the string pool; returns its offset or -1. */
long elf_symtab__pool_add(struct elf_symtab *st, const char *name, size_t len)
{
	long off;

	if (st->names_len + len + 1 > st->names_cap) {
		size_t ncap = (st->names_cap ? st->names_cap * 2 : 4096) + len + 1;
		char *tmp = realloc(st->names, ncap);

		if (!tmp)
			return -1;
		st->names = tmp;
		st->names_cap = ncap;
	}
	off = st->names_len;
	memcpy(st->names + off, name, len);
	st->names[off + len] = '\0';
	st->names_len += len + 1;
	return off;
}

static int push_symbol(struct elf_symtab *st, const struct elf_sym *sym, size_t name_off)
{
	if (st->nr_syms == st->syms_cap) {
		size_t ncap = st->syms_cap ? st->syms_cap * 2 : 1024;
		struct elf_sym *tmp = realloc(st->syms, ncap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		st->syms = tmp;
		st->syms_cap = ncap;
	}
	st->syms[st->nr_syms] = *sym;
	st->syms[st->nr_syms].name_off = name_off;
	st->nr_syms++;
	return 0;
}

/* Whether len more bytes of copied names fit the budget; counts the name cut if not. */
static bool may_copy(struct elf_symtab *st, size_t len)
{
	if (st->copied + len + 1 > st->copy_budget) {
		st->names_cut++;
		return false;
	}
	st->copied += len + 1;
	return true;
}

/* The demangled name of the mangled one (len bytes), at most ELF_NAME_MAX bytes; NULL if none. */
static char *demangle_bounded(const char *name, size_t len)
{
	char *demangled = elf_demangle(name, len);

	if (demangled && strlen(demangled) > ELF_NAME_MAX)
		demangled[ELF_NAME_MAX] = '\0';
	return demangled;
}

/* A symbol named name (len bytes, copied), demangled; suffix (or "") appended. */
int elf_symtab__add(struct elf_symtab *st, const char *name, size_t len, const char *suffix,
		    const struct elf_sym *sym)
{
	char *demangled = demangle_bounded(name, len);
	size_t suffix_len = strlen(suffix);
	long off;

	if (demangled) {
		name = demangled;
		len = strlen(demangled);
	}
	if (len > ELF_NAME_MAX)
		len = ELF_NAME_MAX;
	if (!may_copy(st, len + suffix_len)) {
		free(demangled);
		return 0;
	}
	off = elf_symtab__pool_add(st, name, len);
	free(demangled);
	if (off < 0)
		return -ENOMEM;
	if (suffix_len) {
		/* Written over the NUL: the two parts are one name. */
		st->names_len--;
		if (elf_symtab__pool_add(st, suffix, suffix_len) < 0)
			return -ENOMEM;
	}
	return push_symbol(st, sym, off);
}

/*
 * A symbol named by the string at off in the pool (a string table kept
 * there): referenced, not copied, unless demangling gives another name.
 */
int elf_symtab__add_ref(struct elf_symtab *st, size_t off, size_t len, const struct elf_sym *sym)
{
	char *demangled = demangle_bounded(st->names + off, len);
	long doff;

	if (!demangled)
		return push_symbol(st, sym, off);
	if (!may_copy(st, strlen(demangled))) {
		free(demangled);
		return push_symbol(st, sym, off);
	}
	doff = elf_symtab__pool_add(st, demangled, strlen(demangled));
	free(demangled);
	if (doff < 0)
		return -ENOMEM;
	return push_symbol(st, sym, doff);
}

/*
 * The name at off in the pool ends at its first '@' ("memcpy@GLIBC_2.14"
 * prints as "memcpy") and after ELF_NAME_MAX bytes: a NUL is written there,
 * in place. Names of other symbols that overlap it end there too, which is
 * what their own first '@' or cut would do to them, but for a cut name, which
 * only a hostile table has. cuts marks (one bit per byte of the table at
 * base) the NULs written for a cut, so that every name a cut ends is
 * counted. Returns the length.
 */
size_t elf_symtab__end_name(struct elf_symtab *st, size_t off, size_t base, unsigned char *cuts)
{
	char *name = st->names + off;
	size_t len = 0, at;

	while (len < ELF_NAME_MAX && name[len] && name[len] != '@')
		len++;
	at = off - base + len;
	if (name[len] == '@') {
		name[len] = '\0';
	} else if (name[len]) {
		name[len] = '\0';
		cuts[at / 8] |= (unsigned char)(1u << (at % 8));
		st->names_cut++;
	} else if (cuts[at / 8] & (1u << (at % 8))) {
		st->names_cut++;
	}
	return len;
}

/* Names are pointers into the pool only while it does not move. */
void elf_symtab__point_names(struct elf_symtab *st)
{
	for (size_t i = 0; i < st->nr_syms; i++)
		st->syms[i].name = st->names + st->syms[i].name_off;
}
