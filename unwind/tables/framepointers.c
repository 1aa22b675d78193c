// SPDX-License-Identifier: GPL-2.0
/*
 * Whether a binary keeps frame pointers, read from its own unwind tables
 * (issue 45: --unwind auto decides per binary, and -v says why). A
 * function built with them finds its CFA from rbp once its prologue has
 * run, for all of its body; one built without them does so only where it
 * realigns its stack or calls alloca. So the share of its functions that
 * set up such a frame tells the two apart: all but crt's for
 * -fno-omit-frame-pointer builds, 2.5% for Debian's libc (93 of 3,713).
 */
#include "unwind/tables/tables.h"

/* The ELF vaddr where row i of page p begins. */
static uint64_t row_addr(const struct unwind_table *t, uint32_t p, uint32_t i)
{
	return t->base + ((uint64_t)p << UNWIND_TABLE_PAGE_SHIFT) + t->rows[i].addr;
}

void unwind_table__fp_share(const struct unwind_table *t, struct unwind_fp_share *out)
{
	*out = (struct unwind_fp_share){ 0 };
	/* Each row's extent runs to the next row, within its page or into the next used one. */
	for (uint32_t p = 0; p < t->nr_pages; p++)
		for (uint32_t i = t->pages[p]; i < t->pages[p + 1] && i < t->nr_rows; i++) {
			uint64_t start = row_addr(t, p, i), end;
			const struct unwind_rule *r;
			uint32_t next_page = p + 1;

			if (t->rows[i].rule >= t->nr_rules)
				continue;	/* unverified table: not counted */
			r = &t->rules[t->rows[i].rule];
			if (i + 1 < t->pages[p + 1]) {
				end = row_addr(t, p, i + 1);
			} else {
				/* The last of its page: the next page with rows begins at its first byte. */
				while (next_page < t->nr_pages &&
				       t->pages[next_page] == t->pages[next_page + 1])
					next_page++;
				end = t->base + ((uint64_t)next_page << UNWIND_TABLE_PAGE_SHIFT);
			}
			if (end <= start)
				continue;
			/* Compiled code only: PLT entries, _start, signal frames are neither. */
			if (r->cfa != UNWIND_CFA_RSP && r->cfa != UNWIND_CFA_RBP)
				continue;
			out->bytes += end - start;
			if (r->cfa == UNWIND_CFA_RBP)
				out->rbp_bytes += end - start;
		}
	/* Counted per function as compiled: a function with early returns has several rbp runs. */
	out->functions = t->stats.fdes;
	out->rbp_frames = t->stats.fdes_rbp;
	out->keeps = out->functions &&
		     out->rbp_frames * 10 >= (uint64_t)out->functions * UNWIND_FP_KEEPS_TENTHS;
}
