// SPDX-License-Identifier: GPL-2.0
/*
 * Symbols by name, bytes by address and the soname of an ELF file that a
 * user controls: counts come from the data read, never from headers,
 * names are bounded by their string table, addresses by their section.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "interp/python/elfscan.h"
#include "interp/python/python.h"

/* Longest .rodata scanned for a version string: libpython's is a few MB. */
#define RODATA_SCAN_MAX (64UL << 20)

static bool name_matches(const struct py_sym_want *w, const char *name, size_t avail)
{
	size_t len = strlen(w->name);

	if (avail < len || memcmp(name, w->name, len))
		return false;
	return w->prefix || (avail > len && name[len] == '\0');
}

struct wanted_syms {
	struct py_sym_want *want;
	size_t n, found;
};

static int note_wanted(void *ctx, const GElf_Sym *sym, const char *name, size_t avail)
{
	struct wanted_syms *ws = ctx;

	for (size_t w = 0; w < ws->n; w++) {
		if (ws->want[w].found || !name_matches(&ws->want[w], name, avail))
			continue;
		ws->want[w].found = true;
		ws->want[w].value = sym->st_value;
		ws->want[w].size = sym->st_size;
		ws->found++;
	}
	return 0;
}

static size_t scan_table(Elf *elf, Elf_Scn *scn, struct py_sym_want *want, size_t n)
{
	struct wanted_syms ws = { want, n, 0 };

	elf_file__each_symbol(elf, scn, note_wanted, &ws);
	return ws.found;
}

size_t py_elf__symbols(Elf *elf, struct py_sym_want *want, size_t n)
{
	return py_elf__dynsyms(elf, want, n) +
	       scan_table(elf, elf_file__section(elf, SHT_SYMTAB, NULL), want, n);
}

size_t py_elf__dynsyms(Elf *elf, struct py_sym_want *want, size_t n)
{
	return scan_table(elf, elf_file__section(elf, SHT_DYNSYM, NULL), want, n);
}

int py_elf__read_vaddr(Elf *elf, uint64_t vaddr, void *buf, size_t len)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		uint64_t off;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    sh.sh_type == SHT_NOBITS || vaddr < sh.sh_addr || vaddr - sh.sh_addr >= sh.sh_size)
			continue;
		off = vaddr - sh.sh_addr;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || off > data->d_size || len > data->d_size - off)
			return -ENOENT;
		memcpy(buf, (const char *)data->d_buf + off, len);
		return 0;
	}
	return -ENOENT;
}

/* A number of 1-3 digits at s (within end): its value and the byte after it, or -1. */
static int small_number(const char *s, const char *end, const char **after)
{
	int v = 0, digits = 0;

	while (s < end && *s >= '0' && *s <= '9' && digits < 4) {
		v = v * 10 + (*s++ - '0');
		digits++;
	}
	*after = s;
	return digits && digits < 4 ? v : -1;
}

int py_elf__rodata_version(Elf *elf, int *major, int *minor, int *micro)
{
	Elf_Scn *scn = elf_file__section(elf, SHT_PROGBITS, ".rodata");
	Elf_Data *data = scn ? elf_getdata(scn, NULL) : NULL;
	const char *p, *end;
	int found = 0;

	if (!data || !data->d_buf)
		return -ENOENT;
	p = data->d_buf;
	end = p + (data->d_size < RODATA_SCAN_MAX ? data->d_size : RODATA_SCAN_MAX);
	for (; p < end; p++) {
		const char *q;
		int a, b, c;

		/* A string that starts with "2." or "3.", after a NUL. */
		if ((*p != '2' && *p != '3') || (p > (const char *)data->d_buf && p[-1]) ||
		    p + 1 >= end || p[1] != '.')
			continue;
		a = *p - '0';
		b = small_number(p + 2, end, &q);
		if (b < 0 || q >= end || *q != '.')
			continue;
		c = small_number(q + 1, end, &q);
		if (c < 0 || q >= end || *q || !py_layout__for_version(a, b))
			continue;
		if (found && (a != *major || b != *minor))
			return -ENOENT;
		*major = a;
		*minor = b;
		*micro = c;
		found = 1;
	}
	return found ? 0 : -ENOENT;
}

int py_elf__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias)
{
	size_t nr;

	if (elf_getphdrnum(elf, &nr))
		return -ENOEXEC;
	for (size_t i = 0; i < nr && i < 256; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		/* The segment the mapping's first page belongs to (its offset page-aligned down). */
		if (pgoff >= (ph.p_offset & ~4095ULL) && pgoff < ph.p_offset + ph.p_filesz) {
			*bias = start - pgoff - ((ph.p_vaddr & ~4095ULL) - (ph.p_offset & ~4095ULL));
			return 0;
		}
	}
	return -ENOENT;
}
