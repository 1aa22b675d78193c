// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/cfi.c on hand-made entries: one CIE and one FDE of .eh_frame (or
 * .debug_frame) per test, each breaking one rule of what libunwind 1.6.2
 * may be shown. The FDE is refused (-EBADMSG) or passes (0).
 */
#include <errno.h>
#include <string.h>

#include "tests/support/tests.h"
#include "unwind/cfi.h"

#define VADDR 0x2000

/* A "zR" CIE (pcrel sdata4), version 1, CFA = rsp + 8, return address in column 16. */
static const unsigned char zr_cie[] = {
	0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8,
};

struct sec {
	unsigned char d[512];
	size_t size;
	size_t fde;		/* offset of the FDE */
	struct cfi_section s;
};

static struct sec sec;

/* Append an entry with a 32-bit length; returns its offset. */
static size_t add(const void *body, size_t n)
{
	uint32_t len = n;
	size_t off = sec.size;

	ck_assert_uint_le(sec.size + 4 + n, sizeof(sec.d));
	memcpy(sec.d + off, &len, 4);
	memcpy(sec.d + off + 4, body, n);
	sec.size += 4 + n;
	return off;
}

/* An .eh_frame FDE for the CIE at cie with the given instructions (after pc_begin, range, 0). */
static size_t add_fde(size_t cie, const void *cfi, size_t n)
{
	unsigned char b[256];
	size_t off = sec.size;
	uint32_t v = off + 4 - cie;

	memcpy(b, &v, 4);
	v = 0x1000 - (VADDR + off + 8);
	memcpy(b + 4, &v, 4);
	v = 0x40;
	memcpy(b + 8, &v, 4);
	b[12] = 0;		/* augmentation data length */
	memcpy(b + 13, cfi, n);
	return add(b, 13 + n);
}

static int check(enum cfi_kind kind)
{
	struct cfi_fde f;

	cfi__init(&sec.s, sec.d, sec.size, VADDR, kind);
	return cfi__check_fde(&sec.s, sec.fde, &f);
}

static void setup(void)
{
	memset(&sec, 0, sizeof(sec));
}

/* An FDE of zr_cie with these instructions; returns cfi__check_fde's verdict. */
static int fde_with(const void *cfi, size_t n)
{
	size_t cie = add(zr_cie, sizeof(zr_cie));

	sec.fde = add_fde(cie, cfi, n);
	return check(CFI_EH_FRAME);
}

#define FDE_WITH(...)                                                                              \
	({                                                                                         \
		static const unsigned char _c[] = { __VA_ARGS__ };                                 \
		fde_with(_c, sizeof(_c));                                                          \
	})

START_TEST(a_plain_fde_passes)
{
	struct cfi_fde f;

	ck_assert_int_eq(FDE_WITH(0x41, 0x0e, 16, 0x00), 0);
	ck_assert_int_eq(cfi__check_fde(&sec.s, sec.fde, &f), 0);
	ck_assert_uint_eq(f.pc_begin, 0x1000);
	ck_assert_uint_eq(f.pc_range, 0x40);
	ck_assert_uint_eq(f.end, sec.size);
}
END_TEST

START_TEST(lengths_and_pointers_stay_inside)
{
	uint32_t v;

	ck_assert_int_eq(FDE_WITH(0), 0);
	/* FDE length one past the section */
	memcpy(&v, sec.d + sec.fde, 4);
	v++;
	memcpy(sec.d + sec.fde, &v, 4);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
	v--;
	memcpy(sec.d + sec.fde, &v, 4);
	/* CIE pointer before the section, and onto the FDE itself */
	v = sec.fde + 4 + 64;
	memcpy(sec.d + sec.fde + 4, &v, 4);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
	v = 4;
	memcpy(sec.d + sec.fde + 4, &v, 4);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
	/* An FDE offset past the end */
	sec.fde = sec.size;
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
}
END_TEST

START_TEST(cie_header_fields_are_checked)
{
	unsigned char cie[sizeof(zr_cie)];
	size_t off;

	/* wrong id for .eh_frame, version 2, unknown letter, no NUL before the end */
	for (unsigned int i = 0; i < 4; i++) {
		setup();
		memcpy(cie, zr_cie, sizeof(cie));
		if (i == 0)
			cie[0] = 1;
		if (i == 1)
			cie[4] = 2;
		if (i == 2)
			cie[6] = 'B';
		if (i == 3)
			memset(cie + 5, 'z', sizeof(cie) - 5);
		off = add(cie, sizeof(cie));
		sec.fde = add_fde(off, "", 0);
		ck_assert_msg(check(CFI_EH_FRAME) == -EBADMSG, "case %u passed", i);
	}
}
END_TEST

/* libunwind 1.6 indexes arrays of 17 with these without a check. */
START_TEST(register_numbers_libunwind_does_not_check_are)
{
	unsigned char cie[sizeof(zr_cie)];
	size_t off;

	memcpy(cie, zr_cie, sizeof(cie));
	cie[10] = 17;		/* return address column */
	off = add(cie, sizeof(cie));
	sec.fde = add_fde(off, "", 0);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
	setup();
	ck_assert_int_eq(FDE_WITH(0x09, 6, 17), -EBADMSG);	/* DW_CFA_register rbp, r17 */
	setup();
	ck_assert_int_eq(FDE_WITH(0x09, 6, 3), 0);
}
END_TEST

/* Where libunwind stops with an error, what follows is never read. */
START_TEST(instructions_end_where_libunwind_stops)
{
	ck_assert_int_eq(FDE_WITH(0x91, 0x80), 0);		/* DW_CFA_offset r17: stops */
	setup();
	ck_assert_int_eq(FDE_WITH(0x90, 0x80), -EBADMSG);	/* r16: its operand runs off */
	setup();
	ck_assert_int_eq(FDE_WITH(0x0b, 0x0f, 0x7f), 0);	/* restore_state, empty stack */
	setup();
	ck_assert_int_eq(FDE_WITH(0x3c, 0x0f, 0x7f), 0);	/* libunwind's DW_CFA_hi_user */
	setup();
	ck_assert_int_eq(FDE_WITH(0x3f, 0x0f, 0x7f), -EBADMSG);	/* one byte to libunwind */
	setup();
	ck_assert_int_eq(FDE_WITH(0x04, 1, 2), -EBADMSG);	/* advance_loc4 short */
}
END_TEST

START_TEST(state_nesting_is_bounded)
{
	unsigned char cfi[70];

	memset(cfi, 0x0a, sizeof(cfi));	/* DW_CFA_remember_state */
	ck_assert_int_eq(fde_with(cfi, 64), 0);
	setup();
	ck_assert_int_eq(fde_with(cfi, 65), -EBADMSG);
	setup();
	cfi[64] = 0x0b;
	ck_assert_int_eq(fde_with(cfi, 66), 0);
}
END_TEST

START_TEST(expressions_must_fit_and_not_branch)
{
	/* DW_CFA_def_cfa_expression: DW_OP_breg7 8, DW_OP_deref */
	ck_assert_int_eq(FDE_WITH(0x0f, 3, 0x77, 8, 0x06), 0);
	setup();
	ck_assert_int_eq(FDE_WITH(0x0f, 4, 0x77, 8, 0x06), -EBADMSG);	/* block too long */
	setup();
	/* DW_OP_const4u with 1 byte left in the block */
	ck_assert_int_eq(FDE_WITH(0x0f, 2, 0x0c, 1, 0, 0, 0), -EBADMSG);
	setup();
	ck_assert_int_eq(FDE_WITH(0x0f, 3, 0x2f, 0xfd, 0xff), -EBADMSG);	/* DW_OP_skip -3 */
	setup();
	ck_assert_int_eq(FDE_WITH(0x0f, 3, 0x28, 0x00, 0x00), -EBADMSG);	/* DW_OP_bra */
	setup();
	/* DW_CFA_expression r6 with a LEB128 length that never ends */
	ck_assert_int_eq(FDE_WITH(0x10, 6, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80,
				  0x80, 0x80, 0x01),
			 -EBADMSG);
}
END_TEST

static uint64_t indirect_at;

static int note(void *ctx, uint64_t vaddr)
{
	(void)ctx;
	indirect_at = vaddr;
	return 0;
}

/* A "zPR" CIE whose personality is read through a pc-relative indirect pointer. */
START_TEST(indirect_pointers_are_reported_and_refused_in_debug_frame)
{
	static const unsigned char cie[] = {
		0, 0, 0, 0, 1, 'z', 'P', 'R', 0, 1, 0x78, 16, 6, 0x9b, 0x10, 0, 0, 0, 0x1b,
		0x0c, 7, 8,
	};
	struct cfi_fde f;
	size_t off = add(cie, sizeof(cie));

	sec.fde = add_fde(off, "", 0);
	cfi__init(&sec.s, sec.d, sec.size, VADDR, CFI_EH_FRAME);
	/* without a callback, no word can be known */
	ck_assert_int_eq(cfi__check_fde(&sec.s, sec.fde, &f), -EBADMSG);
	cfi__init(&sec.s, sec.d, sec.size, VADDR, CFI_EH_FRAME);
	sec.s.indirect = note;
	ck_assert_int_eq(cfi__check_fde(&sec.s, sec.fde, &f), 0);
	/* the field is at VADDR + 4 (length) + 14, and says + 0x10 */
	ck_assert_uint_eq(indirect_at, VADDR + 18 + 0x10);
}
END_TEST

/* .debug_frame: section-relative CIE pointers, absolute addresses, no expressions. */
START_TEST(debug_frame_rules)
{
	static const unsigned char cie[] = {
		0xff, 0xff, 0xff, 0xff, 3, 0, 1, 0x78, 16, 0x0c, 7, 8,
	};
	unsigned char fde[32];
	uint64_t pc = 0x1100, range = 0x20;
	uint32_t id = 0;

	add(cie, sizeof(cie));
	memcpy(fde, &id, 4);
	memcpy(fde + 4, &pc, 8);
	memcpy(fde + 12, &range, 8);
	fde[20] = 0x41;
	sec.fde = add(fde, 21);
	ck_assert_int_eq(check(CFI_DEBUG_FRAME), 0);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);	/* id 0 is a CIE there */
	/* an expression: libunwind would evaluate it at our address, in the target */
	sec.size = sec.fde;
	fde[20] = 0x0f;
	fde[21] = 1;
	fde[22] = 0x96;
	sec.fde = add(fde, 23);
	ck_assert_int_eq(check(CFI_DEBUG_FRAME), -EBADMSG);
	/* a CIE pointer that is negative as libunwind sign-extends it */
	sec.size = sec.fde;
	id = 0x80000000;
	memcpy(fde, &id, 4);
	sec.fde = add(fde, 21);
	ck_assert_int_eq(check(CFI_DEBUG_FRAME), -EBADMSG);
}
END_TEST

/* 64-bit DWARF: 0xffffffff, then 8-byte length and CIE pointer. */
START_TEST(dwarf64_entries)
{
	unsigned char b[64];
	uint32_t esc = 0xffffffff;
	uint64_t len, ptr;
	size_t cie = 0, fde;

	memcpy(b, &esc, 4);
	len = 8 + sizeof(zr_cie) - 4;
	memcpy(b + 4, &len, 8);
	memset(b + 12, 0, 8);	/* id */
	memcpy(b + 20, zr_cie + 4, sizeof(zr_cie) - 4);
	memcpy(sec.d, b, 12 + len);
	sec.size = fde = 12 + len;
	memcpy(b, &esc, 4);
	len = 8 + 4 + 4 + 1;
	memcpy(b + 4, &len, 8);
	ptr = fde + 12 - cie;
	memcpy(b + 12, &ptr, 8);
	memset(b + 20, 0, 9);
	memcpy(sec.d + fde, b, 12 + len);
	sec.size += 12 + len;
	sec.fde = fde;
	ck_assert_int_eq(check(CFI_EH_FRAME), 0);
	/* a length that wraps */
	len = UINT64_MAX - 4;
	memcpy(sec.d + fde + 4, &len, 8);
	ck_assert_int_eq(check(CFI_EH_FRAME), -EBADMSG);
}
END_TEST

START_TEST(a_spent_budget_refuses_everything_after)
{
	struct cfi_fde f;

	ck_assert_int_eq(FDE_WITH(0), 0);
	cfi__init(&sec.s, sec.d, sec.size, VADDR, CFI_EH_FRAME);
	sec.s.budget = sec.size - sec.fde;	/* the FDE, not its CIE */
	ck_assert_int_eq(cfi__check_fde(&sec.s, sec.fde, &f), -E2BIG);
	ck_assert_int_eq(cfi__check_fde(&sec.s, sec.fde, &f), -E2BIG);
}
END_TEST

Suite *unwind_cfi_suite(void)
{
	Suite *s = suite_create("unwind_cfi");
	TCase *tc = tcase_create("entries");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, a_plain_fde_passes);
	tcase_add_test(tc, lengths_and_pointers_stay_inside);
	tcase_add_test(tc, cie_header_fields_are_checked);
	tcase_add_test(tc, register_numbers_libunwind_does_not_check_are);
	tcase_add_test(tc, instructions_end_where_libunwind_stops);
	tcase_add_test(tc, state_nesting_is_bounded);
	tcase_add_test(tc, expressions_must_fit_and_not_branch);
	tcase_add_test(tc, indirect_pointers_are_reported_and_refused_in_debug_frame);
	tcase_add_test(tc, debug_frame_rules);
	tcase_add_test(tc, dwarf64_entries);
	tcase_add_test(tc, a_spent_budget_refuses_everything_after);
	suite_add_tcase(s, tc);
	return s;
}
