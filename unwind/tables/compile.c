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
/* CIEs compared before a new one is kept: a linker merges equal ones, leaving a few. */
#define CIE_RECENT 8

/*
 * Both sections of a binary are read: code built without unwind tables
 * (-fno-asynchronous-unwind-tables -g) has its FDEs in .debug_frame, while
 * the C runtime's objects linked into it (crt1.o: _start) bring an .eh_frame.
 * Where both describe a function, .eh_frame's FDE is used.
 */
enum which { DEBUG_FRAME, EH_FRAME, NR_SECTIONS };

/* What a checked FDE takes from its CIE: shared by most FDEs, kept once. */
struct cie_ref {
	uint64_t insn, end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool signal;
	uint8_t sec;		/* enum which */
	struct cfi_window bytes;	/* .eh_frame's: a copy of [insn, end) */
};

/*
 * A checked FDE in 24 bytes (libLLVM has 95,000): its offsets fit 32 bits
 * (sections are at most IMAGE_MAX_TABLE), its range too (cut there: no
 * function is 4 GiB), the rest is its CIE's.
 */
struct fde_ref {
	uint64_t pc_begin;
	uint32_t pc_range;
	uint32_t insn, end;
	uint32_t cie;		/* index in cies */
};

struct compile {
	const struct unwind_image *img;
	struct cfi_section s[NR_SECTIONS];
	struct eh_window ew;	/* .eh_frame, read through a window */
	bool eh;		/* the file has one */
	struct debug_frame df;	/* .debug_frame, its CIEs repaired, its FDEs checked and indexed */
	struct fde_ref *fdes;
	size_t nr_fdes, cap_fdes;
	struct cie_ref *cies;
	size_t nr_cies, cap_cies;
	struct row_list rows;	/* rows not yet written: those of the page being filled */
	struct table_writer w;
	struct unwind_table *t;
};

static int accept_indirect(void *ctx, uint64_t vaddr)
{
	return 0;
}

/*
 * .eh_frame by its section header, or by .eh_frame_hdr where a file has no
 * section headers. Returns 0 or -ENOENT.
 */
static int read_eh_frame(struct compile *c)
{
	const struct unwind_image *img = c->img;
	uint64_t vaddr, off, size;

	if (!unwind_image__section_place(img, ".eh_frame", &off, &size) &&
	    !unwind_image__section_addr(img, ".eh_frame", &vaddr)) {
		eh_window__open(&c->ew, img, vaddr, size);
	} else if (img->has_table && img->eh_size <= IMAGE_MAX_TABLE) {
		eh_window__open(&c->ew, img, img->eh_frame, img->eh_size);
		vaddr = img->eh_frame;
	} else {
		return -ENOENT;
	}
	c->eh = true;
	cfi__init_windows(&c->s[EH_FRAME], NULL, 0, vaddr, CFI_EH_FRAME);
	/* as cfi__init's for the section whole */
	c->s[EH_FRAME].budget = c->ew.size * 8 + 65536;
	/* Indirect pointers (a C++ personality) make libunwind read a word; we read none. */
	c->s[EH_FRAME].indirect = accept_indirect;
	return 0;
}

/* .eh_frame and .debug_frame, those the file has. Returns 0, -ENOENT (neither) or -ENOMEM. */
static int read_sections(struct compile *c)
{
	int err;

	read_eh_frame(c);
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

/*
 * A copy of an .eh_frame CIE's instructions, from the window its FDE was
 * checked through, for when its FDEs run (that window is gone by then).
 * None where no window holds them: those FDEs' programs stop. 0 or -ENOMEM.
 */
static int keep_cie_bytes(const struct cfi_section *s, struct cie_ref *k)
{
	for (unsigned int i = 0; i < s->nr_windows && k->end >= k->insn; i++) {
		const struct cfi_window *w = &s->windows[i];
		size_t n = k->end - k->insn;
		unsigned char *p;

		if (k->insn < w->off || k->end > w->off + w->size)
			continue;
		p = malloc(n ? n : 1);
		if (!p)
			return -ENOMEM;
		memcpy(p, w->data + (k->insn - w->off), n);
		k->bytes = (struct cfi_window){ .off = k->insn, .data = p, .size = n };
		return 0;
	}
	return 0;
}

/* The index of f's CIE in c->cies, kept if new. 0 or -ENOMEM. */
static int cie_of(struct compile *c, enum which which, const struct cfi_fde *f, uint32_t *index)
{
	struct cie_ref k = {
		.insn = f->cie_insn, .end = f->cie_end, .code_align = f->code_align,
		.data_align = f->data_align, .ra_reg = f->ra_reg, .fde_enc = f->fde_enc,
		.signal = f->signal, .sec = which,
	};

	for (size_t i = c->nr_cies; i > 0 && c->nr_cies - i < CIE_RECENT; i--) {
		const struct cie_ref *x = &c->cies[i - 1];

		if (x->insn == k.insn && x->end == k.end && x->code_align == k.code_align &&
		    x->data_align == k.data_align && x->ra_reg == k.ra_reg &&
		    x->fde_enc == k.fde_enc && x->signal == k.signal && x->sec == k.sec) {
			*index = i - 1;
			return 0;
		}
	}
	if (c->nr_cies == c->cap_cies &&
	    tables__grow((void **)&c->cies, &c->cap_cies, sizeof(*c->cies)))
		return -ENOMEM;
	if (which == EH_FRAME && keep_cie_bytes(&c->s[EH_FRAME], &k))
		return -ENOMEM;
	c->cies[c->nr_cies] = k;
	*index = c->nr_cies++;
	return 0;
}

/* The FDE at off if it passes the checks and covers code. 0, -EBADMSG or -ENOMEM. */
static int add_fde(struct compile *c, enum which which, uint64_t off)
{
	struct unwind_table_stats *st = &c->t->stats;
	struct fde_ref *r;
	struct cfi_fde f;
	int err;

	err = cfi__check_fde(&c->s[which], off, &f);
	if (err == -E2BIG)
		return -EBADMSG;	/* the budget is spent: hostile, none of it is used */
	if (err || f.end > UINT32_MAX) {
		st->fdes_refused++;
		return 0;
	}
	/* pc 0: code the linker discarded */
	if (!f.pc_begin || !f.pc_range || !in_code(c->img, f.pc_begin, &f.pc_range)) {
		st->fdes_outside++;
		return 0;
	}
	if (c->nr_fdes == c->cap_fdes)
		return 0;	/* not counted by collect_fdes: cannot be */
	r = &c->fdes[c->nr_fdes];
	*r = (struct fde_ref){ .pc_begin = f.pc_begin,
			       .pc_range = f.pc_range < UINT32_MAX ? f.pc_range : UINT32_MAX,
			       .insn = f.insn, .end = f.end };
	err = cie_of(c, which, &f, &r->cie);
	if (err)
		return err;
	c->nr_fdes++;
	st->fdes_debug_frame += which == DEBUG_FRAME;
	return 0;
}

/*
 * The checked FDE r stands for, whole again, and the section it is in, its
 * bytes readable there: NULL if they are not (the file changed meanwhile).
 */
static const struct cfi_section *fde_at(struct compile *c, const struct fde_ref *r,
					struct cfi_fde *f)
{
	const struct cie_ref *k = &c->cies[r->cie];

	*f = (struct cfi_fde){
		.end = r->end, .pc_begin = r->pc_begin, .pc_range = r->pc_range,
		.insn = r->insn, .cie_insn = k->insn, .cie_end = k->end,
		.code_align = k->code_align, .data_align = k->data_align, .ra_reg = k->ra_reg,
		.fde_enc = k->fde_enc, .signal = k->signal,
	};
	if (k->sec == EH_FRAME &&
	    eh_window__fde(&c->ew, &c->s[EH_FRAME], r->insn, r->end, &k->bytes))
		return NULL;
	return &c->s[k->sec];
}

/* The entries of .eh_frame, FDE or not: fn(c, off) for each FDE, until it fails. */
static int each_eh_fde(struct compile *c, int (*fn)(struct compile *c, uint64_t off))
{
	struct cfi_section *s = &c->s[EH_FRAME];
	uint64_t off = 0, next;
	bool is_fde;
	int err = 0;

	/* Each entry moves off forward by at least 8 bytes: bounded by the section. */
	while (!err && c->eh && off < c->ew.size &&
	       !eh_window__entry(&c->ew, s, off, &next, &is_fde)) {
		if (is_fde)
			err = fn(c, off);
		off = next;
	}
	return err;
}

static int count_one(struct compile *c, uint64_t off)
{
	(void)off;
	c->cap_fdes++;
	return 0;
}

static int add_eh_fde(struct compile *c, uint64_t off)
{
	return add_fde(c, EH_FRAME, off);
}

/*
 * Every FDE of both sections that passes the checks and covers code, in an
 * array of the size counted first (doubling left up to half of it unused).
 * 0, -EBADMSG or -ENOMEM.
 */
static int collect_fdes(struct compile *c)
{
	int err;

	each_eh_fde(c, count_one);
	c->cap_fdes += c->df.nr_index;
	c->fdes = malloc((c->cap_fdes ? c->cap_fdes : 1) * sizeof(*c->fdes));
	if (!c->fdes)
		return -ENOMEM;
	err = each_eh_fde(c, add_eh_fde);
	for (size_t i = 0; !err && i < c->df.nr_index; i++)
		err = add_fde(c, DEBUG_FRAME, (uint32_t)c->df.index[i].fde);
	return err;
}

/* Two FDEs by their indexes in c's fdes (the context). */
static int cmp_fde(const void *a, const void *b, void *ctx)
{
	const struct compile *c = ctx;
	const struct fde_ref *x = &c->fdes[*(const uint32_t *)a];
	const struct fde_ref *y = &c->fdes[*(const uint32_t *)b];
	unsigned int xs = c->cies[x->cie].sec, ys = c->cies[y->cie].sec;

	if (x->pc_begin != y->pc_begin)
		return x->pc_begin < y->pc_begin ? -1 : 1;
	/* Of two at one address the last is used: .eh_frame's. */
	if (xs != ys)
		return xs < ys ? -1 : 1;
	return (x->insn > y->insn) - (x->insn < y->insn);
}

/*
 * All FDEs' rows in address order, where two overlap the later start
 * winning (cmp_fde), written page by page as they come.
 */
static int run_fdes(struct compile *c)
{
	static const struct unwind_rule none = { .cfa = UNWIND_CFA_NONE };
	struct unwind_table_stats *st = &c->t->stats;
	uint32_t *order;
	int err = 0;

	/*
	 * Their indexes sorted, not the FDEs: glibc's qsort sorts through a copy
	 * of what it sorts, which for libLLVM's 95,000 FDEs was 3 MB more at the
	 * compile's peak.
	 */
	order = malloc((c->nr_fdes ? c->nr_fdes : 1) * sizeof(*order));
	if (!order)
		return -ENOMEM;
	for (size_t i = 0; i < c->nr_fdes; i++)
		order[i] = i;
	if (c->nr_fdes)
		qsort_r(order, c->nr_fdes, sizeof(*order), cmp_fde, c);
	c->ew.bytes_read = 0;	/* this pass's reads, not the entries' first */
	for (size_t i = 0; i < c->nr_fdes && !err; i++) {
		struct cfi_fde f;
		const struct cfi_section *s = fde_at(c, &c->fdes[order[i]], &f);
		uint64_t end = f.pc_begin + f.pc_range, next = UINT64_MAX;
		bool stopped = false;
		size_t first_row = c->rows.n;

		if (i + 1 < c->nr_fdes)
			next = c->fdes[order[i + 1]].pc_begin;
		if (!s) {
			err = -EBADMSG;
			break;
		}
		if (next < end) {
			st->fdes_cut++;
			end = next;
			if (end == f.pc_begin)
				continue;
		}
		err = cfa_program__run(s, &f, end, &c->rows, &stopped);
		if (err)
			break;
		st->fdes++;
		st->programs_stopped += stopped;
		/* A function that sets up a frame: its CFA is rbp-based somewhere in it. */
		for (size_t r = first_row; r < c->rows.n; r++)
			if (c->rows.v[r].rule.cfa == UNWIND_CFA_RBP) {
				st->fdes_rbp++;
				break;
			}
		if (next - end > GAP_ABSORB)
			err = row_list__push(&c->rows, end, &none);
		if (!err)
			err = table_writer__take(&c->w, &c->rows, false);
	}
	free(order);
	return err ?: table_writer__take(&c->w, &c->rows, true);
}

int unwind_table__compile(const struct unwind_image *img, struct unwind_table **out)
{
	struct compile c = { .img = img };
	int err;

	*out = NULL;
	c.t = calloc(1, sizeof(*c.t));
	err = c.t ? table_writer__init(&c.w, c.t) : -ENOMEM;
	if (!err)
		err = read_sections(&c);
	if (!err)
		err = collect_fdes(&c);
	if (!err)
		err = run_fdes(&c);
	if (err)
		goto out;
	table_writer__finish(&c.w);
	*out = c.t;
	c.t = NULL;
out:
	unwind_table__free(c.t);
	table_writer__free(&c.w);
	free(c.rows.v);
	free(c.fdes);
	for (size_t i = 0; i < c.nr_cies; i++)
		free((void *)c.cies[i].bytes.data);
	free(c.cies);
	eh_window__close(&c.ew);
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
