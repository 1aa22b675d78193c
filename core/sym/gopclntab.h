/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Function names of a Go binary from its .gopclntab section: the table the
 * Go runtime itself symbolizes with, present in every Go binary, stripped
 * or not (Debian strips its Go programs of .symtab and DWARF). Formats of
 * Go 1.16-1.17 (magic 0xfffffffa) and 1.18 on (0xfffffff0, 0xfffffff1),
 * little-endian, 4- or 8-byte pointers. The section is untrusted input:
 * every offset and count is checked against its size.
 */
#ifndef CORE_SYM_GOPCLNTAB_H
#define CORE_SYM_GOPCLNTAB_H

#include <stddef.h>
#include <stdint.h>

/* One function: [addr, addr + size), its name (len bytes, not NUL-terminated). */
typedef int (*go_func_fn)(uint64_t addr, uint64_t size, const char *name, size_t len, void *arg);

/*
 * Calls fn for each function of the table in data (size bytes). text_addr
 * is the address of .text, for tables whose own text start is 0 (position-
 * independent builds relocate it). Returns the number of functions, -ENOENT
 * when data is no table of a known version, -EINVAL when it is malformed,
 * or what fn returned when that was not 0.
 */
int go_pclntab__for_each(const void *data, size_t size, uint64_t text_addr, go_func_fn fn,
			 void *arg);

#endif
