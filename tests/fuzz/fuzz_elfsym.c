// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as an ELF file, loaded as the vdso is
 * (elf_symtab__load_mem): section and program headers, symbol and string
 * tables, notes (build-id), dynamic relocations and PLT stubs, labels,
 * demangling; then lookups by address and by file offset. Any file a
 * profiled process maps is as hostile as this input.
 *
 * Seeds: small stripped and unstripped workload builds (noseparate-code).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	/* No debug file outside the input: a build-id must not reach the system's. */
	elf_symtab__set_debug_root("/nonexistent/profile-fuzz");
	return 0;
}

static void touch(const char *name)
{
	volatile size_t sink;

	if (name)
		sink = strlen(name);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct elf_symtab *st = elf_symtab__load_mem(data, size);
	uint64_t off, addr;

	if (!st)
		return 0;
	touch(elf_symtab__build_id(st));
	(void)elf_symtab__count(st);
	/* Addresses from the input itself (headers hold many), and the extremes. */
	for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		memcpy(&addr, data + i, 8);
		touch(elf_symtab__lookup_vaddr(st, addr, &off));
		touch(elf_symtab__lookup_vaddr(st, addr & 0xffffff, &off));
		touch(elf_symtab__lookup_offset(st, addr & 0xffffff, &off));
	}
	for (addr = 0; addr < 0x10000; addr += 0x3f)
		touch(elf_symtab__lookup_vaddr(st, addr, &off));
	touch(elf_symtab__lookup_vaddr(st, UINT64_MAX, &off));
	touch(elf_symtab__lookup_offset(st, UINT64_MAX, &off));
	elf_symtab__free(st);
	return 0;
}
