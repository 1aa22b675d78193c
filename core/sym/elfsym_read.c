// SPDX-License-Identifier: GPL-2.0
/*
 * What a file says about its functions, appended to the list being built:
 * the entries of .symtab or .dynsym (with the labels of hand-written code),
 * the section ranges and load segments that place them, PLT stubs as
 * "name@plt", and a stripped Go binary's own function table.
 */
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfplt.h"
#include "core/sym/elfsym_internal.h"
#include "core/sym/gopclntab.h"

/*
 * Address ranges of allocated sections: a symbol without a size ends with its
 * section, and a label counts only in code. Those of the file the symbols
 * come from (a debug file keeps the headers, without the contents).
 */
int elf_symtab__read_sections(Elf *elf, struct elf_symtab *st)
{
	size_t shnum;
	Elf_Scn *scn = NULL;

	free(st->sections);
	st->sections = NULL;
	st->nr_sections = 0;
	if (elf_getshdrnum(elf, &shnum))
		return -EINVAL;
	st->sections = calloc(shnum ? shnum : 1, sizeof(*st->sections));
	if (!st->sections)
		return -ENOMEM;
	st->nr_sections = shnum;
	while ((scn = elf_nextscn(elf, scn))) {
		size_t idx = elf_ndxscn(scn);
		struct section_range *r;
		GElf_Shdr sh;

		if (idx >= shnum || !gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC))
			continue;
		r = &st->sections[idx];
		r->start = sh.sh_addr;
		r->end = sh.sh_addr + sh.sh_size;
		if (r->end < r->start)
			r->end = UINT64_MAX;
		r->exec = sh.sh_flags & SHF_EXECINSTR;
	}
	return 0;
}

int elf_symtab__read_segments(Elf *elf, struct elf_symtab *st)
{
	size_t phnum;

	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	st->segs = calloc(phnum ? phnum : 1, sizeof(*st->segs));
	if (!st->segs)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		st->segs[st->nr_segs++] = (struct load_segment){
			.offset = ph.p_offset, .vaddr = ph.p_vaddr, .filesz = ph.p_filesz };
	}
	return 0;
}

/*
 * Untyped labels of hand-written assembly (_start in ld.so, openssl's
 * routines), as perf takes them: in code, not hidden, and not the noise of
 * mapping symbols ($x, $d) or assembler-local labels (.L).
 */
static bool is_code_label(const struct elf_symtab *st, const GElf_Sym *sym, const char *name)
{
	const struct section_range *r;

	if (sym->st_shndx == SHN_UNDEF || sym->st_shndx >= st->nr_sections ||
	    GELF_ST_VISIBILITY(sym->st_other) == STV_HIDDEN ||
	    GELF_ST_VISIBILITY(sym->st_other) == STV_INTERNAL || name[0] == '$' ||
	    !strncmp(name, ".L", 2))
		return false;
	r = &st->sections[sym->st_shndx];
	/* A label at the section's end (_etext) labels nothing. */
	return r->exec && sym->st_value >= r->start && sym->st_value < r->end;
}

int elf_symtab__read_symbols(Elf *elf, Elf_Scn *scn, struct elf_symtab *st)
{
	size_t nr, sym_size = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *data, *strs;
	unsigned char *cuts;
	Elf_Scn *str_scn;
	GElf_Shdr sh;
	long base;
	int err;

	if (!gelf_getshdr(scn, &sh) || !sym_size)
		return -EINVAL;
	err = elf_symtab__read_sections(elf, st);
	if (err)
		return err;
	data = elf_getdata(scn, NULL);
	if (!data)
		return -EINVAL;
	str_scn = elf_getscn(elf, sh.sh_link);
	strs = str_scn ? elf_getdata(str_scn, NULL) : NULL;
	if (!strs || !strs->d_buf || !strs->d_size)
		return 0;
	/* The string table once (a NUL after it): names are offsets into it. */
	base = elf_symtab__pool_add(st, strs->d_buf, strs->d_size);
	cuts = calloc(strs->d_size / 8 + 1, 1);
	if (base < 0 || !cuts) {
		free(cuts);
		return -ENOMEM;
	}
	/* The count from the data read, not from a header that can say anything. */
	nr = data->d_buf ? data->d_size / sym_size : 0;
	for (size_t i = 0; i < nr; i++) {
		struct elf_sym s = { 0 };
		size_t name_off, len;
		GElf_Sym sym;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			break;
		type = GELF_ST_TYPE(sym.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (sym.st_shndx == SHN_UNDEF || !sym.st_value || sym.st_name >= strs->d_size)
			continue;
		name_off = base + sym.st_name;
		len = elf_symtab__end_name(st, name_off, (size_t)base, cuts);
		if (!len)
			continue;
		if (type == STT_NOTYPE) {
			if (!is_code_label(st, &sym, st->names + name_off))
				continue;
			s.flags |= SYM_UNTYPED;
		}
		s.addr = sym.st_value;
		s.size = type == STT_NOTYPE ? 0 : sym.st_size;
		s.shndx = sym.st_shndx < SHN_LORESERVE ? sym.st_shndx : 0;
		if (GELF_ST_BIND(sym.st_info) != STB_LOCAL)
			s.flags |= SYM_GLOBAL;
		if (type == STT_GNU_IFUNC)
			s.flags |= SYM_IFUNC;
		err = elf_symtab__add_ref(st, name_off, len, &s);
		if (err)
			break;
	}
	free(cuts);
	return err;
}

/* The IFUNC that a resolver at addr resolves (its symbol's value): the best of syms[0, nr). */
static const struct elf_sym *ifunc_at(struct elf_symtab *st, size_t nr, uint64_t addr)
{
	const struct elf_sym *best = NULL;
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->syms[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < nr && st->syms[i].addr == addr; i++) {
		struct elf_sym *s = &st->syms[i];

		/* The pool may have moved since the names were pointed. */
		s->name = st->names + s->name_off;
		if ((s->flags & SYM_IFUNC) && (!best || elf_sym__cmp_alias(s, best) < 0))
			best = s;
	}
	return best;
}

struct plt_ctx {
	struct elf_symtab *st;
	size_t nr_sorted;	/* the symbol table's symbols, sorted, aliases kept */
};

static int add_plt_stub(const struct plt_stub *stub, void *arg)
{
	struct plt_ctx *ctx = arg;
	struct elf_symtab *st = ctx->st;
	struct elf_sym s = { .addr = stub->addr, .size = stub->size, .flags = SYM_GLOBAL };
	const struct elf_sym *ifunc;
	char name[1024];

	if (stub->name)
		return elf_symtab__add(st, stub->name, strcspn(stub->name, "@"), "@plt", &s);
	/* An IFUNC called inside its own file (libc's memcpy): named by its symbol, if known. */
	ifunc = ifunc_at(st, ctx->nr_sorted, stub->resolver);
	if (!ifunc)
		return 0;
	/* Copied: adding the stub's name can move the pool it is in. */
	snprintf(name, sizeof(name), "%s", st->names + ifunc->name_off);
	return elf_symtab__add(st, name, strlen(name), "@plt", &s);
}

/*
 * PLT stubs as "name@plt": from the file itself (a debug file has no code),
 * looked up among its symbols for IFUNCs, before aliases are dropped.
 */
int elf_symtab__add_plt(Elf *elf, struct elf_symtab *st)
{
	struct plt_ctx ctx = { st, st->nr_syms };
	int n;

	elf_symtab__point_names(st);
	if (st->nr_syms)
		qsort(st->syms, st->nr_syms, sizeof(*st->syms), elf_sym__cmp);
	n = elf_plt__for_each(elf, add_plt_stub, &ctx);
	return n < 0 ? n : 0;
}

static int add_go_func(uint64_t addr, uint64_t size, const char *name, size_t len, void *arg)
{
	struct elf_sym s = { .addr = addr, .size = size, .flags = SYM_GLOBAL };

	return elf_symtab__add(arg, name, len, "", &s);
}

/*
 * A Go binary without symbols (Debian strips its Go programs): the names
 * its runtime symbolizes with, from .gopclntab. Not found is not an error.
 */
int elf_symtab__add_go(Elf *elf, struct elf_symtab *st)
{
	Elf_Scn *scn = elf_file__section(elf, SHT_PROGBITS, ".gopclntab");
	Elf_Scn *text = elf_file__section(elf, SHT_PROGBITS, ".text");
	GElf_Shdr text_sh;
	Elf_Data *data;
	int n;

	if (!scn || !(data = elf_getdata(scn, NULL)) || !data->d_buf)
		return 0;
	if (!text || !gelf_getshdr(text, &text_sh))
		text_sh.sh_addr = 0;
	n = go_pclntab__for_each(data->d_buf, data->d_size, text_sh.sh_addr, add_go_func, st);
	if (n == -ENOMEM)
		return n;
	if (n > 0)
		st->source = ELF_SYM_GOPCLNTAB;
	return 0;
}
