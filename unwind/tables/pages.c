// SPDX-License-Identifier: GPL-2.0
/*
 * The table written page by page as the FDEs' rows arrive in address
 * order (tables_internal.h's table_writer): each completed 64 KiB page's
 * rows counted, folded, their rules interned, and stored as 4-byte rows.
 * Only the rows of the page being filled wait in full (24 bytes each), so
 * compiling libLLVM (817,666 rows before folding) holds a few thousand of
 * them, not all: the run's peak memory was its largest compile's.
 */
#include "unwind/tables/tables_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PAGE_SIZE_ (1ull << UNWIND_TABLE_PAGE_SHIFT)
/* A rule table's hash: open addressing over twice the largest table. */
#define RULE_HASH_SIZE (2 * UNWIND_TABLE_MAX_RULES)

static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
static const struct unwind_rule stop = { .cfa = UNWIND_CFA_STOP };

static uint64_t page_of(uint64_t addr)
{
	return addr & ~(PAGE_SIZE_ - 1);
}

/* The index of rule r in the table, added if new; STOP's once the table is full. */
static uint16_t intern(struct table_writer *w, const struct unwind_rule *r)
{
	struct unwind_table *t = w->t;
	uint64_t key[2] = { 0 };
	uint32_t h;

	memcpy(key, r, sizeof(*r));
	h = ((key[0] ^ key[1] * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull) >> 47; /* 17 bits */
	for (;;) {
		uint32_t slot = w->rule_hash[h];

		if (!slot)
			break;
		if (!memcmp(&t->rules[slot - 1], r, sizeof(*r)))
			return slot - 1;
		h = (h + 1) % RULE_HASH_SIZE;
	}
	if (t->nr_rules == UNWIND_TABLE_MAX_RULES) {
		t->stats.rules_overflow++;
		return 1;	/* STOP, interned second by table_writer__init */
	}
	t->rules[t->nr_rules] = *r;
	w->rule_hash[h] = ++t->nr_rules;
	return t->nr_rules - 1;
}

int table_writer__init(struct table_writer *w, struct unwind_table *t)
{
	*w = (struct table_writer){ .t = t, .carry = none };
	w->rule_hash = calloc(RULE_HASH_SIZE, sizeof(*w->rule_hash));
	t->rules = malloc(UNWIND_TABLE_MAX_RULES * sizeof(*t->rules));
	/* The most a table may have; calloc's pages cost nothing until written. */
	t->pages = calloc(UNWIND_TABLE_MAX_PAGES + 1, sizeof(*t->pages));
	if (!w->rule_hash || !t->rules || !t->pages)
		return -ENOMEM;
	/* Rule 0 is NONE (an empty table entry reads as it), then STOP, for a full table. */
	intern(w, &none);
	intern(w, &stop);
	return 0;
}

/* What share of the code can be stepped, counted on rows before folding: v[i] ends at v[i + 1]. */
static void count(struct unwind_table_stats *st, const struct full_row *v, size_t n, size_t total)
{
	for (size_t i = 0; i < n && i + 1 < total; i++) {
		uint64_t len = v[i + 1].addr - v[i].addr;

		if (v[i].rule.cfa == UNWIND_CFA_NONE)
			continue;
		st->bytes_covered += len;
		if (v[i].rule.cfa == UNWIND_CFA_STOP) {
			st->rows_stop++;
			st->bytes_stop += len;
		}
	}
	st->rows_cfa += n;
}

/*
 * A push or pop folded into the row before it (otel's stack deltas do it
 * too): a row whose next one, in the same page, only moves an rsp-based
 * CFA by 8 takes the next one's address as fold_at. A third of the rows of
 * libc, python3.11 and libLLVM are such (prologues push callee-saved
 * registers one after another, epilogues pop them).
 */
/* Whether b only moves a's rsp-based CFA by 8, within 255 bytes of a's page. */
static bool folds(const struct full_row *a, const struct full_row *b)
{
	int64_t d = (int64_t)b->rule.cfa_off - a->rule.cfa_off;

	return a->rule.cfa == UNWIND_CFA_RSP && b->rule.cfa == UNWIND_CFA_RSP &&
	       page_of(a->addr) == page_of(b->addr) && b->addr - a->addr <= UINT8_MAX &&
	       a->rule.rbp == b->rule.rbp && a->rule.rbp_off == b->rule.rbp_off &&
	       (d == 8 || d == -8);
}

/* v[0, n) folded in place; returns how many rows are left. */
static size_t fold(struct full_row *v, size_t n)
{
	size_t out = 0;

	for (size_t i = 0; i < n; i++) {
		v[out] = v[i];
		if (i + 1 < n && folds(&v[i], &v[i + 1])) {
			v[out].rule.fold_at = v[i + 1].addr - v[i].addr;
			v[out].rule.fold_off = v[i + 1].rule.cfa_off - v[i].rule.cfa_off;
			i++;
		}
		out++;
	}
	return out;
}

/* The rule in effect at the end of a row: its fold applied. */
static struct unwind_rule unfolded(const struct unwind_rule *r)
{
	struct unwind_rule u = *r;

	u.cfa_off += u.fold_off;
	u.fold_at = 0;
	u.fold_off = 0;
	return u;
}

static int emit(struct table_writer *w, uint64_t page_start, uint64_t addr,
		const struct unwind_rule *r)
{
	struct unwind_table *t = w->t;

	if (t->nr_rows == w->cap_rows &&
	    tables__grow((void **)&t->rows, &w->cap_rows, sizeof(*t->rows)))
		return -ENOMEM;
	t->rows[t->nr_rows].addr = addr - page_start;
	t->rows[t->nr_rows++].rule = intern(w, r);
	return 0;
}

/*
 * Pages [w->next_page, end_page) written from the folded rows v[0, n),
 * which all lie in them: each page that has any starts with a row at its
 * first byte. Rows past the page limit are left out (counted as cut).
 */
static int write_pages(struct table_writer *w, const struct full_row *v, size_t n,
		       uint64_t end_page)
{
	struct unwind_table *t = w->t;
	size_t j = 0;
	int err;

	if (end_page > UNWIND_TABLE_MAX_PAGES)
		end_page = UNWIND_TABLE_MAX_PAGES;
	for (; w->next_page < end_page; w->next_page++) {
		uint64_t start = t->base + ((uint64_t)w->next_page << UNWIND_TABLE_PAGE_SHIFT);
		bool has = j < n && v[j].addr < start + PAGE_SIZE_;

		t->pages[w->next_page] = t->nr_rows;
		if (!has && w->carry.cfa == UNWIND_CFA_NONE)
			continue;	/* no code here: an empty page is NONE */
		/* the rule the last page ended with, repeated at this one's first byte */
		if ((!has || v[j].addr != start) && (err = emit(w, start, start, &w->carry)))
			return err;
		for (; j < n && v[j].addr < start + PAGE_SIZE_; j++) {
			err = emit(w, start, v[j].addr, &v[j].rule);
			if (err)
				return err;
			w->carry = unfolded(&v[j].rule);
		}
	}
	w->cut |= j < n;
	return 0;
}

/*
 * Rows of l that can no longer change, written: of a list row_list__push
 * appends to, only the last row can still be replaced, so the one before
 * it is the last whose successor is known; the rows of the pages before
 * that one's are complete (a fold never crosses a page). With last, all.
 */
int table_writer__take(struct table_writer *w, struct row_list *l, bool last)
{
	struct unwind_table *t = w->t;
	struct full_row *v = l->v;
	size_t n = l->n, m = n, left;
	uint64_t limit = UINT64_MAX, end_page;
	int err;

	if (!n)
		return 0;
	if (!last) {
		/* One compare when nothing is complete: this runs after every FDE. */
		if (n < 3 || page_of(v[0].addr) == page_of(v[n - 2].addr))
			return 0;
		limit = page_of(v[n - 2].addr);
		for (m = 0; v[m].addr < limit; m++)
			;
	}
	if (!w->started) {
		t->base = page_of(v[0].addr);
		w->started = true;
	}
	count(&t->stats, v, m, n);
	left = fold(v, m);
	if (last)
		end_page = ((v[left - 1].addr - t->base) >> UNWIND_TABLE_PAGE_SHIFT) + 1;
	else
		end_page = (limit - t->base) >> UNWIND_TABLE_PAGE_SHIFT;
	err = write_pages(w, v, left, end_page);
	if (err)
		return err;
	memmove(v, v + m, (n - m) * sizeof(*v));
	l->n = n - m;
	return 0;
}

void table_writer__finish(struct table_writer *w)
{
	struct unwind_table *t = w->t;
	void *p;

	t->nr_pages = w->next_page;
	t->pages[t->nr_pages] = t->nr_rows;
	if (w->cut)
		t->stats.fdes_cut++;	/* code past the page limit has no rows */
	/* Allocated for the most a table may hold, or grown by doubling: keep what is used. */
	if ((p = realloc(t->pages, (t->nr_pages + 1) * sizeof(*t->pages))))
		t->pages = p;
	if (t->nr_rows && (p = realloc(t->rows, t->nr_rows * sizeof(*t->rows))))
		t->rows = p;
	if ((p = realloc(t->rules, t->nr_rules * sizeof(*t->rules))))
		t->rules = p;
	if (!t->nr_pages) {
		/* No rows: as before, an empty table has no page index. */
		free(t->pages);
		t->pages = NULL;
	}
	t->stats.bytes = (uint64_t)t->nr_rows * sizeof(*t->rows) +
			 (uint64_t)(t->nr_pages + 1) * sizeof(*t->pages) +
			 (uint64_t)t->nr_rules * sizeof(*t->rules);
}

void table_writer__free(struct table_writer *w)
{
	free(w->rule_hash);
	w->rule_hash = NULL;
}
