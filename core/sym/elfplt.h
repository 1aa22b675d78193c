/* SPDX-License-Identifier: GPL-2.0 */
/*
 * PLT stubs of an ELF file, named by the dynamic relocations of the GOT
 * slots they jump through: "memset@plt", as perf and objdump print them.
 */
#ifndef CORE_SYM_ELFPLT_H
#define CORE_SYM_ELFPLT_H

#include <gelf.h>
#include <stdint.h>

struct plt_stub {
	uint64_t addr;		/* virtual address, as the file states it */
	uint64_t size;
	/* The function's dynamic symbol name (in elf's data, valid until elf_end), or NULL ... */
	const char *name;
	/* ... for an IFUNC called through the stub (IRELATIVE): its resolver's address. */
	uint64_t resolver;
};

typedef int (*plt_stub_fn)(const struct plt_stub *stub, void *ctx);

/*
 * Calls fn for every stub in .plt, .plt.sec (IBT), .plt.got and .plt.bnd
 * whose GOT slot a relocation names; a non-zero return from fn stops and is
 * returned. x86-64 only (others: none). Returns the number of stubs or -errno.
 */
int elf_plt__for_each(Elf *elf, plt_stub_fn fn, void *ctx);

#endif
