// SPDX-License-Identifier: GPL-2.0
#include "core/sym/elfsym.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "core/sym/debugfile.h"
#include "core/sym/demangle.h"
#include "core/sym/elfplt.h"
#include "core/sym/gopclntab.h"
#include "core/lib/log.h"

/*
 * Longest symbol name kept, in bytes (the kernel's KSYM_NAME_LEN is 512; the
 * longest C++ and Rust names seen in Debian are a few KB): a longer one is
 * cut, as a name running on through a hostile string table would be.
 */
#define ELF_NAME_MAX 4096
/*
 * Names that are not in a string table (demangled, "@plt", Go's) are copied:
 * at most this plus twice the file's size in all, so that thousands of
 * symbols naming one long string cannot each cost a copy of it.
 */
#define ELF_COPY_MIN (4UL << 20)

enum {
	SYM_GLOBAL = 1,		/* global or weak */
	SYM_UNTYPED = 2,	/* an assembler label: STT_NOTYPE, no size */
	SYM_IFUNC = 4,
};

struct elf_sym {
	uint64_t addr;
	uint64_t size;		/* as stated, then up to the next symbol for those without */
	const char *name;	/* points into names, once they stop moving */
	size_t name_off;
	uint32_t shndx;		/* section, to bound symbols without a size */
	unsigned int flags;
};

struct section_range {
	uint64_t start, end;
	bool exec;
};

struct load_segment {
	uint64_t offset;
	uint64_t vaddr;
	uint64_t filesz;
};

/*
 * A symbol as lookups need it, once the table is built: 16 bytes, where
 * the 40 of struct elf_sym served to build it (a busy host's profile holds
 * the tables of every binary it saw: cc1, libLLVM, qemu, ...).
 */
struct sym_entry {
	uint64_t addr;
	uint32_t size;		/* capped at 4 GiB - 1, which no function reaches */
	uint32_t name;		/* offset into names */
};

struct elf_symtab {
	struct elf_sym *syms;	/* while loading: sorted by addr, one per address */
	size_t nr_syms, syms_cap;
	struct sym_entry *table;	/* once loaded: what syms became */
	char *names;		/* string tables, kept once, then names that are copies */
	size_t names_len, names_cap;
	size_t copied, copy_budget;	/* bytes of names copied, and the most allowed */
	size_t names_cut;	/* names cut at ELF_NAME_MAX or not copied past the budget */
	struct load_segment *segs;
	size_t nr_segs;
	struct section_range *sections;	/* by section index */
	size_t nr_sections;
	char build_id[130];		/* hex, "" if none */
	enum elf_sym_source source;
	bool debug_of_other_build;	/* the debug files found were another build's: ignored */
};

/*
 * "_ZN2ns5ClassIlE6methodEv" -> "ns::Class<long>::method",
 * "_Z5twiceIlET_S0_" -> "ns::twice<long>": demangled, then without the
 * return type and the parameter list, as perf prints frames.
 */
char *elf_demangle(const char *name, size_t len)
{
	return demangle_cxx(name, len);
}

/*
 * Address ranges of allocated sections: a symbol without a size ends with its
 * section, and a label counts only in code. Those of the file the symbols
 * come from (a debug file keeps the headers, without the contents).
 */
static int read_sections(Elf *elf, struct elf_symtab *st)
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

static int read_segments(Elf *elf, struct elf_symtab *st)
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

/* Append a name to the string pool; returns its offset or -1. */
static long pool_add(struct elf_symtab *st, const char *name, size_t len)
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
static int add_symbol(struct elf_symtab *st, const char *name, size_t len, const char *suffix,
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
	off = pool_add(st, name, len);
	free(demangled);
	if (off < 0)
		return -ENOMEM;
	if (suffix_len) {
		/* Written over the NUL: the two parts are one name. */
		st->names_len--;
		if (pool_add(st, suffix, suffix_len) < 0)
			return -ENOMEM;
	}
	return push_symbol(st, sym, off);
}

/*
 * A symbol named by the string at off in the pool (a string table kept
 * there): referenced, not copied, unless demangling gives another name.
 */
static int add_symbol_ref(struct elf_symtab *st, size_t off, size_t len, const struct elf_sym *sym)
{
	char *demangled = demangle_bounded(st->names + off, len);
	long doff;

	if (!demangled)
		return push_symbol(st, sym, off);
	if (!may_copy(st, strlen(demangled))) {
		free(demangled);
		return push_symbol(st, sym, off);
	}
	doff = pool_add(st, demangled, strlen(demangled));
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
static size_t end_name(struct elf_symtab *st, size_t off, size_t base, unsigned char *cuts)
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
static void point_names(struct elf_symtab *st)
{
	for (size_t i = 0; i < st->nr_syms; i++)
		st->syms[i].name = st->names + st->syms[i].name_off;
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

static int read_symbols(Elf *elf, Elf_Scn *scn, struct elf_symtab *st)
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
	err = read_sections(elf, st);
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
	base = pool_add(st, strs->d_buf, strs->d_size);
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
		len = end_name(st, name_off, (size_t)base, cuts);
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
		err = add_symbol_ref(st, name_off, len, &s);
		if (err)
			break;
	}
	free(cuts);
	return err;
}

static size_t leading_underscores(const char *s)
{
	return strspn(s, "_");
}

/*
 * Aliases: prefer a typed symbol to a label, then a sized one, then a
 * global one, then the plainest name ("read" over "__libc_read"), then the
 * first by name.
 */
static int cmp_alias(const struct elf_sym *x, const struct elf_sym *y)
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

static int cmp_sym(const void *a, const void *b)
{
	const struct elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return cmp_alias(x, y);
}

/* One symbol per address; an alias starting with prefer (if any) wins. */
static void sort_symbols(struct elf_symtab *st, const char *prefer)
{
	size_t out = 0;

	point_names(st);
	if (st->nr_syms)
		qsort(st->syms, st->nr_syms, sizeof(*st->syms), cmp_sym);
	for (size_t i = 0; i < st->nr_syms; i++) {
		if (!out || st->syms[out - 1].addr != st->syms[i].addr)
			st->syms[out++] = st->syms[i];
		else if (prefer && !strncmp(st->syms[i].name, prefer, strlen(prefer)) &&
			 strncmp(st->syms[out - 1].name, prefer, strlen(prefer)))
			st->syms[out - 1] = st->syms[i];
	}
	st->nr_syms = out;
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
		if ((s->flags & SYM_IFUNC) && (!best || cmp_alias(s, best) < 0))
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
		return add_symbol(st, stub->name, strcspn(stub->name, "@"), "@plt", &s);
	/* An IFUNC called inside its own file (libc's memcpy): named by its symbol, if known. */
	ifunc = ifunc_at(st, ctx->nr_sorted, stub->resolver);
	if (!ifunc)
		return 0;
	/* Copied: adding the stub's name can move the pool it is in. */
	snprintf(name, sizeof(name), "%s", st->names + ifunc->name_off);
	return add_symbol(st, name, strlen(name), "@plt", &s);
}

/*
 * PLT stubs as "name@plt": from the file itself (a debug file has no code),
 * looked up among its symbols for IFUNCs, before aliases are dropped.
 */
static int add_plt_symbols(Elf *elf, struct elf_symtab *st)
{
	struct plt_ctx ctx = { st, st->nr_syms };
	int n;

	point_names(st);
	if (st->nr_syms)
		qsort(st->syms, st->nr_syms, sizeof(*st->syms), cmp_sym);
	n = elf_plt__for_each(elf, add_plt_stub, &ctx);
	return n < 0 ? n : 0;
}

/*
 * Symbols without a size (labels, asm functions without .size) extend to
 * the next symbol, within their section. A label inside a sized function is
 * not a function of its own: the function keeps its name there.
 */
static void bound_symbols(struct elf_symtab *st)
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

static int add_go_func(uint64_t addr, uint64_t size, const char *name, size_t len, void *arg)
{
	struct elf_sym s = { .addr = addr, .size = size, .flags = SYM_GLOBAL };

	return add_symbol(arg, name, len, "", &s);
}

/*
 * A Go binary without symbols (Debian strips its Go programs): the names
 * its runtime symbolizes with, from .gopclntab. Not found is not an error.
 */
static int add_go_symbols(Elf *elf, struct elf_symtab *st)
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

static int load_from_debug_file(Elf *elf, int self_fd, const char *path, struct elf_symtab *st)
{
	char debug_path[PATH_MAX];
	enum elf_sym_source src;
	struct elf_file h;
	size_t budget;
	struct stat sb;
	Elf_Scn *scn;
	int err;

	err = elf_file__open_debug(elf, self_fd, st->build_id, path, debug_path,
				   sizeof(debug_path), &src, &h);
	if (err) {
		st->debug_of_other_build = err == -ESTALE;
		return -ENOENT;
	}
	err = -ENOENT;
	budget = st->copy_budget;
	if (!fstat(h.fd, &sb))
		st->copy_budget += 2 * (size_t)sb.st_size;
	scn = elf_file__section(h.elf, SHT_SYMTAB, NULL);
	if (scn) {
		err = read_symbols(h.elf, scn, st);
		if (!err)
			st->source = src;
	}
	elf_file__close(&h);
	/* A debug file that cannot be read is as good as none: .dynsym then. */
	if (err && err != -ENOMEM) {
		st->nr_syms = 0;
		st->names_len = 0;
		st->copied = 0;
		st->names_cut = 0;
		st->copy_budget = budget;
		err = -ENOENT;
	}
	return err;
}

/*
 * The loaded symbols as lookups need them: the table, and a string pool of
 * only the names it uses, where that is smaller than the pool it has (the
 * string tables whole, and copies: most names of a table are of objects
 * and aliases, dropped); a pool of names that overlap, as a hostile table
 * makes them, is kept as it is. No slack is left in either.
 */
static int compact(struct elf_symtab *st)
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

static struct elf_symtab *load_elf(Elf *elf, int self_fd, size_t file_size, const char *path,
				   const char *prefer)
{
	struct elf_symtab *st = calloc(1, sizeof(*st));
	Elf_Scn *scn;
	int err;

	if (!st) {
		errno = ENOMEM;
		return NULL;
	}
	st->copy_budget = ELF_COPY_MIN + 2 * file_size;
	err = read_segments(elf, st);
	if (err)
		goto err_out;
	if (!elf_file__build_id(elf, st->build_id, sizeof(st->build_id)))
		st->build_id[0] = '\0';

	scn = elf_file__section(elf, SHT_SYMTAB, NULL);
	if (scn) {
		err = read_symbols(elf, scn, st);
		st->source = ELF_SYM_SYMTAB;
	} else {
		err = load_from_debug_file(elf, self_fd, path, st);
		if (err == -ENOENT) {
			scn = elf_file__section(elf, SHT_DYNSYM, NULL);
			err = scn ? read_symbols(elf, scn, st) : read_sections(elf, st);
			st->source = scn ? ELF_SYM_DYNSYM : ELF_SYM_NONE;
			if (!err)	/* .dynsym has at most cgo's few */
				err = add_go_symbols(elf, st);
		}
	}
	if (!err)
		err = add_plt_symbols(elf, st);
	if (err)
		goto err_out;
	sort_symbols(st, prefer);
	bound_symbols(st);
	if (st->names_cut)
		pr_warn("warning: %s: %zu symbol names cut (over %d bytes, or past %zu bytes of copies)\n",
			path ? path : "[vdso]", st->names_cut, ELF_NAME_MAX, st->copy_budget);
	return st;

err_out:
	elf_symtab__free(st);
	errno = -err;
	return NULL;
}

/*
 * A loaded table made compact: after its ELF handle is gone, and libelf's
 * copies of the sections with it, which would otherwise still take their
 * memory while the compact copy is made. NULL (errno set) on failure.
 */
static struct elf_symtab *finish(struct elf_symtab *st)
{
	int err = st ? compact(st) : 0;

	if (err) {
		elf_symtab__free(st);
		errno = -err;
		return NULL;
	}
	return st;
}

struct elf_symtab *elf_symtab__load(const char *path)
{
	return elf_symtab__load_as(path, path);
}

struct elf_symtab *elf_symtab__load_as(const char *open_path, const char *path)
{
	struct elf_file h;
	struct elf_symtab *st;
	struct stat sb;
	int err;

	if (!elf_file__ready()) {
		errno = ENOSYS;
		return NULL;
	}
	err = elf_file__open(open_path, &h);
	if (err) {
		errno = -err;
		return NULL;
	}
	if (fstat(h.fd, &sb))
		sb.st_size = 0;
	st = load_elf(h.elf, h.fd, (size_t)sb.st_size, path, NULL);
	err = errno;
	elf_file__close(&h);
	errno = err;
	return finish(st);
}

const void *elf_own_vdso(size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)getauxval(AT_SYSINFO_EHDR);

	if (!eh || memcmp(eh->e_ident, ELFMAG, SELFMAG))
		return NULL;
	/* The section headers come last in the image. */
	*size = eh->e_shoff + (size_t)eh->e_shnum * eh->e_shentsize;
	return eh;
}

struct elf_symtab *elf_symtab__load_mem(const void *image, size_t size)
{
	struct elf_symtab *st;
	char *copy;
	Elf *elf;

	if (!elf_file__ready()) {
		errno = ENOSYS;
		return NULL;
	}
	copy = malloc(size);
	if (!copy) {
		errno = ENOMEM;
		return NULL;
	}
	memcpy(copy, image, size);
	elf = elf_memory(copy, size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		free(copy);
		errno = ENOEXEC;
		return NULL;
	}
	/* The vdso's own names, as perf prints them: __vdso_clock_gettime. */
	st = load_elf(elf, -1, size, NULL, "__vdso_");
	elf_end(elf);
	free(copy);
	return finish(st);
}

void elf_symtab__free(struct elf_symtab *st)
{
	if (!st)
		return;
	free(st->syms);
	free(st->table);
	free(st->names);
	free(st->segs);
	free(st->sections);
	free(st);
}

const char *elf_symtab__build_id(const struct elf_symtab *st)
{
	return st->build_id[0] ? st->build_id : NULL;
}

bool elf_symtab__debug_of_other_build(const struct elf_symtab *st)
{
	return st->debug_of_other_build;
}

enum elf_sym_source elf_symtab__source(const struct elf_symtab *st)
{
	return st->source;
}

size_t elf_symtab__count(const struct elf_symtab *st)
{
	return st->nr_syms;
}

const char *elf_symtab__lookup_vaddr(const struct elf_symtab *st, uint64_t vaddr,
				     uint64_t *sym_off)
{
	size_t lo = 0, hi = st->nr_syms;

	/* The last symbol starting at or below vaddr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->table[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Walk back a little for a symbol that contains vaddr (nested symbols). */
	for (size_t i = lo, tries = 0; i > 0 && tries < 4; i--, tries++) {
		const struct sym_entry *s = &st->table[i - 1];

		if (vaddr - s->addr < s->size) {
			*sym_off = vaddr - s->addr;
			return st->names + s->name;
		}
	}
	return NULL;
}

int elf_symtab__vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr)
{
	for (size_t i = 0; i < st->nr_segs; i++) {
		const struct load_segment *seg = &st->segs[i];

		if (off >= seg->offset && off - seg->offset < seg->filesz) {
			*vaddr = off - seg->offset + seg->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off,
				      uint64_t *sym_off)
{
	uint64_t vaddr;

	return elf_symtab__vaddr(st, off, &vaddr) ? NULL :
	       elf_symtab__lookup_vaddr(st, vaddr, sym_off);
}
