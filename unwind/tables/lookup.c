// SPDX-License-Identifier: GPL-2.0
/*
 * The search the BPF program does, in C, so that the tests hold the tables
 * to it. Keep the two alike: every loop here is one the program unrolls,
 * with a constant bound, and every array index is checked against the
 * array's size right before it is used, as the verifier wants it.
 */
#include "unwind/tables/tables.h"

#include <errno.h>
#include <string.h>

int64_t unwind_table__lookup(const struct unwind_table *t, uint64_t pc, struct unwind_rule *rule)
{
	uint32_t lo, n, key, page;
	uint64_t rel;

	memset(rule, 0, sizeof(*rule));
	rule->cfa = UNWIND_CFA_NONE;
	if (pc < t->base)
		return -1;
	rel = pc - t->base;
	if (rel >> UNWIND_TABLE_PAGE_SHIFT >= t->nr_pages)
		return -1;
	page = rel >> UNWIND_TABLE_PAGE_SHIFT;
	key = rel & ((1u << UNWIND_TABLE_PAGE_SHIFT) - 1);
	lo = t->pages[page];
	/* A page's row count is at most 2^16 by construction; a map could still lie. */
	if (t->pages[page + 1] <= lo || t->pages[page + 1] > t->nr_rows ||
	    t->pages[page + 1] - lo > 1u << UNWIND_TABLE_PAGE_SHIFT)
		return -1;
	n = t->pages[page + 1] - lo;
	/*
	 * The last row at or below key: rows[lo] is at the page's first byte,
	 * so it exists. n halves (rounding up) each step: from 2^16 to 1 in 16.
	 */
	for (unsigned int i = 0; i < UNWIND_TABLE_STEPS; i++) {
		uint32_t half = n / 2;

		if (!half)
			break;
		if (t->rows[lo + half].addr <= key) {
			lo += half;
			n -= half;
		} else {
			n = half;
		}
	}
	if (t->rows[lo].rule >= t->nr_rules)
		return -1;
	*rule = t->rules[t->rows[lo].rule];
	if (rule->fold_at && key - t->rows[lo].addr >= rule->fold_at)
		rule->cfa_off += rule->fold_off;
	rule->fold_at = 0;
	rule->fold_off = 0;
	return lo;
}

int unwind_table__verify(const struct unwind_table *t)
{
	if (!t->nr_pages)
		return t->nr_rows ? -EINVAL : 0;
	if (t->nr_pages > UNWIND_TABLE_MAX_PAGES || t->pages[0] ||
	    t->pages[t->nr_pages] != t->nr_rows || !t->nr_rules ||
	    t->rules[0].cfa != UNWIND_CFA_NONE)
		return -EINVAL;
	for (uint32_t p = 0; p < t->nr_pages; p++) {
		uint32_t lo = t->pages[p], hi = t->pages[p + 1];

		if (hi < lo || hi - lo > 1u << UNWIND_TABLE_PAGE_SHIFT)
			return -EINVAL;
		if (hi > lo && t->rows[lo].addr)
			return -EINVAL;		/* a page's first row is at its first byte */
		for (uint32_t i = lo; i < hi; i++)
			if (t->rows[i].rule >= t->nr_rules ||
			    (i > lo && t->rows[i].addr <= t->rows[i - 1].addr))
				return -EINVAL;
	}
	return 0;
}
