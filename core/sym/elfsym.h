/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function symbols of one ELF file, found by file offset. Symbols come from
 * .symtab; for a stripped file from its debug file (by build-id, then
 * .gnu_debuglink: core/sym/debugfile.h); else from .dynsym, or for Go
 * binaries from .gopclntab. Untyped labels
 * in code count too, and PLT stubs are named "name@plt" (x86-64).
 */
#ifndef CORE_SYM_ELFSYM_H
#define CORE_SYM_ELFSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct elf_symtab;

/* Where symbols came from, for -v and tests. */
enum elf_sym_source {
	ELF_SYM_NONE,
	ELF_SYM_SYMTAB,
	ELF_SYM_DEBUG_BUILD_ID,
	ELF_SYM_DEBUG_LINK,
	ELF_SYM_DYNSYM,
	ELF_SYM_GOPCLNTAB,	/* a Go binary's own function table (core/sym/gopclntab.h) */
};

/* Returns NULL with errno set when the file cannot be read as ELF. */
struct elf_symtab *elf_symtab__load(const char *path);
/*
 * The same, reading open_path (e.g. /proc/self/fd/N) but looking for the
 * .gnu_debuglink file next to path, where the binary was installed.
 */
struct elf_symtab *elf_symtab__load_as(const char *open_path, const char *path);
/* The same for an ELF image in memory (the vdso); the buffer is copied. */
struct elf_symtab *elf_symtab__load_mem(const void *image, size_t size);
void elf_symtab__free(struct elf_symtab *st);

enum elf_sym_source elf_symtab__source(const struct elf_symtab *st);
/*
 * Whether the file is stripped and the only debug files found for it had
 * another build-id (or none): ignored, so its names come from .dynsym.
 */
bool elf_symtab__debug_of_other_build(const struct elf_symtab *st);
/* The GNU build-id in hex, or NULL. */
const char *elf_symtab__build_id(const struct elf_symtab *st);
size_t elf_symtab__count(const struct elf_symtab *st);
/* Bytes the table holds: symbols, names, segments, sections (-v's account of memory). */
size_t elf_symtab__bytes(const struct elf_symtab *st);

/*
 * The function containing file offset off (as computed from a mapping:
 * addr - start + pgoff). Sets *sym_off to the offset into the function.
 * Returns NULL when no symbol covers it.
 */
const char *elf_symtab__lookup_offset(const struct elf_symtab *st, uint64_t off,
				      uint64_t *sym_off);
/* The virtual address (as the file and its DWARF state them) of file offset off: 0 or -ENOENT. */
int elf_symtab__vaddr(const struct elf_symtab *st, uint64_t off, uint64_t *vaddr);
/* The same by virtual address as the ELF file states it (st_value). */
const char *elf_symtab__lookup_vaddr(const struct elf_symtab *st, uint64_t vaddr,
				     uint64_t *sym_off);

/*
 * The vdso image mapped into this process (the same for every process on
 * this kernel) and its size, or NULL.
 */
const void *elf_own_vdso(size_t *size);
/* A C++ name demangled, without its parameter list; NULL if not C++. Free it. */
char *elf_demangle(const char *name, size_t len);

#endif
