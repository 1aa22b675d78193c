// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as the .eh_frame (or .debug_frame) of
 * an ELF image, or as the ELF file itself, compiled into unwind tables
 * (unwind/tables) for the in-kernel unwinder. The compile must end, fault
 * nowhere, and give a table that holds to the layout the BPF search relies
 * on (unwind_table__verify); lookups at pcs from the input must agree with
 * a plain linear reading of the rows. A hang shows as a libFuzzer timeout.
 *
 * Input: a 2-byte header, then the section (or the file).
 * - byte 0: bit 0 the file itself, bit 1 .debug_frame, bits 2-7 the code
 *   segment's size (1 << (8 + n) bytes, at most 2^71: capped at 2^40);
 * - byte 1: how many pcs to look up, from the input's last bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/cfi_elf.h"
#include "unwind/tables/tables.h"

/* The rule of pc by walking every row: what the bisection must find. */
static int64_t linear(const struct unwind_table *t, uint64_t pc)
{
	uint64_t rel, page;
	int64_t found = -1;

	if (pc < t->base)
		return -1;
	rel = pc - t->base;
	page = rel >> UNWIND_TABLE_PAGE_SHIFT;
	if (page >= t->nr_pages)
		return -1;
	for (uint32_t i = t->pages[page]; i < t->pages[page + 1]; i++)
		if (t->rows[i].addr <= (rel & 0xffff))
			found = i;
	return found;
}

static void lookups(const struct unwind_table *t, const uint8_t *data, size_t size, unsigned n)
{
	for (unsigned int i = 0; i < n && size >= 8; i++, size -= 8) {
		struct unwind_rule r;
		uint64_t pc;

		memcpy(&pc, data + size - 8, 8);
		/* near the table's rows more often than not */
		if (i & 1)
			pc = t->base +
			     pc % ((uint64_t)(t->nr_pages + 1) << UNWIND_TABLE_PAGE_SHIFT);
		if (unwind_table__lookup(t, pc, &r) != linear(t, pc))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char elf[1 << 20];
	struct unwind_image img;
	struct unwind_table *t;
	unsigned int shift;
	size_t elf_size;
	int err;

	if (size < 2)
		return 0;
	shift = 8 + (data[0] >> 2);
	if (data[0] & 1) {
		err = unwind_image__from_memory(&img, data + 2, size - 2);
	} else {
		struct cfi_elf parts = { .memsz = 1ull << (shift > 40 ? 40 : shift) };

		if (data[0] & 2) {
			parts.df = data + 2;
			parts.df_len = size - 2;
		} else {
			parts.eh = data + 2;
			parts.eh_len = size - 2;
		}
		elf_size = cfi_elf__make(elf, sizeof(elf), &parts);
		if (!elf_size)
			return 0;
		err = unwind_image__from_memory(&img, elf, elf_size);
	}
	if (err)
		return 0;
	if (!unwind_table__compile(&img, &t)) {
		if (unwind_table__verify(t))
			abort();
		lookups(t, data, size, data[1]);
		unwind_table__free(t);
	}
	unwind_image__close(&img);
	return 0;
}
