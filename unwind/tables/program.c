// SPDX-License-Identifier: GPL-2.0
/*
 * A DWARF CFA program run into rows: the register rules at each address
 * of an FDE, as DWARF 5 section 6.4.2 defines them (readelf and libdw read
 * them so), reduced to what the BPF program steps by. Only the CFA, the
 * return address and rbp matter on x86-64: the other registers' rules are
 * read past.
 */
#include "unwind/tables/tables_internal.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* DWARF register numbers of x86-64 (psABI, figure 3.36). */
#define REG_RBP 6
#define REG_RSP 7
/* Nested DW_CFA_remember_state, as unwind/cfi.c allows: real code nests 1 or 2. */
#define MAX_STATES 64

enum how { HOW_SAME, HOW_UNDEF, HOW_OFFSET, HOW_OTHER };

struct reg_rule {
	uint8_t how;		/* enum how */
	int64_t off;		/* HOW_OFFSET: saved at CFA + off */
};

enum cfa_how { CFA_REG, CFA_PLT, CFA_EXPR };

struct state {
	uint8_t cfa_how;	/* enum cfa_how */
	uint64_t cfa_reg;
	int64_t cfa_off;
	struct reg_rule rbp, ra;
};

struct run {
	const struct cfi_fde *f;
	struct state cur, init;	/* init: after the CIE's instructions (DW_CFA_restore) */
	unsigned int depth;
	uint64_t loc, end;
	bool in_cie;
	bool done;		/* past the end: the rest cannot change a row we keep */
	/* Last, and not cleared: only saved[0, depth) is ever read (3 KB an FDE otherwise). */
	struct state saved[MAX_STATES];
};

int tables__grow(void **v, size_t *cap, size_t size)
{
	size_t n = *cap ? *cap * 2 : 1024;
	void *p = n > SIZE_MAX / 2 / size ? NULL : realloc(*v, n * size);

	if (!p)
		return -ENOMEM;
	*v = p;
	*cap = n;
	return 0;
}

int row_list__push(struct row_list *l, uint64_t addr, const struct unwind_rule *rule)
{
	if (l->n && addr < l->v[l->n - 1].addr)
		return 0;
	if (l->n && addr == l->v[l->n - 1].addr) {
		/* The later rule at one address wins; it may now equal the row before. */
		l->n--;
	}
	if (l->n && !memcmp(&l->v[l->n - 1].rule, rule, sizeof(*rule)))
		return 0;
	if (l->n == l->cap && tables__grow((void **)&l->v, &l->cap, sizeof(*l->v)))
		return -ENOMEM;
	l->v[l->n].addr = addr;
	l->v[l->n++].rule = *rule;
	return 0;
}

/*
 * The CFA expression of a lazy PLT entry as ld writes it (elf_x86_64
 * eh_frame_plt): DW_OP_breg7 (rsp) K; DW_OP_breg16 (rip) 0; DW_OP_lit15;
 * DW_OP_and; DW_OP_lit11; DW_OP_ge; DW_OP_lit3; DW_OP_shl; DW_OP_plus.
 * Anything else is an expression we do not step.
 */
static uint8_t cfa_expression(struct cfi_cur *c, int64_t *off)
{
	static const unsigned char tail[] = {
		0x80, 0x00, 0x3f, 0x1a, 0x3b, 0x2a, 0x33, 0x24, 0x22,
	};
	uint64_t len = cfi__uleb(c), start = c->pos;
	uint8_t how = CFA_EXPR;

	if (c->bad || len > c->end - c->pos) {
		c->bad = true;
		return CFA_EXPR;
	}
	if (len >= 2 + sizeof(tail) && cfi__get(c, 1) == 0x77) {
		int64_t k = cfi__sleb(c);
		unsigned int i;

		for (i = 0; i < sizeof(tail) && c->pos < start + len; i++)
			if (cfi__get(c, 1) != tail[i])
				break;
		if (!c->bad && i == sizeof(tail) && c->pos == start + len) {
			how = CFA_PLT;
			*off = k;
		}
	}
	c->bad = false;		/* what was read stays inside len: checked above */
	c->pos = start + len;
	return how;
}

/* An expression block of a register rule: skipped. */
static void skip_block(struct cfi_cur *c)
{
	uint64_t len = cfi__uleb(c);

	if (c->bad || len > c->end - c->pos)
		c->bad = true;
	else
		c->pos += len;
}

static struct reg_rule *reg_of(struct run *r, uint64_t reg)
{
	if (reg == REG_RBP)
		return &r->cur.rbp;
	if (reg == r->f->ra_reg)
		return &r->cur.ra;
	return NULL;
}

static void set_reg(struct run *r, uint64_t reg, uint8_t how, int64_t off)
{
	struct reg_rule *rr = reg_of(r, reg);

	if (rr) {
		rr->how = how;
		rr->off = off;
	}
}

static void restore_reg(struct run *r, uint64_t reg)
{
	if (reg == REG_RBP)
		r->cur.rbp = r->init.rbp;
	else if (reg == r->f->ra_reg)
		r->cur.ra = r->init.ra;
}

/* The rule the BPF program steps by, from the state of one row. */
static void reduce(const struct run *r, struct unwind_rule *u)
{
	const struct state *st = &r->cur;

	memset(u, 0, sizeof(*u));
	if (r->f->signal) {
		u->cfa = UNWIND_CFA_SIGNAL;
		return;
	}
	if (st->ra.how == HOW_UNDEF) {
		u->cfa = UNWIND_CFA_END;
		return;
	}
	u->cfa = UNWIND_CFA_STOP;
	if (st->ra.how != HOW_OFFSET || st->ra.off != -8)
		return;
	if (st->cfa_off < INT32_MIN || st->cfa_off > INT32_MAX)
		return;
	if (st->cfa_how == CFA_PLT)
		u->cfa = UNWIND_CFA_PLT;
	else if (st->cfa_how == CFA_REG && st->cfa_reg == REG_RSP)
		u->cfa = UNWIND_CFA_RSP;
	else if (st->cfa_how == CFA_REG && st->cfa_reg == REG_RBP)
		u->cfa = UNWIND_CFA_RBP;
	else
		return;
	u->cfa_off = st->cfa_off;
	if (st->rbp.how == HOW_SAME) {
		u->rbp = UNWIND_RBP_SAME;
	} else if (st->rbp.how == HOW_OFFSET && st->rbp.off >= INT16_MIN &&
		   st->rbp.off <= INT16_MAX) {
		u->rbp = UNWIND_RBP_CFA;
		u->rbp_off = st->rbp.off;
	} else {
		u->rbp = UNWIND_RBP_LOST;
	}
}

/* The row of [r->loc, to): pushed, then the location moves. Past the end, the run is done. */
static int advance(struct run *r, struct row_list *out, uint64_t to, bool *bad)
{
	struct unwind_rule u;
	int err;

	if (r->in_cie || to < r->loc) {
		*bad = true;	/* CIEs have no address; DWARF's locations only go forward */
		return 0;
	}
	if (to == r->loc)
		return 0;
	reduce(r, &u);
	err = row_list__push(out, r->loc, &u);
	if (err)
		return err;
	if (to >= r->end)
		r->done = true;
	r->loc = to;
	return 0;
}

static int advance_by(struct run *r, struct row_list *out, uint64_t delta, bool *bad)
{
	uint64_t d;

	if (__builtin_mul_overflow(delta, r->f->code_align, &d) || d > UINT64_MAX - r->loc) {
		r->done = true;		/* beyond any address: the rest is past the end */
		d = r->end - r->loc;
	}
	return advance(r, out, r->loc + d, bad);
}

/* a * b as the machine wraps it: hostile factors must not be undefined behaviour. */
static int64_t mul(uint64_t a, int64_t b)
{
	return (int64_t)(a * (uint64_t)b);
}

/* One instruction. Returns 0 or -ENOMEM; c->bad or *bad where the run cannot go on. */
static int step(struct run *r, struct cfi_cur *c, struct row_list *out, bool *bad)
{
	const struct cfi_fde *f = r->f;
	uint8_t op = cfi__get(c, 1);
	uint64_t reg, v;
	int64_t sv;

	if (c->bad)
		return 0;
	switch (op & 0xc0) {
	case 0x40:		/* DW_CFA_advance_loc */
		return advance_by(r, out, op & 0x3f, bad);
	case 0x80:		/* DW_CFA_offset */
		v = cfi__uleb(c);
		set_reg(r, op & 0x3f, HOW_OFFSET, mul(v, f->data_align));
		return 0;
	case 0xc0:		/* DW_CFA_restore */
		restore_reg(r, op & 0x3f);
		return 0;
	}
	switch (op) {
	case 0x00:		/* DW_CFA_nop */
		break;
	case 0x01:		/* DW_CFA_set_loc */
		v = cfi__pointer(c, f->fde_enc);
		if (!c->bad)
			return advance(r, out, v, bad);
		break;
	case 0x02:		/* DW_CFA_advance_loc1 */
	case 0x03:		/* DW_CFA_advance_loc2 */
	case 0x04:		/* DW_CFA_advance_loc4 */
		v = cfi__get(c, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
		if (!c->bad)
			return advance_by(r, out, v, bad);
		break;
	case 0x05:		/* DW_CFA_offset_extended */
		reg = cfi__uleb(c);
		v = cfi__uleb(c);
		set_reg(r, reg, HOW_OFFSET, mul(v, f->data_align));
		break;
	case 0x11:		/* DW_CFA_offset_extended_sf */
		reg = cfi__uleb(c);
		sv = cfi__sleb(c);
		set_reg(r, reg, HOW_OFFSET, mul(sv, f->data_align));
		break;
	case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
		reg = cfi__uleb(c);
		v = cfi__uleb(c);
		set_reg(r, reg, HOW_OFFSET, mul(-v, f->data_align));
		break;
	case 0x06:		/* DW_CFA_restore_extended */
		restore_reg(r, cfi__uleb(c));
		break;
	case 0x07:		/* DW_CFA_undefined */
		set_reg(r, cfi__uleb(c), HOW_UNDEF, 0);
		break;
	case 0x08:		/* DW_CFA_same_value */
		set_reg(r, cfi__uleb(c), HOW_SAME, 0);
		break;
	case 0x09:		/* DW_CFA_register */
		reg = cfi__uleb(c);
		cfi__uleb(c);
		set_reg(r, reg, HOW_OTHER, 0);
		break;
	case 0x14:		/* DW_CFA_val_offset */
	case 0x15:		/* DW_CFA_val_offset_sf */
		reg = cfi__uleb(c);
		if (op == 0x14)
			cfi__uleb(c);
		else
			cfi__sleb(c);
		set_reg(r, reg, HOW_OTHER, 0);
		break;
	case 0x10:		/* DW_CFA_expression */
	case 0x16:		/* DW_CFA_val_expression */
		reg = cfi__uleb(c);
		skip_block(c);
		set_reg(r, reg, HOW_OTHER, 0);
		break;
	case 0x0a:		/* DW_CFA_remember_state */
		if (r->depth == MAX_STATES) {
			*bad = true;
			break;
		}
		r->saved[r->depth++] = r->cur;
		break;
	case 0x0b:		/* DW_CFA_restore_state */
		if (!r->depth) {
			*bad = true;
			break;
		}
		r->cur = r->saved[--r->depth];
		break;
	case 0x0c:		/* DW_CFA_def_cfa */
	case 0x12:		/* DW_CFA_def_cfa_sf */
		r->cur.cfa_reg = cfi__uleb(c);
		r->cur.cfa_off = op == 0x0c ? (int64_t)cfi__uleb(c) :
					       mul(cfi__sleb(c), f->data_align);
		r->cur.cfa_how = CFA_REG;
		break;
	case 0x0d:		/* DW_CFA_def_cfa_register: keeps the offset of a register rule */
		r->cur.cfa_reg = cfi__uleb(c);
		if (r->cur.cfa_how != CFA_REG)
			*bad = true;
		break;
	case 0x0e:		/* DW_CFA_def_cfa_offset */
	case 0x13:		/* DW_CFA_def_cfa_offset_sf */
		r->cur.cfa_off = op == 0x0e ? (int64_t)cfi__uleb(c) :
					       mul(cfi__sleb(c), f->data_align);
		if (r->cur.cfa_how != CFA_REG)
			*bad = true;
		break;
	case 0x0f:		/* DW_CFA_def_cfa_expression */
		r->cur.cfa_how = cfa_expression(c, &r->cur.cfa_off);
		break;
	case 0x2e:		/* DW_CFA_GNU_args_size */
		cfi__uleb(c);
		break;
	default:		/* DW_CFA_GNU_window_save (SPARC), vendor ones: not x86-64's */
		*bad = true;
		break;
	}
	return 0;
}

int cfa_program__run(const struct cfi_section *s, const struct cfi_fde *f, uint64_t end,
		     struct row_list *out, bool *stopped)
{
	struct unwind_rule u = { .cfa = UNWIND_CFA_STOP };
	struct run run, *r = &run;
	struct cfi_cur c;
	bool bad = false;
	int err = 0;

	memset(r, 0, offsetof(struct run, saved));
	r->f = f;
	r->loc = f->pc_begin;
	r->end = end;
	/* Before any instruction: no CFA (a CIE that sets none is stopped at), rbp unchanged. */
	r->cur.cfa_how = CFA_EXPR;
	r->in_cie = true;
	c = cfi__cur(s, f->cie_insn, f->cie_end);
	while (!err && !bad && !c.bad && c.pos < c.end)
		err = step(r, &c, out, &bad);
	r->init = r->cur;
	r->in_cie = false;
	r->depth = 0;	/* a CIE's remembered states are not the FDE's to restore */
	if (!bad && !c.bad) {
		c = cfi__cur(s, f->insn, f->end);
		while (!err && !bad && !c.bad && !r->done && c.pos < c.end)
			err = step(r, &c, out, &bad);
	}
	if (err || r->done)
		return err;
	if (bad || c.bad) {
		*stopped = true;
		return row_list__push(out, r->loc, &u);
	}
	/* The last row runs to the end of the FDE. */
	reduce(r, &u);
	return row_list__push(out, r->loc, &u);
}
