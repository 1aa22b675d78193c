// SPDX-License-Identifier: GPL-2.0
/*
 * A binary's unwind information compiled into tables (tables.h): every FDE
 * checked by unwind/cfi.c, its CFA program run (program.c), the rows of all
 * FDEs merged in address order, their rules interned, and the rows cut
 * into 64 KiB pages. The binary is untrusted: all work is bounded by the
 * size of its unwind section (the checks' budget, a row per instruction at
 * most), and its addresses by its executable segments and a page limit.
 */
#include "unwind/tables/tables_internal.h"

#include "unwind/debugframe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/*
 * Bytes between two FDEs that get no NONE row of their own: the padding
 * compilers put between functions (up to 15 bytes for 16-byte alignment) is
 * never executed, and the row saved there is often a whole row a function
 * (the end of one function and the start of the next both say CFA = rsp + 8).
 */
#define GAP_ABSORB 16
/* A rule table's hash: open addressing over twice the largest table. */
#define RULE_HASH_SIZE (2 * UNWIND_TABLE_MAX_RULES)

struct fde_ref {
	struct cfi_fde f;
	uint64_t off;
	unsigned int sec;	/* enum which */
};

/*
 * Both sections of a binary are read: code built without unwind tables
 * (-fno-asynchronous-unwind-tables -g) has its FDEs in .debug_frame, while
 * the C runtime's objects linked into it (crt1.o: _start) bring an .eh_frame.
 * Where both describe a function, .eh_frame's FDE is the one used.
 */
enum which { DEBUG_FRAME, EH_FRAME, NR_SECTIONS };

struct compile {
	const struct unwind_image *img;
	struct cfi_section s[NR_SECTIONS];
	unsigned char *eh;	/* our copy of .eh_frame */
	size_t eh_size;
	struct debug_frame df;	/* .debug_frame, its CIEs repaired, its FDEs checked and indexed */
	struct fde_ref *fdes;
	size_t nr_fdes, cap_fdes;
	struct row_list rows;
	struct unwind_table *t;
	uint32_t *rule_hash;	/* index + 1 of each rule by hash, 0 where free */
};

static int accept_indirect(void *ctx, uint64_t vaddr)
{
	return 0;
}

/*
 * .eh_frame by its section header, or by .eh_frame_hdr where a file has no
 * section headers. Returns 0, -ENOENT or -ENOMEM.
 */
static int read_eh_frame(struct compile *c)
{
	const struct unwind_image *img = c->img;
	uint64_t vaddr = 0;
	int err;

	err = unwind_image__copy_section(img, ".eh_frame", &c->eh, &c->eh_size);
	if (!err && unwind_image__section_addr(img, ".eh_frame", &vaddr)) {
		free(c->eh);
		c->eh = NULL;
		err = -ENOENT;
	}
	if (err && err != -ENOMEM && img->has_table && img->eh_size <= IMAGE_MAX_TABLE) {
		c->eh = malloc(img->eh_size + 8);
		if (!c->eh)
			return -ENOMEM;
		err = unwind_image__pread(img, img->eh_frame, c->eh, img->eh_size);
		c->eh_size = img->eh_size;
		vaddr = img->eh_frame;
		if (err) {
			free(c->eh);
			c->eh = NULL;
			c->eh_size = 0;
		}
	}
	if (err)
		return err == -ENOMEM ? err : -ENOENT;
	cfi__init(&c->s[EH_FRAME], c->eh, c->eh_size, vaddr, CFI_EH_FRAME);
	/* Indirect pointers (a C++ personality) make libunwind read a word; we read none. */
	c->s[EH_FRAME].indirect = accept_indirect;
	return 0;
}

/* .eh_frame and .debug_frame, those the file has. Returns 0, -ENOENT (neither) or -ENOMEM. */
static int read_sections(struct compile *c)
{
	int err = read_eh_frame(c);

	if (err == -ENOMEM)
		return err;
	/*
	 * The libunwind path's reading of it: clang's version 4 CIEs are
	 * rewritten as version 3, which unwind/cfi.c checks, and which mean the
	 * same; FDEs that fail the checks are left out of its index.
	 */
	err = debug_frame__load(&c->df, c->img, NULL);
	if (err == -ENOMEM)
		return err;
	c->t->stats.fdes_refused += c->df.bad_fdes;
	/* .debug_frame's addresses are absolute: no section address */
	if (!err)
		cfi__init(&c->s[DEBUG_FRAME], c->df.data, c->df.size, 0, CFI_DEBUG_FRAME);
	return c->eh || c->df.data ? 0 : -ENOENT;
}

/*
 * The .eh_frame entry at off: *next is the offset after it, *fde whether it
 * is an FDE. Returns -1 at a terminator (length 0), the end, or lost framing.
 */
static int next_entry(const struct cfi_section *s, uint64_t off, uint64_t size, uint64_t *next,
		      bool *fde)
{
	struct cfi_cur c = cfi__cur(s, off, size);
	uint64_t len = cfi__get(&c, 4), id;
	bool dwarf64 = len == 0xffffffff;

	if (c.bad || !len)
		return -1;
	if (dwarf64)
		len = cfi__get(&c, 8);
	if (c.bad || len > c.end - c.pos)
		return -1;
	*next = c.pos + len;
	id = cfi__get(&c, dwarf64 ? 8 : 4);
	*fde = id != 0;
	return c.bad ? -1 : 0;
}

/* Cut [*begin, *begin + *range) to the executable segment that holds its start. */
static bool in_code(const struct unwind_image *img, uint64_t begin, uint64_t *range)
{
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];
		uint64_t left;

		if (!(ph->p_flags & PF_X) || begin < ph->p_vaddr ||
		    begin - ph->p_vaddr >= ph->p_memsz)
			continue;
		left = ph->p_memsz - (begin - ph->p_vaddr);
		if (*range > left)
			*range = left;
		return true;
	}
	return false;
}

/* The FDE at off if it passes the checks and covers code. 0, -EBADMSG or -ENOMEM. */
static int add_fde(struct compile *c, enum which which, uint64_t off)
{
	struct unwind_table_stats *st = &c->t->stats;
	struct cfi_fde f;
	int err;

	err = cfi__check_fde(&c->s[which], off, &f);
	if (err == -E2BIG)
		return -EBADMSG;	/* the budget is spent: hostile, none of it is used */
	if (err) {
		st->fdes_refused++;
		return 0;
	}
	/* pc 0: code the linker discarded */
	if (!f.pc_begin || !f.pc_range || !in_code(c->img, f.pc_begin, &f.pc_range)) {
		st->fdes_outside++;
		return 0;
	}
	if (c->nr_fdes == c->cap_fdes &&
	    tables__grow((void **)&c->fdes, &c->cap_fdes, sizeof(*c->fdes)))
		return -ENOMEM;
	c->fdes[c->nr_fdes].f = f;
	c->fdes[c->nr_fdes].sec = which;
	c->fdes[c->nr_fdes++].off = off;
	st->fdes_debug_frame += which == DEBUG_FRAME;
	return 0;
}

/* Every FDE of both sections that passes the checks and covers code. 0, -EBADMSG or -ENOMEM. */
static int collect_fdes(struct compile *c)
{
	uint64_t off = 0, next;
	bool is_fde;
	int err = 0;

	/* Each entry moves off forward by at least 8 bytes: bounded by the section. */
	while (!err && off < c->eh_size &&
	       !next_entry(&c->s[EH_FRAME], off, c->eh_size, &next, &is_fde)) {
		if (is_fde)
			err = add_fde(c, EH_FRAME, off);
		off = next;
	}
	for (size_t i = 0; !err && i < c->df.nr_index; i++)
		err = add_fde(c, DEBUG_FRAME, (uint32_t)c->df.index[i].fde);
	return err;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde_ref *x = a, *y = b;

	if (x->f.pc_begin != y->f.pc_begin)
		return x->f.pc_begin < y->f.pc_begin ? -1 : 1;
	/* Of two at one address the last is used: .eh_frame's. */
	if (x->sec != y->sec)
		return x->sec < y->sec ? -1 : 1;
	return (x->off > y->off) - (x->off < y->off);
}

/* All FDEs' rows in address order; where two overlap, the later start wins (cmp_fde). */
static int run_fdes(struct compile *c)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	struct unwind_table_stats *st = &c->t->stats;
	int err;

	if (!c->nr_fdes)
		return 0;
	qsort(c->fdes, c->nr_fdes, sizeof(*c->fdes), cmp_fde);
	for (size_t i = 0; i < c->nr_fdes; i++) {
		const struct cfi_fde *f = &c->fdes[i].f;
		uint64_t end = f->pc_begin + f->pc_range, next = UINT64_MAX;
		bool stopped = false;
		size_t first_row = c->rows.n;

		if (i + 1 < c->nr_fdes)
			next = c->fdes[i + 1].f.pc_begin;
		if (next < end) {
			st->fdes_cut++;
			end = next;
			if (end == f->pc_begin)
				continue;
		}
		err = cfa_program__run(&c->s[c->fdes[i].sec], f, end, &c->rows, &stopped);
		if (err)
			return err;
		st->fdes++;
		st->programs_stopped += stopped;
		/* A function that sets up a frame: its CFA is rbp-based somewhere in it. */
		for (size_t r = first_row; r < c->rows.n; r++)
			if (c->rows.v[r].rule.cfa == UNWIND_CFA_RBP) {
				st->fdes_rbp++;
				break;
			}
		if (next - end > GAP_ABSORB) {
			err = row_list__push(&c->rows, end, &none);
			if (err)
				return err;
		}
	}
	return 0;
}

/* The index of rule r in the table, added if new; STOP's once the table is full. */
static int intern(struct compile *c, const struct unwind_rule *r, uint16_t *index)
{
	struct unwind_table *t = c->t;
	uint64_t key[2] = { 0 };
	uint32_t h;

	memcpy(key, r, sizeof(*r));
	h = ((key[0] ^ key[1] * 0xff51afd7ed558ccdull) * 0x9e3779b97f4a7c15ull) >> 47; /* 17 bits */
	for (;;) {
		uint32_t slot = c->rule_hash[h];

		if (!slot)
			break;
		if (!memcmp(&t->rules[slot - 1], r, sizeof(*r))) {
			*index = slot - 1;
			return 0;
		}
		h = (h + 1) % RULE_HASH_SIZE;
	}
	if (t->nr_rules == UNWIND_TABLE_MAX_RULES) {
		static const struct unwind_rule stop = { .cfa = UNWIND_CFA_STOP };

		t->stats.rules_overflow++;
		return intern(c, &stop, index);	/* interned early: see unwind_table__compile */
	}
	t->rules[t->nr_rules] = *r;
	c->rule_hash[h] = ++t->nr_rules;
	*index = t->nr_rules - 1;
	return 0;
}

static void emit(struct unwind_table *t, uint64_t page_start, uint64_t addr, uint16_t rule)
{
	t->rows[t->nr_rows].addr = addr - page_start;
	t->rows[t->nr_rows++].rule = rule;
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
	       !((a->addr ^ b->addr) >> UNWIND_TABLE_PAGE_SHIFT) &&
	       b->addr - a->addr <= UINT8_MAX && a->rule.rbp == b->rule.rbp &&
	       a->rule.rbp_off == b->rule.rbp_off && (d == 8 || d == -8);
}

static void fold_rows(struct row_list *l)
{
	size_t out = 0;

	for (size_t i = 0; i < l->n; i++) {
		l->v[out] = l->v[i];
		if (i + 1 < l->n && folds(&l->v[i], &l->v[i + 1])) {
			l->v[out].rule.fold_at = l->v[i + 1].addr - l->v[i].addr;
			l->v[out].rule.fold_off = l->v[i + 1].rule.cfa_off - l->v[i].rule.cfa_off;
			i++;
		}
		out++;
	}
	l->n = out;
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

/* The rows cut into pages, each page that has any starting with a row at its first byte. */
static int make_pages(struct compile *c)
{
	struct unwind_table *t = c->t;
	const struct full_row *v = c->rows.v;
	size_t n = c->rows.n, j = 0;
	struct unwind_rule carry = { .cfa = UNWIND_CFA_NONE };
	uint64_t span;
	uint16_t rule;
	int err;

	if (!n)
		return 0;
	t->base = v[0].addr & ~(((uint64_t)1 << UNWIND_TABLE_PAGE_SHIFT) - 1);
	span = (v[n - 1].addr - t->base) >> UNWIND_TABLE_PAGE_SHIFT;
	t->nr_pages = span < UNWIND_TABLE_MAX_PAGES ? span + 1 : UNWIND_TABLE_MAX_PAGES;
	t->pages = calloc(t->nr_pages + 1, sizeof(*t->pages));
	t->rows = malloc((n + t->nr_pages) * sizeof(*t->rows));
	if (!t->pages || !t->rows)
		return -ENOMEM;
	for (uint32_t p = 0; p < t->nr_pages; p++) {
		uint64_t start = t->base + ((uint64_t)p << UNWIND_TABLE_PAGE_SHIFT);
		uint64_t limit = start + (1u << UNWIND_TABLE_PAGE_SHIFT);
		bool has = j < n && v[j].addr < limit;

		t->pages[p] = t->nr_rows;
		if (!has && carry.cfa == UNWIND_CFA_NONE)
			continue;	/* no code here: an empty page is NONE */
		if (!has || v[j].addr != start) {
			/* the rule the last page ended with, repeated at this one's first byte */
			err = intern(c, &carry, &rule);
			if (err)
				return err;
			emit(t, start, start, rule);
		}
		for (; j < n && v[j].addr < limit; j++) {
			err = intern(c, &v[j].rule, &rule);
			if (err)
				return err;
			emit(t, start, v[j].addr, rule);
			carry = unfolded(&v[j].rule);
		}
	}
	t->pages[t->nr_pages] = t->nr_rows;
	if (j < n)
		t->stats.fdes_cut++;	/* code past the page limit has no rows */
	return 0;
}

/* What share of the code can be stepped, before folding. */
static void count(struct compile *c)
{
	struct unwind_table_stats *st = &c->t->stats;
	const struct full_row *v = c->rows.v;

	st->rows_cfa = c->rows.n;
	for (size_t i = 0; i + 1 < c->rows.n; i++) {
		uint64_t len = v[i + 1].addr - v[i].addr;

		if (v[i].rule.cfa == UNWIND_CFA_NONE)
			continue;
		st->bytes_covered += len;
		if (v[i].rule.cfa == UNWIND_CFA_STOP) {
			st->rows_stop++;
			st->bytes_stop += len;
		}
	}
}

int unwind_table__compile(const struct unwind_image *img, struct unwind_table **out)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	static const struct unwind_rule stop = { .cfa = UNWIND_CFA_STOP };
	struct compile c = { .img = img };
	uint16_t index;
	int err;

	*out = NULL;
	c.t = calloc(1, sizeof(*c.t));
	c.rule_hash = calloc(RULE_HASH_SIZE, sizeof(*c.rule_hash));
	if (c.t)
		c.t->rules = malloc(UNWIND_TABLE_MAX_RULES * sizeof(*c.t->rules));
	if (!c.t || !c.rule_hash || !c.t->rules) {
		err = -ENOMEM;
		goto out;
	}
	/* Rule 0 is NONE (an empty table entry reads as it), then STOP, for a full table. */
	intern(&c, &none, &index);
	intern(&c, &stop, &index);
	err = read_sections(&c);
	if (!err)
		err = collect_fdes(&c);
	if (!err)
		err = run_fdes(&c);
	if (!err) {
		count(&c);
		fold_rows(&c.rows);
		err = make_pages(&c);
	}
	if (err)
		goto out;
	/* The rule table was allocated for the most a table may hold: keep what is used. */
	c.t->rules = realloc(c.t->rules, c.t->nr_rules * sizeof(*c.t->rules)) ?: c.t->rules;
	c.t->stats.bytes = (uint64_t)c.t->nr_rows * sizeof(*c.t->rows) +
			   (uint64_t)(c.t->nr_pages + 1) * sizeof(*c.t->pages) +
			   (uint64_t)c.t->nr_rules * sizeof(*c.t->rules);
	*out = c.t;
	c.t = NULL;
out:
	unwind_table__free(c.t);
	free(c.rule_hash);
	free(c.rows.v);
	free(c.fdes);
	free(c.eh);
	debug_frame__free(&c.df);
	return err;
}

void unwind_table__free(struct unwind_table *t)
{
	if (!t)
		return;
	free(t->pages);
	free(t->rows);
	free(t->rules);
	free(t);
}
