// SPDX-License-Identifier: GPL-2.0
/*
 * One file's function symbols: where they come from (.symtab, a debug
 * file's, .dynsym and Go's table, and PLT stubs), the table built from them
 * (elfsym_read.c, elfsym_pool.c, elfsym_table.c), and addresses looked up
 * in it.
 */
#include "core/sym/elfsym.h"

#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfsym_internal.h"
#include "core/lib/log.h"

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
		err = elf_symtab__read_symbols(h.elf, scn, st);
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
	err = elf_symtab__read_segments(elf, st);
	if (err)
		goto err_out;
	if (!elf_file__build_id(elf, st->build_id, sizeof(st->build_id)))
		st->build_id[0] = '\0';

	scn = elf_file__section(elf, SHT_SYMTAB, NULL);
	if (scn) {
		err = elf_symtab__read_symbols(elf, scn, st);
		st->source = ELF_SYM_SYMTAB;
	} else {
		err = load_from_debug_file(elf, self_fd, path, st);
		if (err == -ENOENT) {
			scn = elf_file__section(elf, SHT_DYNSYM, NULL);
			err = scn ? elf_symtab__read_symbols(elf, scn, st) :
				    elf_symtab__read_sections(elf, st);
			st->source = scn ? ELF_SYM_DYNSYM : ELF_SYM_NONE;
			if (!err)	/* .dynsym has at most cgo's few */
				err = elf_symtab__add_go(elf, st);
		}
	}
	if (!err)
		err = elf_symtab__add_plt(elf, st);
	if (err)
		goto err_out;
	elf_symtab__sort(st, prefer);
	elf_symtab__bound(st);
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
	int err = st ? elf_symtab__compact(st) : 0;

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
