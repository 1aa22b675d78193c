/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rooms of the ELF symbolizer share, and no one else: the table as
 * it is built and as lookups read it, and the steps that build it. elfsym.c
 * loads a file (choosing where its symbols come from) and looks addresses
 * up; elfsym_read.c reads the symbols of a file (.symtab or .dynsym, PLT
 * stubs, Go's function table) into the list; elfsym_pool.c keeps their
 * names; elfsym_table.c makes the list the table lookups search.
 */
#ifndef CORE_SYM_ELFSYM_INTERNAL_H
#define CORE_SYM_ELFSYM_INTERNAL_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/sym/elfsym.h"

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

/* elfsym_pool.c: names kept in st->names, symbols appended to st->syms. */
long elf_symtab__pool_add(struct elf_symtab *st, const char *name, size_t len);
int elf_symtab__add(struct elf_symtab *st, const char *name, size_t len, const char *suffix,
		    const struct elf_sym *sym);
int elf_symtab__add_ref(struct elf_symtab *st, size_t off, size_t len, const struct elf_sym *sym);
size_t elf_symtab__end_name(struct elf_symtab *st, size_t off, size_t base, unsigned char *cuts);
void elf_symtab__point_names(struct elf_symtab *st);

/* elfsym_read.c: what a file holds, appended to the list. */
int elf_symtab__read_sections(Elf *elf, struct elf_symtab *st);
int elf_symtab__read_segments(Elf *elf, struct elf_symtab *st);
int elf_symtab__read_symbols(Elf *elf, Elf_Scn *scn, struct elf_symtab *st);
int elf_symtab__add_plt(Elf *elf, struct elf_symtab *st);
int elf_symtab__add_go(Elf *elf, struct elf_symtab *st);

/* elfsym_table.c: the list made the table. */
int elf_sym__cmp_alias(const struct elf_sym *x, const struct elf_sym *y);
int elf_sym__cmp(const void *a, const void *b);
void elf_symtab__sort(struct elf_symtab *st, const char *prefer);
void elf_symtab__bound(struct elf_symtab *st);
int elf_symtab__compact(struct elf_symtab *st);

#endif
