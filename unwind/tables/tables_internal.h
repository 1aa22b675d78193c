/* SPDX-License-Identifier: GPL-2.0 */
/* What compile.c, program.c and pages.c share; only unwind/tables/ includes it. */
#ifndef UNWIND_TABLES_INTERNAL_H
#define UNWIND_TABLES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>

#include "unwind/cfi.h"
#include "unwind/tables/tables.h"

/* A row before paging: a whole address. */
struct full_row {
	uint64_t addr;
	struct unwind_rule rule;
};

/* Rows in address order, a rule kept only where it changes. */
struct row_list {
	struct full_row *v;
	size_t n, cap;
};

/* An array of *cap elements of size bytes grown to twice as many (1024 at first). 0 or -ENOMEM. */
int tables__grow(void **v, size_t *cap, size_t size);

/* Append a row at addr (>= the last one's; lower ones are dropped). 0 or -ENOMEM. */
int row_list__push(struct row_list *l, uint64_t addr, const struct unwind_rule *rule);

/*
 * Run the CFA program of a checked FDE (its CIE's initial instructions,
 * then its own) and append its rows for [f->pc_begin, end). Every read is
 * bounded by the entries cfi__check_fde checked, every loop by their bytes.
 * Where the program cannot be followed (an unknown instruction, a read past
 * its end, an address going back), the rest of the FDE gets one STOP row and
 * *stopped is set. Returns 0 or -ENOMEM.
 */
int cfa_program__run(const struct cfi_section *s, const struct cfi_fde *f, uint64_t end,
		     struct row_list *out, bool *stopped);

/*
 * The table written page by page as rows arrive (pages.c): rules interned,
 * rows folded and cut into 64 KiB pages.
 */
struct table_writer {
	struct unwind_table *t;
	uint32_t *rule_hash;	/* index + 1 of each rule by hash, 0 where free */
	size_t cap_rows;
	uint32_t next_page;	/* pages [0, next_page) are written */
	bool started;		/* t->base is set */
	bool cut;		/* rows past the page limit were left out */
	struct unwind_rule carry;	/* the rule in effect where the last row written ends */
};

/* The rule table and page index allocated, NONE and STOP interned. 0 or -ENOMEM. */
int table_writer__init(struct table_writer *w, struct unwind_table *t);
/*
 * The rows of l (in address order, appended by row_list__push) written as
 * far as they can no longer change, and taken out of l; with last, all of
 * them. 0 or -ENOMEM.
 */
int table_writer__take(struct table_writer *w, struct row_list *l, bool last);
/* After the last take: the page index closed, arrays cut to size, stats.bytes. */
void table_writer__finish(struct table_writer *w);
void table_writer__free(struct table_writer *w);

#endif
