// SPDX-License-Identifier: GPL-2.0
#include "unwind/cfi.h"

#include <errno.h>
#include <string.h>

/* Pointer encodings (LSB, "DWARF Extensions": DW_EH_PE_*). */
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_uleb128 0x01
#define DW_EH_PE_udata2 0x02
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sleb128 0x09
#define DW_EH_PE_sdata2 0x0a
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_pcrel 0x10
#define DW_EH_PE_datarel 0x30
#define DW_EH_PE_funcrel 0x40
#define DW_EH_PE_aligned 0x50
#define DW_EH_PE_indirect 0x80
#define DW_EH_PE_omit 0xff
#define DW_EH_PE_FORMAT 0x0f
#define DW_EH_PE_APPL 0x70

/*
 * libunwind's DWARF_NUM_PRESERVED_REGS on x86-64, the size of its arrays of
 * register rules and locations. Its parser stops at larger register numbers
 * where it checks them; where it does not (the return address column, the
 * second register of DW_CFA_register) it indexes those arrays with them.
 */
#define NUM_REGS 17
/* Each DW_CFA_remember_state allocates in libunwind until its restore: real code nests 1 or 2. */
#define MAX_STATE_DEPTH 64
#define MAX_LEB128 10		/* bytes of a 64-bit value */

/* A reader at section offset off, up to the end of the window that holds it. */
static struct cfi_cur cur_at(const struct cfi_section *s, uint64_t off)
{
	struct cfi_cur c = { .s = s, .pos = off, .bad = true };

	for (unsigned int i = 0; i < s->nr_windows; i++) {
		const struct cfi_window *w = &s->windows[i];

		if (off >= w->off && off - w->off < w->size) {
			c.w = w;
			c.end = w->off + w->size;
			c.bad = false;
			break;
		}
	}
	return c;
}

static uint64_t get(struct cfi_cur *c, unsigned int n)
{
	uint64_t v = 0;

	if (c->bad || c->end - c->pos < n) {
		c->bad = true;
		return 0;
	}
	/* little-endian, as the x86-64 target */
	memcpy(&v, c->w->data + (c->pos - c->w->off), n);
	c->pos += n;
	return v;
}

/*
 * A LEB128, sign-extended from its last byte if sign. More than 10 bytes is
 * refused: libunwind would shift past 64 bits.
 */
static uint64_t leb(struct cfi_cur *c, bool sign)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < MAX_LEB128; i++) {
		uint8_t b = get(c, 1);

		if (c->bad)
			return 0;
		v |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80)) {
			if (sign && (b & 0x40) && i < 9)
				v |= UINT64_MAX << (7 * (i + 1));
			return v;
		}
	}
	c->bad = true;
	return 0;
}

/* ULEB128, and the length of an SLEB128 (libunwind reads both alike). */
static uint64_t leb128(struct cfi_cur *c)
{
	return leb(c, false);
}

/* Whether libunwind decodes pointers of encoding enc, and we know what they make it read. */
static bool encoding_ok(const struct cfi_section *s, uint8_t enc)
{
	if (enc == DW_EH_PE_aligned)
		return s->kind == CFI_EH_FRAME;	/* in .debug_frame it aligns our addresses */
	switch (enc & DW_EH_PE_FORMAT) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_uleb128:
	case DW_EH_PE_udata2:
	case DW_EH_PE_udata4:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sleb128:
	case DW_EH_PE_sdata2:
	case DW_EH_PE_sdata4:
	case DW_EH_PE_sdata8:
		break;
	default:
		return false;
	}
	switch (enc & DW_EH_PE_APPL) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_pcrel:
	case DW_EH_PE_datarel:
	case DW_EH_PE_funcrel:
		break;
	default:
		return false;	/* textrel and the undefined ones: libunwind fails on them */
	}
	/*
	 * An indirect pointer makes libunwind read the word it points to: in
	 * .debug_frame that word would be in our memory. Elsewhere only
	 * pc-relative ones, as compilers write them: their word is known now.
	 */
	if (enc & DW_EH_PE_indirect)
		return s->kind == CFI_EH_FRAME && (enc & DW_EH_PE_APPL) == DW_EH_PE_pcrel;
	return true;
}

/* An encoded pointer as libunwind's dwarf_read_encoded_pointer reads it (encoding checked). */
static uint64_t read_pointer(struct cfi_cur *c, uint8_t enc)
{
	uint64_t field = c->pos, v;

	if (enc == DW_EH_PE_omit)
		return 0;
	if (enc == DW_EH_PE_aligned) {
		uint64_t pad = -(c->s->vaddr + c->pos) & 7;

		if (c->end - c->pos < pad) {
			c->bad = true;
			return 0;
		}
		c->pos += pad;
		return get(c, 8);
	}
	switch (enc & DW_EH_PE_FORMAT) {
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		v = get(c, 8);
		break;
	case DW_EH_PE_uleb128:
	case DW_EH_PE_sleb128:
		v = leb128(c);
		break;
	case DW_EH_PE_udata2:
		v = get(c, 2);
		break;
	case DW_EH_PE_sdata2:
		v = (uint64_t)(int64_t)(int16_t)get(c, 2);
		break;
	case DW_EH_PE_udata4:
		v = get(c, 4);
		break;
	case DW_EH_PE_sdata4:
		v = (uint64_t)(int64_t)(int32_t)get(c, 4);
		break;
	default:
		c->bad = true;
		return 0;
	}
	if (c->bad || !v)
		return 0;	/* 0 is absolute and never indirect */
	if ((enc & DW_EH_PE_APPL) == DW_EH_PE_pcrel)
		v += c->s->vaddr + field;
	if (enc & DW_EH_PE_indirect) {
		if (!c->s->indirect || c->s->indirect(c->s->ctx, v))
			c->bad = true;
		return 0;
	}
	return v;
}

/* Operands of DWARF expression operators as libunwind's table (Gexpr.c) has them. */
enum operands { OPND_NONE, OPND_1, OPND_2, OPND_4, OPND_8, OPND_LEB, OPND_LEB_LEB, OPND_STOP };

static enum operands expr_operands(uint8_t op)
{
	if (op >= 0x70 && op <= 0x90)	/* DW_OP_breg0..31, DW_OP_regx */
		return OPND_LEB;
	switch (op) {
	case 0x03:			/* DW_OP_addr */
	case 0x0e:			/* DW_OP_const8u */
	case 0x0f:			/* DW_OP_const8s */
		return OPND_8;
	case 0x08:			/* DW_OP_const1u */
	case 0x09:			/* DW_OP_const1s */
	case 0x15:			/* DW_OP_pick */
	case 0x94:			/* DW_OP_deref_size */
	case 0x95:			/* DW_OP_xderef_size */
		return OPND_1;
	case 0x0a:			/* DW_OP_const2u */
	case 0x0b:			/* DW_OP_const2s */
	case 0x98:			/* DW_OP_call2 */
		return OPND_2;
	case 0x0c:			/* DW_OP_const4u */
	case 0x0d:			/* DW_OP_const4s */
	case 0x99:			/* DW_OP_call4 */
		return OPND_4;
	case 0x10:			/* DW_OP_constu */
	case 0x11:			/* DW_OP_consts */
	case 0x23:			/* DW_OP_plus_uconst */
	case 0x91:			/* DW_OP_fbreg */
	case 0x93:			/* DW_OP_piece */
		return OPND_LEB;
	case 0x92:			/* DW_OP_bregx */
		return OPND_LEB_LEB;
	case 0x9a:			/* DW_OP_call_ref: libunwind stops at its operand */
		return OPND_STOP;
	default:
		return OPND_NONE;
	}
}

/*
 * A DW_FORM_block expression: a length and the operators. libunwind
 * evaluates it until its end, reading operands even past it, and follows
 * DW_OP_skip and DW_OP_bra anywhere: one that jumps back loops forever. No
 * compiler puts a branch in CFI, so they are refused.
 */
static void check_expr(struct cfi_cur *c)
{
	uint64_t len = leb128(c);
	struct cfi_cur e;

	if (c->bad)
		return;
	/*
	 * libunwind 1.6 evaluates .debug_frame expressions by reading the
	 * target's memory at the address of our copy: never what was checked.
	 */
	if (c->s->kind == CFI_DEBUG_FRAME || len > c->end - c->pos) {
		c->bad = true;
		return;
	}
	e = *c;
	e.end = c->pos + len;
	while (!e.bad && e.pos < e.end) {
		uint8_t op = get(&e, 1);

		if (op == 0x28 || op == 0x2f) {	/* DW_OP_bra, DW_OP_skip */
			e.bad = true;
			break;
		}
		switch (expr_operands(op)) {
		case OPND_NONE:
			break;
		case OPND_1:
			get(&e, 1);
			break;
		case OPND_2:
			get(&e, 2);
			break;
		case OPND_4:
			get(&e, 4);
			break;
		case OPND_8:
			get(&e, 8);
			break;
		case OPND_LEB:
			leb128(&e);
			break;
		case OPND_LEB_LEB:
			leb128(&e);
			leb128(&e);
			break;
		case OPND_STOP:
			e.pos = e.end;
			break;
		}
	}
	c->bad = e.bad;
	c->pos += len;
}

/* A register operand: libunwind stops at numbers it has no column for. */
static bool stops_at_reg(struct cfi_cur *c)
{
	return leb128(c) >= NUM_REGS && !c->bad;
}

/*
 * A CFI program as libunwind's run_cfi_program reads it, from c->pos to
 * c->end. Where libunwind would stop with an error, the rest is never read.
 */
static void check_program(struct cfi_cur *c, uint8_t fde_enc)
{
	unsigned int depth = 0;

	while (!c->bad && c->pos < c->end) {
		uint8_t op = get(c, 1);

		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			continue;
		case 0x80:		/* DW_CFA_offset */
			if ((op & 0x3f) >= NUM_REGS)
				return;
			leb128(c);
			continue;
		case 0xc0:		/* DW_CFA_restore */
			if ((op & 0x3f) >= NUM_REGS)
				return;
			continue;
		}
		switch (op) {
		case 0x01:		/* DW_CFA_set_loc */
			read_pointer(c, fde_enc);
			break;
		case 0x02:		/* DW_CFA_advance_loc1 */
			get(c, 1);
			break;
		case 0x03:		/* DW_CFA_advance_loc2 */
			get(c, 2);
			break;
		case 0x04:		/* DW_CFA_advance_loc4 */
			get(c, 4);
			break;
		case 0x09:		/* DW_CFA_register */
			if (stops_at_reg(c))
				return;
			if (leb128(c) >= NUM_REGS)
				c->bad = true;	/* used unchecked as an index */
			break;
		case 0x05:		/* DW_CFA_offset_extended */
		case 0x0c:		/* DW_CFA_def_cfa */
		case 0x11:		/* DW_CFA_offset_extended_sf */
		case 0x12:		/* DW_CFA_def_cfa_sf */
		case 0x2f:		/* DW_CFA_GNU_negative_offset_extended */
			if (stops_at_reg(c))
				return;
			leb128(c);
			break;
		case 0x06:		/* DW_CFA_restore_extended */
		case 0x07:		/* DW_CFA_undefined */
		case 0x08:		/* DW_CFA_same_value */
		case 0x0d:		/* DW_CFA_def_cfa_register */
			if (stops_at_reg(c))
				return;
			break;
		case 0x0e:		/* DW_CFA_def_cfa_offset */
		case 0x13:		/* DW_CFA_def_cfa_offset_sf */
		case 0x2e:		/* DW_CFA_GNU_args_size */
			leb128(c);
			break;
		case 0x0a:		/* DW_CFA_remember_state */
			if (++depth > MAX_STATE_DEPTH)
				c->bad = true;
			break;
		case 0x0b:		/* DW_CFA_restore_state */
			if (!depth)
				return;
			depth--;
			break;
		case 0x0f:		/* DW_CFA_def_cfa_expression */
			check_expr(c);
			break;
		case 0x10:		/* DW_CFA_expression */
		case 0x16:		/* DW_CFA_val_expression */
			if (stops_at_reg(c))
				return;
			check_expr(c);
			break;
		case 0x1c:		/* DW_CFA_lo_user */
		case 0x1d:		/* DW_CFA_MIPS_advance_loc8 */
		case 0x2d:		/* DW_CFA_GNU_window_save */
		case 0x3c:		/* DW_CFA_hi_user, as libunwind 1.6 has it (not 0x3f) */
			return;
		default:
			/* DW_CFA_nop, and what libunwind 1.6 ignores (val_offset...): one byte */
			break;
		}
	}
}

/* Consume n bytes of the section's budget. */
static bool charge(struct cfi_section *s, uint64_t n)
{
	if (s->budget < n)
		return false;
	s->budget -= n;
	return true;
}

/* Length and id of the entry at c->pos; c->end becomes its end. Returns whether 64-bit. */
static bool read_header(struct cfi_cur *c, uint64_t *id)
{
	uint64_t len = get(c, 4);
	bool dwarf64 = len == 0xffffffff;

	if (dwarf64)
		len = get(c, 8);
	if (c->bad || !len || len > c->end - c->pos) {
		c->bad = true;
		return dwarf64;
	}
	c->end = c->pos + len;
	*id = get(c, dwarf64 ? 8 : 4);
	return dwarf64;
}

static void parse_cie(struct cfi_section *s, struct cfi_cie *cie)
{
	struct cfi_cur c = cur_at(s, cie->off);
	uint64_t id = 0, aug_size = 0, aug_start;
	char aug[5] = { 0 };
	unsigned int n = 0, version;
	bool dwarf64;

	if (c.bad)
		return;
	dwarf64 = read_header(&c, &id);
	if (c.bad)
		return;
	if (!charge(s, c.end - cie->off)) {
		cie->err = -E2BIG;
		return;
	}
	if (s->kind == CFI_EH_FRAME ? id != 0 : id != (dwarf64 ? UINT64_MAX : 0xffffffff))
		return;
	version = get(&c, 1);
	if (version != 1 && version != 3 && version != 4)
		return;
	/* libunwind keeps the first 4 letters and reads on to the NUL, wherever it is. */
	for (;;) {
		char ch = get(&c, 1);

		if (c.bad)
			return;
		if (!ch)
			break;
		if (n == 4 || !strchr(n ? "LPRS" : "zLPRS", ch))
			return;
		aug[n++] = ch;
	}
	cie->code_align = leb128(&c);
	cie->data_align = (int64_t)leb(&c, true);
	/* The return address column: libunwind 1.6 indexes its locations with it unchecked. */
	cie->ra_reg = version == 1 ? get(&c, 1) : leb128(&c);
	if (cie->ra_reg >= NUM_REGS)
		return;
	cie->sized = aug[0] == 'z';
	if (cie->sized)
		aug_size = leb128(&c);
	aug_start = c.pos;
	/* libunwind's default for 8-byte addresses, without 'R' */
	cie->fde_enc = DW_EH_PE_udata8;
	cie->lsda_enc = DW_EH_PE_omit;
	for (unsigned int i = cie->sized; i < n && !c.bad; i++) {
		uint8_t enc;

		switch (aug[i]) {
		case 'L':
			cie->lsda_enc = get(&c, 1);
			if (cie->lsda_enc != DW_EH_PE_omit && !encoding_ok(s, cie->lsda_enc))
				return;
			break;
		case 'R':
			cie->fde_enc = get(&c, 1);
			if (cie->fde_enc == DW_EH_PE_omit)
				return;
			break;
		case 'P':
			enc = get(&c, 1);
			if (enc != DW_EH_PE_omit && !encoding_ok(s, enc))
				return;
			read_pointer(&c, enc);
			break;
		case 'S':
			cie->abi_marker = true;
			cie->signal = true;	/* what 'S' means: a signal frame's CIE */
			break;
		}
	}
	if (!encoding_ok(s, cie->fde_enc))
		return;
	/* .debug_frame addresses are absolute: relative to our copy they mean nothing. */
	if (s->kind == CFI_DEBUG_FRAME && (cie->fde_enc & DW_EH_PE_APPL) != DW_EH_PE_absptr)
		return;
	/* libunwind starts the instructions after what it parsed, not after aug_size. */
	if (c.bad || (cie->sized && c.pos - aug_start != aug_size))
		return;
	cie->insn = c.pos;
	cie->end = c.end;
	check_program(&c, cie->fde_enc);
	if (!c.bad)
		cie->err = 0;
}

/* The CIE at off, checked once (a small cache by offset). */
static const struct cfi_cie *get_cie(struct cfi_section *s, uint64_t off)
{
	struct cfi_cie *cie = &s->cies[(off * 0x9e3779b97f4a7c15ull) >> 60];

	if (cie->used && cie->off == off)
		return cie;
	memset(cie, 0, sizeof(*cie));
	cie->used = true;
	cie->off = off;
	cie->err = -EBADMSG;
	parse_cie(s, cie);
	return cie;
}

void cfi__init_windows(struct cfi_section *s, const struct cfi_window *w, unsigned int n,
		       uint64_t vaddr, enum cfi_kind kind)
{
	uint64_t size = 0;

	memset(s, 0, sizeof(*s));
	for (unsigned int i = 0; i < n && i < CFI_MAX_WINDOWS; i++) {
		s->windows[s->nr_windows++] = w[i];
		size += w[i].size;
	}
	s->vaddr = vaddr;
	s->kind = kind;
	/* Every FDE and CIE decoded a few times over, and more for small sections. */
	s->budget = size * 8 + 65536;
}

void cfi__init(struct cfi_section *s, const void *data, size_t size, uint64_t vaddr,
	       enum cfi_kind kind)
{
	struct cfi_window w = { .off = 0, .data = data, .size = size };

	cfi__init_windows(s, &w, 1, vaddr, kind);
}

/* As libunwind's dwarf_extract_proc_info_from_fde with need_unwind_info, then the CFI run. */
int cfi__check_fde(struct cfi_section *s, uint64_t off, struct cfi_fde *fde)
{
	struct cfi_cur c = cur_at(s, off);
	const struct cfi_cie *cie;
	uint64_t id = 0, id_pos, cie_off, aug_end = 0;
	bool dwarf64;

	if (c.bad)
		return -EBADMSG;
	dwarf64 = read_header(&c, &id);
	if (c.bad)
		return -EBADMSG;
	if (!charge(s, c.end - off))
		return -E2BIG;
	id_pos = c.pos - (dwarf64 ? 8 : 4);
	if (s->kind == CFI_DEBUG_FRAME) {
		/* libunwind takes both ids for a CIE in 64-bit DWARF; 32-bit ones sign-extend */
		if (id == 0xffffffff || (dwarf64 && id == UINT64_MAX))
			return -EBADMSG;
		cie_off = dwarf64 ? id : (uint64_t)(int64_t)(int32_t)id;
	} else {
		if (!id)
			return -EBADMSG;
		cie_off = id_pos - (dwarf64 ? id : (uint64_t)(int64_t)(int32_t)id);
	}
	cie = get_cie(s, cie_off);
	if (cie->err)
		return cie->err;
	fde->pc_begin = read_pointer(&c, cie->fde_enc);
	fde->pc_range = read_pointer(&c, cie->fde_enc & DW_EH_PE_FORMAT);
	if (cie->sized) {
		uint64_t n = leb128(&c);

		if (c.bad || n > c.end - c.pos)
			return -EBADMSG;
		aug_end = c.pos + n;
	}
	read_pointer(&c, cie->lsda_enc);
	if (c.bad || (cie->sized && c.pos > aug_end))
		return -EBADMSG;
	if (cie->abi_marker)
		get(&c, 4);	/* libunwind's abi and tag, right after the LSDA */
	if (cie->sized)
		c.pos = aug_end;
	fde->insn = c.pos;
	check_program(&c, cie->fde_enc);
	if (c.bad)
		return -EBADMSG;
	fde->end = c.end;
	fde->cie_insn = cie->insn;
	fde->cie_end = cie->end;
	fde->code_align = cie->code_align;
	fde->data_align = cie->data_align;
	fde->ra_reg = cie->ra_reg;
	fde->fde_enc = cie->fde_enc;
	fde->signal = cie->signal;
	return 0;
}

struct cfi_cur cfi__cur(const struct cfi_section *s, uint64_t pos, uint64_t end)
{
	struct cfi_cur c = cur_at(s, pos);

	if (!c.bad && end < c.end)
		c.end = end;
	/* an empty range is a reader at its end, not a bad one */
	if (c.bad && pos == end)
		c = (struct cfi_cur){ .s = s, .pos = pos, .end = end };
	return c;
}

uint64_t cfi__get(struct cfi_cur *c, unsigned int n)
{
	if (!n || n > 8) {
		c->bad |= n > 8;
		return 0;
	}
	return get(c, n);
}

uint64_t cfi__uleb(struct cfi_cur *c)
{
	return leb(c, false);
}

int64_t cfi__sleb(struct cfi_cur *c)
{
	return (int64_t)leb(c, true);
}

uint64_t cfi__pointer(struct cfi_cur *c, uint8_t enc)
{
	/* The encodings the CIE's check let through; an FDE's own are not rechecked. */
	if (!encoding_ok(c->s, enc)) {
		c->bad = true;
		return 0;
	}
	return read_pointer(c, enc);
}
