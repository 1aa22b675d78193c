/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A binary's unwind information (.eh_frame and .debug_frame; x86-64)
 * compiled into tables that a BPF program can search and step with, 4.9's
 * verifier permitting: flat arrays, a bounded search, no map-in-map.
 *
 * Rows: 4 bytes each, the low 16 bits of an address and the index of a
 * rule (a row can hold a push or pop after it: see struct unwind_rule);
 * the address's upper bits are its 64 KiB page, and a page index
 * gives each page's range of rows. Every page that has rows has one at its
 * first byte, so the row of a pc is the last one of its page at or below
 * it: a bisection of at most 16 steps (a page holds at most 2^16 rows),
 * each step one array read, unrolled in the BPF program. Rules are few
 * (tens to a few thousand distinct ones a binary), kept once in a table of
 * their own. Addresses are ELF virtual addresses: run-time pc minus the
 * mapping's load bias (unwind/image.h).
 *
 * On x86-64 the return address is at CFA - 8 in every frame a compiler
 * describes: a rule that says otherwise is one we do not step (STOP). The
 * caller's rsp is the CFA.
 */
#ifndef UNWIND_TABLES_TABLES_H
#define UNWIND_TABLES_TABLES_H

#include <stdbool.h>
#include <stdint.h>

#include "unwind/image.h"

#define UNWIND_TABLE_PAGE_SHIFT 16
/* Bisection steps that find any row of a page: a page holds at most 2^16 rows. */
#define UNWIND_TABLE_STEPS 16
/* Pages at most: a span of 4 GiB of code (libLLVM's is 80 MB). */
#define UNWIND_TABLE_MAX_PAGES (1u << 16)
/* Distinct rules a table may hold: a row's rule is a u16. */
#define UNWIND_TABLE_MAX_RULES (1u << 16)

/* How to find the CFA at a pc, or why the stack ends there. */
enum unwind_cfa {
	/* No FDE covers the pc (code without CFI, padding): the stack ends, marked. */
	UNWIND_CFA_NONE,
	/* CFI we do not step: a CFA expression or register other than rsp and rbp, a
	 * return address not at CFA - 8, an instruction we do not know: ends, marked. */
	UNWIND_CFA_STOP,
	/* The outermost frame (_start, clone's child): the return address is undefined. */
	UNWIND_CFA_END,
	/* CFA = rsp + cfa_off */
	UNWIND_CFA_RSP,
	/* CFA = rbp + cfa_off */
	UNWIND_CFA_RBP,
	/*
	 * A lazy-binding PLT entry (the one CFA expression linkers write):
	 * CFA = rsp + cfa_off, and 8 more once the entry has pushed its index,
	 * when (pc & 15) >= 11.
	 */
	UNWIND_CFA_PLT,
	/*
	 * A signal frame (the 'S' augmentation: glibc's __restore_rt): rsp
	 * points at the kernel's struct rt_sigframe after its return address;
	 * the interrupted rip, rsp and rbp are read from its ucontext.
	 */
	UNWIND_CFA_SIGNAL,
};

/* Where the caller's rbp is. */
enum unwind_rbp {
	UNWIND_RBP_SAME,	/* this frame did not change it */
	UNWIND_RBP_CFA,		/* saved at CFA + rbp_off */
	UNWIND_RBP_LOST,	/* not recoverable: a later rule that needs it ends the stack */
};

/*
 * One distinct rule; what the BPF program steps by. A row may hold two
 * rules: from fold_at bytes past the row's address on (a push or a pop),
 * the CFA is fold_off (8 or -8) further: the lookup applies it.
 */
struct unwind_rule {
	int32_t cfa_off;
	int16_t rbp_off;
	uint8_t cfa;		/* enum unwind_cfa */
	uint8_t rbp;		/* enum unwind_rbp */
	uint8_t fold_at;	/* 0: no fold */
	int8_t fold_off;
	uint16_t zero;		/* padding, kept zero: rules are compared as bytes */
};

struct unwind_row {
	uint16_t addr;		/* ELF vaddr & 0xffff; the page gives the rest */
	uint16_t rule;		/* index in rules; rule 0 is always UNWIND_CFA_NONE */
};

/* What a compile saw and made, for -v, the tests and the budget. */
struct unwind_table_stats {
	uint32_t fdes;			/* FDEs whose rows were compiled */
	uint32_t fdes_refused;		/* failed unwind/cfi.c's checks: their code has no rows */
	uint32_t fdes_outside;		/* empty, or outside every executable segment */
	uint32_t fdes_cut;		/* overlapped by a later FDE, or by the page limit */
	uint32_t programs_stopped;	/* a CFA program that had to stop (bad or unknown op) */
	uint32_t rules_overflow;	/* rows made STOP because the rule table was full */
	uint64_t rows_cfa;		/* rows before folding: where the CFA or rbp rule changes */
	uint64_t rows_stop;		/* of them, STOP */
	uint64_t bytes_covered;		/* bytes of code with a rule other than NONE */
	uint64_t bytes_stop;		/* of them, STOP */
	uint64_t bytes;			/* the table: rows, page index and rules */
	uint32_t fdes_debug_frame;	/* of those collected, from .debug_frame */
	uint32_t fdes_rbp;		/* of those compiled, whose CFA is rbp-based somewhere */
};

struct unwind_table {
	uint64_t base;			/* ELF vaddr of page 0: a multiple of 64 KiB */
	uint32_t nr_pages;
	uint32_t *pages;		/* nr_pages + 1: page p has rows [pages[p], pages[p + 1]) */
	struct unwind_row *rows;
	uint32_t nr_rows;
	struct unwind_rule *rules;
	uint32_t nr_rules;
	struct unwind_table_stats stats;
};

/*
 * Compile the tables of img (its .eh_frame and .debug_frame). Returns
 * 0 with *out (freed with unwind_table__free), -ENOENT if it has no unwind
 * information, -EBADMSG if what it has is unusable as a whole (a section
 * that spends the checks' budget: hostile), or -ENOMEM.
 */
int unwind_table__compile(const struct unwind_image *img, struct unwind_table **out);
void unwind_table__free(struct unwind_table *t);

/*
 * The rule at ELF vaddr pc, found exactly as the BPF program will find it:
 * the page, then UNWIND_TABLE_STEPS bisection steps, then the row's fold
 * (*rule has none left). Returns the row's index, or -1 with *rule set to
 * NONE where no row covers pc.
 */
int64_t unwind_table__lookup(const struct unwind_table *t, uint64_t pc, struct unwind_rule *rule);

/*
 * Whether t holds to the layout the search relies on: page ranges in order
 * and at most 2^16 rows each, a row at each used page's first byte, rows
 * sorted, rule indexes inside the rule table. 0 or -EINVAL.
 */
int unwind_table__verify(const struct unwind_table *t);

/*
 * How many of a binary's functions set up a frame (find their CFA from
 * rbp after the prologue), as a build that keeps frame pointers does in
 * each. keeps: at least UNWIND_FP_KEEPS_TENTHS tenths of them (a
 * frame-pointer walk through this binary is complete; else it needs the
 * tables). The bytes are for -v.
 */
#define UNWIND_FP_KEEPS_TENTHS 6
struct unwind_fp_share {
	uint64_t bytes;			/* code bytes whose CFA is rsp- or rbp-based */
	uint64_t rbp_bytes;		/* of them, CFA = rbp + N */
	uint32_t functions;		/* FDEs compiled */
	uint32_t rbp_frames;		/* functions whose CFA is rbp-based somewhere: frames set up */
	bool keeps;
};
void unwind_table__fp_share(const struct unwind_table *t, struct unwind_fp_share *out);

#endif
