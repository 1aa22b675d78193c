// SPDX-License-Identifier: GPL-2.0
/*
 * unwind/tables on unwind sections made by hand, each breaking one thing a
 * hostile binary can break: lengths, CIE pointers, CFA programs, address
 * ranges, the checks' budget, a file cut short. The compiler must return
 * in bounded time with a table that holds to its layout (or an error), and
 * lookups must give what the bytes say.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/cfi_elf.h"
#include "tests/support/tests.h"
#include "unwind/tables/tables.h"

/* "zR" CIE, version 1, code 1, data -8, ra 16, pcrel sdata4; CFA = rsp + 8, ra at CFA - 8. */
static const unsigned char cie[] = {
	0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b, 0x0c, 7, 8, 0x90, 1,
};

static unsigned char sec[1 << 20];
static size_t sec_len;

static size_t put(const void *body, size_t n)
{
	uint32_t len = n;
	size_t off = sec_len;

	ck_assert_uint_le(sec_len + 4 + n, sizeof(sec));
	memcpy(sec + off, &len, 4);
	memcpy(sec + off + 4, body, n);
	sec_len += 4 + n;
	return off;
}

/* An FDE of the CIE at cie_off for [pc, pc + range) with these instructions. */
static size_t put_fde(size_t cie_off, uint32_t pc, uint32_t range, const void *cfi, size_t n)
{
	unsigned char b[4096];
	uint32_t v = sec_len + 4 - cie_off;

	ck_assert_uint_le(n, sizeof(b) - 13);
	memcpy(b, &v, 4);
	v = pc - (CFI_ELF_HDR_AT + sec_len + 8);
	memcpy(b + 4, &v, 4);
	memcpy(b + 8, &range, 4);
	b[12] = 0;
	if (n)
		memcpy(b + 13, cfi, n);
	return put(b, 13 + n);
}

/* The section compiled in an image of memsz bytes; the table checked against its layout. */
static int compile(uint64_t memsz, struct unwind_table **t)
{
	static unsigned char elf[sizeof(sec) + 4096];
	struct unwind_image img;
	size_t size;
	int err;

	size = cfi_elf__make(elf, sizeof(elf),
			     &(struct cfi_elf){ .eh = sec, .eh_len = sec_len, .memsz = memsz });
	ck_assert_uint_gt(size, 0);
	ck_assert_int_eq(unwind_image__from_memory(&img, elf, size), 0);
	err = unwind_table__compile(&img, t);
	if (!err)
		ck_assert_int_eq(unwind_table__verify(*t), 0);
	unwind_image__close(&img);
	return err;
}

static uint8_t kind_at(const struct unwind_table *t, uint64_t pc, int32_t *off)
{
	struct unwind_rule r;

	unwind_table__lookup(t, pc, &r);
	if (off)
		*off = r.cfa_off;
	return r.cfa;
}

static void setup(void)
{
	sec_len = 0;
}

START_TEST(rows_of_a_plain_fde)
{
	/* advance 4; def_cfa_offset 16; advance 2; offset rbp at CFA - 16; def_cfa_register rbp */
	static const unsigned char cfi[] = { 0x44, 0x0e, 16, 0x42, 0x86, 2, 0x0d, 6 };
	struct unwind_table *t;
	struct unwind_rule r;
	int32_t off;

	put(cie, sizeof(cie));
	put_fde(0, 0x12340, 0x40, cfi, sizeof(cfi));
	ck_assert_int_eq(compile(0x20000, &t), 0);
	ck_assert_uint_eq(kind_at(t, 0x1233f, NULL), UNWIND_CFA_NONE);
	ck_assert_uint_eq(kind_at(t, 0x12340, &off), UNWIND_CFA_RSP);
	ck_assert_int_eq(off, 8);
	ck_assert_uint_eq(kind_at(t, 0x12343, &off), UNWIND_CFA_RSP);
	ck_assert_int_eq(off, 8);
	ck_assert_uint_eq(kind_at(t, 0x12344, &off), UNWIND_CFA_RSP);
	ck_assert_int_eq(off, 16);
	unwind_table__lookup(t, 0x12346, &r);
	ck_assert_uint_eq(r.cfa, UNWIND_CFA_RBP);
	ck_assert_int_eq(r.cfa_off, 16);
	ck_assert_uint_eq(r.rbp, UNWIND_RBP_CFA);
	ck_assert_int_eq(r.rbp_off, -16);
	ck_assert_uint_eq(kind_at(t, 0x1237f, NULL), UNWIND_CFA_RBP);
	ck_assert_uint_eq(kind_at(t, 0x12380, NULL), UNWIND_CFA_NONE);
	ck_assert_uint_eq(t->base, 0x10000);
	unwind_table__free(t);
}
END_TEST

/* A function across a page boundary: the next page starts with the rule in effect. */
START_TEST(a_function_across_pages_repeats_its_rule)
{
	static const unsigned char cfi[] = { 0x41, 0x0e, 16 };
	struct unwind_table *t;
	int32_t off;

	put(cie, sizeof(cie));
	put_fde(0, 0x1fff0, 0x30000, cfi, sizeof(cfi));
	ck_assert_int_eq(compile(0x60000, &t), 0);
	ck_assert_uint_eq(t->nr_pages, 4);
	for (uint64_t pc = 0x1fff1; pc < 0x4fff0; pc += 0x1001) {
		ck_assert_uint_eq(kind_at(t, pc, &off), UNWIND_CFA_RSP);
		ck_assert_int_eq(off, 16);
	}
	ck_assert_uint_eq(kind_at(t, 0x4fff0, NULL), UNWIND_CFA_NONE);
	unwind_table__free(t);
}
END_TEST

START_TEST(cie_pointers_that_loop_or_miss_are_refused)
{
	static const unsigned char body[16] = { 0 };
	struct unwind_table *t;
	size_t fde;
	uint32_t v;

	put(cie, sizeof(cie));
	/* An FDE whose CIE pointer names itself, one that names the first, one far outside. */
	fde = put_fde(0, 0x1000, 0x10, NULL, 0);
	v = 4;
	memcpy(sec + fde + 4, &v, 4);
	fde = put_fde(0, 0x2000, 0x10, NULL, 0);
	v = fde + 4 - (fde - 17);	/* into the middle of the FDE before it */
	memcpy(sec + fde + 4, &v, 4);
	fde = put_fde(0, 0x3000, 0x10, NULL, 0);
	v = 0x80000000u;
	memcpy(sec + fde + 4, &v, 4);
	put(body, sizeof(body));
	ck_assert_int_eq(compile(0x10000, &t), 0);
	ck_assert_uint_eq(t->stats.fdes, 0);
	ck_assert_uint_ge(t->stats.fdes_refused, 3);
	ck_assert_uint_eq(kind_at(t, 0x1000, NULL), UNWIND_CFA_NONE);
	unwind_table__free(t);
}
END_TEST

START_TEST(absurd_lengths_end_the_walk)
{
	static const unsigned char huge32[] = { 0xf0, 0xff, 0xff, 0xff, 1, 0, 0, 0 };
	static const unsigned char huge64[] = { 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0x40 };
	struct unwind_table *t;

	put(cie, sizeof(cie));
	put_fde(0, 0x1000, 0x10, NULL, 0);
	memcpy(sec + sec_len, huge32, sizeof(huge32));
	sec_len += sizeof(huge32);
	ck_assert_int_eq(compile(0x10000, &t), 0);
	ck_assert_uint_eq(t->stats.fdes, 1);
	unwind_table__free(t);
	sec_len -= sizeof(huge32);
	memcpy(sec + sec_len, huge64, sizeof(huge64));
	sec_len += sizeof(huge64);
	ck_assert_int_eq(compile(0x10000, &t), 0);
	ck_assert_uint_eq(t->stats.fdes, 1);
	unwind_table__free(t);
}
END_TEST

/* Every prefix of a section: no fault, a table that holds to the layout. */
START_TEST(every_truncation_of_a_section)
{
	static const unsigned char cfi[] = {
		0x44, 0x0e, 16, 0x0a, 0x42, 0x86, 2, 0x0b, 0x2e, 0x90,
	};
	size_t full;

	put(cie, sizeof(cie));
	for (unsigned int i = 0; i < 8; i++)
		put_fde(0, 0x1000 + i * 0x100, 0x80, cfi, sizeof(cfi));
	full = sec_len;
	for (size_t n = 0; n <= full; n++) {
		struct unwind_table *t;
		int err;

		sec_len = n;
		err = compile(0x10000, &t);
		ck_assert_msg(!err || err == -ENOENT, "prefix %zu: %d", n, err);
		if (!err)
			unwind_table__free(t);
	}
}
END_TEST

/* Programs that cannot be followed: a STOP row from there on, counted. */
START_TEST(programs_that_cannot_be_followed_stop)
{
	static const struct {
		unsigned char cfi[8];
		size_t n;
	} bad[] = {
		{ { 0x44, 0x0b }, 2 },			/* restore_state with none remembered */
		{ { 0x44, 0x2d }, 2 },			/* GNU_window_save: not x86-64's */
		{ { 0x44, 0x01, 0, 0, 0, 0 }, 6 },	/* set_loc back before the FDE */
		/* def_cfa_register after an expression */
		{ { 0x44, 0x0f, 2, 0x77, 8, 0x0d, 7 }, 7 },
		{ { 0x44, 0x0e, 0x80 }, 3 },		/* a LEB128 cut by the FDE's end */
	};
	struct unwind_table *t;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sec_len = 0;
		put(cie, sizeof(cie));
		put_fde(0, 0x1000, 0x40, bad[i].cfi, bad[i].n);
		ck_assert_int_eq(compile(0x10000, &t), 0);
		/* refused by the checks (a LEB128 cut short), or stopped where it goes wrong */
		if (t->stats.fdes_refused) {
			ck_assert_uint_eq(kind_at(t, 0x1000, NULL), UNWIND_CFA_NONE);
		} else {
			ck_assert_uint_eq(t->stats.programs_stopped, 1);
			ck_assert_uint_eq(kind_at(t, 0x1003, NULL), UNWIND_CFA_RSP);
			ck_assert_uint_eq(kind_at(t, 0x1004, NULL), UNWIND_CFA_STOP);
			ck_assert_uint_eq(kind_at(t, 0x103f, NULL), UNWIND_CFA_STOP);
		}
		unwind_table__free(t);
	}
}
END_TEST

START_TEST(state_nesting_and_advances_are_bounded)
{
	unsigned char cfi[1024];
	struct unwind_table *t;

	/* 1000 remember_state: past 64 the checks refuse it. */
	memset(cfi, 0x0a, sizeof(cfi));
	put(cie, sizeof(cie));
	put_fde(0, 0x1000, 0x40, cfi, 1000);
	ck_assert_int_eq(compile(0x10000, &t), 0);
	ck_assert_uint_eq(t->stats.fdes, 0);
	unwind_table__free(t);
	/* advance_loc4 by 2^32 - 1 with a code alignment of 2^63: ends the FDE, no overflow */
	sec_len = 0;
	{
		unsigned char c2[sizeof(cie) + 9];
		static const unsigned char adv[] = { 0x04, 0xff, 0xff, 0xff, 0xff, 0x0e, 16 };

		memcpy(c2, cie, 8);	/* up to the code alignment */
		memcpy(c2 + 8, "\x80\x80\x80\x80\x80\x80\x80\x80\x80\x01", 10);	/* 2^63 */
		memcpy(c2 + 18, cie + 9, sizeof(cie) - 9);
		put(c2, sizeof(cie) + 9);
		put_fde(0, 0x1000, 0x40, adv, sizeof(adv));
	}
	ck_assert_int_eq(compile(0x10000, &t), 0);
	ck_assert_uint_eq(kind_at(t, 0x103f, NULL),
			  t->stats.fdes ? UNWIND_CFA_RSP : UNWIND_CFA_NONE);
	unwind_table__free(t);
}
END_TEST

/* Ranges past the code, and a span of code wider than the page limit. */
START_TEST(addresses_are_bounded_by_the_code_and_the_page_limit)
{
	struct unwind_table *t;

	put(cie, sizeof(cie));
	put_fde(0, 0x1000, 0xffffffff, NULL, 0);	/* cut to the segment */
	put_fde(0, 0xfffff000, 0x10, NULL, 0);		/* past it: dropped */
	ck_assert_int_eq(compile(0x20000, &t), 0);
	ck_assert_uint_eq(t->stats.fdes, 1);
	ck_assert_uint_eq(t->stats.fdes_outside, 1);
	ck_assert_uint_eq(kind_at(t, 0x1ffff, NULL), UNWIND_CFA_RSP);
	ck_assert_uint_eq(kind_at(t, 0x20000, NULL), UNWIND_CFA_NONE);
	unwind_table__free(t);
	/* 5 GiB of code: the table stops at 4 GiB */
	ck_assert_int_eq(compile(5ull << 30, &t), 0);
	ck_assert_uint_eq(t->nr_pages, UNWIND_TABLE_MAX_PAGES);
	ck_assert_uint_le(t->nr_rows, UNWIND_TABLE_MAX_PAGES + 4);
	unwind_table__free(t);
}
END_TEST

/* Many FDEs of one large CIE: the checks' budget is spent, nothing is used. */
START_TEST(a_section_that_spends_the_budget_is_refused)
{
	unsigned char big[4000];
	struct unwind_table *t;
	size_t cies[16];

	memcpy(big, cie, sizeof(cie));
	memset(big + sizeof(cie), 0, sizeof(big) - sizeof(cie));	/* DW_CFA_nop */
	/* CIEs that collide in the checks' cache, each FDE alternating between them */
	for (unsigned int i = 0; i < 16; i++)
		cies[i] = put(big, sizeof(big));
	while (sec_len + 40 < sizeof(sec))
		put_fde(cies[(sec_len / 17) % 16], 0x1000, 0x10, NULL, 0);
	ck_assert_int_eq(compile(0x10000, &t), -EBADMSG);
}
END_TEST

/* A .debug_frame FDE: CIE at offset 0, absolute 8-byte addresses. */
static void put_df_fde(unsigned char *df, size_t *len, uint64_t pc, uint64_t range,
		       const void *cfi, size_t n)
{
	uint32_t l = 4 + 16 + n, id = 0;

	memcpy(df + *len, &l, 4);
	memcpy(df + *len + 4, &id, 4);
	memcpy(df + *len + 8, &pc, 8);
	memcpy(df + *len + 16, &range, 8);
	memcpy(df + *len + 24, cfi, n);
	*len += 24 + n;
}

/* Both sections: .eh_frame's FDE where both describe a function, .debug_frame's elsewhere. */
START_TEST(eh_frame_wins_over_debug_frame)
{
	/* CIE: id -1, version 1, "", code 1, data -8, ra 16; CFA = rsp + 8, ra at CFA - 8 */
	static const unsigned char df_cie[] = { 16, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 1, 0, 1,
						0x78, 16, 0x0c, 7, 8, 0x90, 1, 0, 0 };
	static const unsigned char cfi16[] = { 0x41, 0x0e, 16 }, cfi32[] = { 0x41, 0x0e, 32 };
	static unsigned char elf[8192];
	unsigned char df[256];
	size_t df_len = sizeof(df_cie), size;
	struct unwind_image img;
	struct unwind_table *t;
	int32_t off;

	memcpy(df, df_cie, sizeof(df_cie));
	put_df_fde(df, &df_len, 0x1000, 0x10, cfi32, sizeof(cfi32));
	put_df_fde(df, &df_len, 0x2000, 0x10, cfi32, sizeof(cfi32));
	put(cie, sizeof(cie));
	put_fde(0, 0x1000, 0x10, cfi16, sizeof(cfi16));
	size = cfi_elf__make(elf, sizeof(elf), &(struct cfi_elf){ .eh = sec, .eh_len = sec_len,
								   .df = df, .df_len = df_len,
								   .memsz = 0x10000 });
	ck_assert_uint_gt(size, 0);
	ck_assert_int_eq(unwind_image__from_memory(&img, elf, size), 0);
	ck_assert_int_eq(unwind_table__compile(&img, &t), 0);
	ck_assert_int_eq(unwind_table__verify(t), 0);
	ck_assert_uint_eq(t->stats.fdes_debug_frame, 2);
	ck_assert_uint_eq(kind_at(t, 0x1001, &off), UNWIND_CFA_RSP);
	ck_assert_int_eq(off, 16);
	ck_assert_uint_eq(kind_at(t, 0x2001, &off), UNWIND_CFA_RSP);
	ck_assert_int_eq(off, 32);
	unwind_table__free(t);
	unwind_image__close(&img);
}
END_TEST

/* A real library cut short at many places: refused or compiled, never a fault. */
/*
 * A section larger than the compile's window (256 KiB), its FDEs in
 * address order and then against it (each FDE below the one before: a
 * window read at each, until the compile reads the section whole), the CIE
 * at the start, far behind them: every function's rule as its FDE says.
 */
START_TEST(a_section_larger_than_the_window_either_way)
{
	enum { N = 30000, SIZE = 0x40, BASE = 0x100000 };

	for (int reverse = 0; reverse < 2; reverse++) {
		struct unwind_table *t;
		int32_t off;

		sec_len = 0;
		put(cie, sizeof(cie));
		for (uint32_t i = 0; i < N; i++) {
			uint32_t f = reverse ? N - 1 - i : i;
			/* advance 1; def_cfa_offset 8 * (2 + f % 5) */
			unsigned char cfi[] = { 0x41, 0x0e, (unsigned char)(8 * (2 + f % 5)) };

			put_fde(0, BASE + f * SIZE, SIZE, cfi, sizeof(cfi));
		}
		ck_assert_uint_gt(sec_len, 2 * (256u << 10));
		ck_assert_int_eq(compile(BASE + N * SIZE + 0x10000, &t), 0);
		ck_assert_uint_eq(t->stats.fdes, N);
		ck_assert_uint_eq(t->stats.fdes_refused, 0);
		for (uint32_t f = 0; f < N; f++) {
			ck_assert_uint_eq(kind_at(t, BASE + f * SIZE, &off), UNWIND_CFA_RSP);
			ck_assert_int_eq(off, 8);
			ck_assert_uint_eq(kind_at(t, BASE + f * SIZE + 1, &off), UNWIND_CFA_RSP);
			ck_assert_int_eq(off, 8 * (2 + f % 5));
		}
		unwind_table__free(t);
	}
}
END_TEST

START_TEST(a_real_file_cut_short)
{
	const char *path = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	unsigned char *buf;
	struct stat st;
	int fd = open(path, O_RDONLY);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	buf = malloc(st.st_size);
	ck_assert_ptr_nonnull(buf);
	ck_assert_int_eq(pread(fd, buf, st.st_size, 0), st.st_size);
	close(fd);
	for (unsigned int i = 1; i <= 16; i++) {
		size_t size = st.st_size / 16 * i - (i % 3) * 7;
		struct unwind_image img;
		struct unwind_table *t;

		if (unwind_image__from_memory(&img, buf, size))
			continue;
		if (!unwind_table__compile(&img, &t)) {
			ck_assert_int_eq(unwind_table__verify(t), 0);
			unwind_table__free(t);
		}
		unwind_image__close(&img);
	}
	free(buf);
}
END_TEST

Suite *unwind_tables_hostile_suite(void)
{
	Suite *s = suite_create("unwind_tables_hostile");
	TCase *tc = tcase_create("crafted");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, rows_of_a_plain_fde);
	tcase_add_test(tc, a_function_across_pages_repeats_its_rule);
	tcase_add_test(tc, cie_pointers_that_loop_or_miss_are_refused);
	tcase_add_test(tc, absurd_lengths_end_the_walk);
	tcase_add_test(tc, every_truncation_of_a_section);
	tcase_add_test(tc, programs_that_cannot_be_followed_stop);
	tcase_add_test(tc, state_nesting_and_advances_are_bounded);
	tcase_add_test(tc, addresses_are_bounded_by_the_code_and_the_page_limit);
	tcase_add_test(tc, a_section_that_spends_the_budget_is_refused);
	tcase_add_test(tc, eh_frame_wins_over_debug_frame);
	tcase_add_test(tc, a_real_file_cut_short);
	tcase_add_test(tc, a_section_larger_than_the_window_either_way);
	suite_add_tcase(s, tc);
	return s;
}
