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

/* .eh_frame through a window of the file (ehwindow.c). */
#define EH_CIE_SLOTS 8
struct eh_cie_slot {
	uint64_t off;
	size_t len;
	unsigned char *data;
};
struct eh_window {
	const struct unwind_image *img;
	uint64_t vaddr, size;		/* the section: read by address, as libunwind reads it */
	unsigned char *chunk;		/* section bytes [at, at + len) */
	uint64_t at;
	size_t len, cap;
	struct eh_cie_slot cie[EH_CIE_SLOTS];
	unsigned int next_cie;
	uint64_t bytes_read;		/* since the last reset: against a copy of it whole */
};

/* The .eh_frame of size bytes at vaddr in img; nothing is read yet. */
void eh_window__open(struct eh_window *w, const struct unwind_image *img, uint64_t vaddr,
		     uint64_t size);
void eh_window__close(struct eh_window *w);
/*
 * The entry at off made readable in s's windows, with its CIE if it is an
 * FDE: *next is the offset after it, *fde whether it is one. 0, or -1 at a
 * terminator, the end, lost framing or an unreadable file.
 */
int eh_window__entry(struct eh_window *w, struct cfi_section *s, uint64_t off, uint64_t *next,
		     bool *fde);
/* An FDE's instructions [insn, end) and its CIE's (cie) readable in s. 0 or -EFAULT. */
int eh_window__fde(struct eh_window *w, struct cfi_section *s, uint64_t insn, uint64_t end,
		   const struct cfi_window *cie);

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
