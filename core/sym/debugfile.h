/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ELF files a user controls, opened safely, and their separate debug files,
 * found as gdb finds them: by build-id under the debug root, else by the
 * name and CRC in .gnu_debuglink (next to the binary, in .debug/ there, or
 * under the debug root), only where the binary's owner or root controls
 * the file and its directory. Files are regular files only (a FIFO planted as a
 * debug file is never opened), bounded in size, and read, never mapped: an
 * owner who truncates one must not end the profiler with SIGBUS.
 */
#ifndef CORE_SYM_DEBUGFILE_H
#define CORE_SYM_DEBUGFILE_H

#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>

#include "core/sym/elfsym.h"

/* An ELF file open for reading: its fd and libelf's view of it. */
struct elf_file {
	int fd;
	Elf *elf;
};

/* Whether libelf is initialized (done at the first call). */
bool elf_file__ready(void);
/* Open path (symlinks followed: /proc/self/fd/N). 0, -ENOEXEC if no ELF, or -errno. */
int elf_file__open(const char *path, struct elf_file *f);
/* The same for fd, which is taken (closed now on failure). */
int elf_file__open_fd(int fd, struct elf_file *f);
/*
 * The same through a copy of fd: libelf reads through its own descriptor,
 * the caller's stays open and where it was.
 */
int elf_file__open_copy(int fd, struct elf_file *f);
void elf_file__close(struct elf_file *f);
/* The first section of type (0: any) named name (NULL: any), or NULL. */
Elf_Scn *elf_file__section(Elf *elf, Elf64_Word type, const char *name);
/*
 * Each defined symbol of the symbol table scn (SHT_SYMTAB or SHT_DYNSYM;
 * NULL: none) with its name and the bytes of the string table from it
 * (avail: the name need not be terminated there), until fn returns
 * non-zero, which is returned; 0 when all were seen. Bounded by the
 * section's size; names outside their string table are skipped.
 */
typedef int (*elf_symbol_fn)(void *ctx, const GElf_Sym *sym, const char *name, size_t avail);
int elf_file__each_symbol(Elf *elf, Elf_Scn *scn, elf_symbol_fn fn, void *ctx);
/* Its DT_SONAME into out ("" where it has none). */
void elf_file__soname(Elf *elf, char *out, size_t len);
/* The GNU build-id in hex into hex (hex_len bytes); false if there is none or it is too long. */
bool elf_file__build_id(Elf *elf, char *hex, size_t hex_len);
/*
 * The separate debug file of elf (open as self_fd, installed at path), opened
 * into dh: by build-id (hex, may be "") under the debug root, else by
 * .gnu_debuglink; where elf has a build-id, the debug file must have the
 * same. Sets its path in out and where it was found in *src. 0, -ENOENT,
 * or -ESTALE when only debug files of another build were found.
 */
int elf_file__open_debug(Elf *elf, int self_fd, const char *hex, const char *path, char *out,
			 size_t len, enum elf_sym_source *src, struct elf_file *dh);

/*
 * The separate debug file of the ELF file at open_path (installed at path):
 * by build-id under the debug root, else by .gnu_debuglink. 0 or -ENOENT.
 */
int elf_debug_file(const char *open_path, const char *path, char *out, size_t len);
/*
 * An fd (read-only, to close) of the file holding the DWARF of the ELF file
 * at open_path (installed at path): that file itself if it has .debug_info,
 * else its separate debug file, found and checked as for symbols. -ENOENT
 * when neither has DWARF.
 */
int elf_dwarf_fd(const char *open_path, const char *path);
/* Directory searched for debug files (/usr/lib/debug); tests point it elsewhere. */
void elf_symtab__set_debug_root(const char *dir);
const char *elf_symtab__debug_root(void);

#endif
