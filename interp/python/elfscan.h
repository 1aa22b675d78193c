/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Named symbols and initialized bytes of an untrusted ELF file, for
 * detection: the few variables and functions an interpreter is found by.
 * (core/sym/elfsym.h finds symbols by address, not by name.)
 */
#ifndef INTERP_PYTHON_ELFSCAN_H
#define INTERP_PYTHON_ELFSCAN_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A symbol looked for: by exact name, or (prefix) by a name starting with it. */
struct py_sym_want {
	const char *name;
	bool prefix;
	bool found;
	uint64_t value, size;
};

/*
 * Fills the wanted symbols that elf defines (.dynsym first, then .symtab;
 * the first definition wins; a prefix takes the first match too).
 * Returns how many were found.
 */
size_t py_elf__symbols(Elf *elf, struct py_sym_want *want, size_t n);
/* The same in .dynsym only: cheap, for a first look at every binary of a host. */
size_t py_elf__dynsyms(Elf *elf, struct py_sym_want *want, size_t n);

/* len bytes at vaddr from elf's initialized allocated sections: 0 or -ENOENT. */
int py_elf__read_vaddr(Elf *elf, uint64_t vaddr, void *buf, size_t len);

/*
 * The load bias of a file mapped at start from file offset pgoff (process
 * address = ELF vaddr + bias), from the PT_LOAD segment holding pgoff:
 * 0 or -ENOENT.
 */
int py_elf__load_bias(Elf *elf, uint64_t start, uint64_t pgoff, uint64_t *bias);

/* The DT_SONAME of elf into out, or "". */


/*
 * The one "MAJOR.MINOR.MICRO" string of .rodata (NUL on both sides) whose
 * version has a layout: 0 with the three numbers, -ENOENT when there is
 * none or more than one such major.minor.
 */
int py_elf__rodata_version(Elf *elf, int *major, int *minor, int *micro);

#endif
