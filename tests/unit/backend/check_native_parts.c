// SPDX-License-Identifier: GPL-2.0
/* The native store's pure parts: row ranges, rule interning, page keys (issue 45). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "backend-bpf/native_parts.h"
#include "tests/support/tests.h"
#include "unwind/tables/tables.h"

START_TEST(ranges_fill_free_reuse)
{
	struct native_ranges r;
	uint32_t a, b, c, d;

	ck_assert_int_eq(native_ranges__init(&r, 100), 0);
	ck_assert_int_eq(native_ranges__alloc(&r, 30, &a), 0);
	ck_assert_int_eq(native_ranges__alloc(&r, 30, &b), 0);
	ck_assert_int_eq(native_ranges__alloc(&r, 40, &c), 0);
	ck_assert_uint_eq(a, 0);
	ck_assert_uint_eq(b, 30);
	ck_assert_uint_eq(c, 60);
	ck_assert_uint_eq(r.used, 100);
	/* Full. */
	ck_assert_int_eq(native_ranges__alloc(&r, 1, &d), -ENOSPC);
	ck_assert_int_eq(native_ranges__alloc(&r, 0, &d), -EINVAL);
	/* The middle one freed is reused, first fit. */
	ck_assert_int_eq(native_ranges__free(&r, b, 30), 0);
	ck_assert_int_eq(native_ranges__alloc(&r, 10, &d), 0);
	ck_assert_uint_eq(d, 30);
	ck_assert_uint_eq(native_ranges__largest(&r), 20);
	/* A double free, a part free already, or past the end: refused, nothing changed. */
	ck_assert_int_eq(native_ranges__free(&r, 45, 5), -EINVAL);
	ck_assert_int_eq(native_ranges__free(&r, 35, 10), -EINVAL);
	ck_assert_int_eq(native_ranges__free(&r, 95, 10), -EINVAL);
	ck_assert_uint_eq(r.used, 80);
	/* Everything back: one range again. */
	ck_assert_int_eq(native_ranges__free(&r, a, 30), 0);
	ck_assert_int_eq(native_ranges__free(&r, c, 40), 0);
	ck_assert_int_eq(native_ranges__free(&r, d, 10), 0);
	ck_assert_uint_eq(r.used, 0);
	ck_assert_uint_eq(r.nr_free, 1);
	ck_assert_uint_eq(native_ranges__largest(&r), 100);
	native_ranges__fini(&r);
}
END_TEST

START_TEST(ranges_fragmentation)
{
	struct native_ranges r;
	uint32_t first[50], got;

	ck_assert_int_eq(native_ranges__init(&r, 1000), 0);
	for (int i = 0; i < 50; i++)
		ck_assert_int_eq(native_ranges__alloc(&r, 20, &first[i]), 0);
	/* Every other one freed: 500 slots free, none longer than 20. */
	for (int i = 0; i < 50; i += 2)
		ck_assert_int_eq(native_ranges__free(&r, first[i], 20), 0);
	ck_assert_uint_eq(r.used, 500);
	ck_assert_uint_eq(r.nr_free, 25);
	ck_assert_uint_eq(native_ranges__largest(&r), 20);
	ck_assert_int_eq(native_ranges__alloc(&r, 21, &got), -ENOSPC);
	/* Freeing one between two free ranges merges three into one. */
	ck_assert_int_eq(native_ranges__free(&r, first[1], 20), 0);
	ck_assert_uint_eq(r.nr_free, 24);
	ck_assert_uint_eq(native_ranges__largest(&r), 60);
	ck_assert_int_eq(native_ranges__alloc(&r, 60, &got), 0);
	ck_assert_uint_eq(got, 0);
	/* Freed in any order, all merge back. */
	for (int i = 3; i < 50; i += 2)
		ck_assert_int_eq(native_ranges__free(&r, first[i], 20), 0);
	ck_assert_int_eq(native_ranges__free(&r, 0, 60), 0);
	ck_assert_uint_eq(r.nr_free, 1);
	ck_assert_uint_eq(r.used, 0);
	native_ranges__fini(&r);
}
END_TEST

START_TEST(ranges_random_against_a_bitmap)
{
	enum { CAP = 4096, N = 200 };
	unsigned char used[CAP] = { 0 };
	uint32_t firsts[N], lens[N];
	struct native_ranges r;
	unsigned int seed = 45;

	memset(lens, 0, sizeof(lens));
	ck_assert_int_eq(native_ranges__init(&r, CAP), 0);
	for (int step = 0; step < 20000; step++) {
		int i = rand_r(&seed) % N;

		if (lens[i]) {
			ck_assert_int_eq(native_ranges__free(&r, firsts[i], lens[i]), 0);
			memset(used + firsts[i], 0, lens[i]);
			lens[i] = 0;
		} else {
			uint32_t n = 1 + rand_r(&seed) % 80, f;
			uint32_t run = 0, want = UINT32_MAX;

			/* First fit by the bitmap. */
			for (uint32_t x = 0; x < CAP && want == UINT32_MAX; x++) {
				run = used[x] ? 0 : run + 1;
				if (run == n)
					want = x + 1 - n;
			}
			if (want == UINT32_MAX) {
				ck_assert_int_eq(native_ranges__alloc(&r, n, &f), -ENOSPC);
				continue;
			}
			ck_assert_int_eq(native_ranges__alloc(&r, n, &f), 0);
			ck_assert_uint_eq(f, want);
			memset(used + f, 1, n);
			firsts[i] = f;
			lens[i] = n;
		}
	}
	native_ranges__fini(&r);
}
END_TEST

static struct unwind_rule rule(int32_t cfa_off, uint8_t cfa)
{
	return (struct unwind_rule){ .cfa_off = cfa_off, .cfa = cfa };
}

START_TEST(rules_interned_by_bytes)
{
	struct unwind_rule none = { 0 }, a = rule(8, UNWIND_CFA_RSP), b = rule(16, UNWIND_CFA_RSP);
	struct native_rules ri;
	uint32_t id, ida, idb, ida2;
	bool fresh;

	ck_assert_int_eq(native_rules__init(&ri, 3), 0);
	/* NONE is slot 0, never counted. */
	ck_assert_int_eq(native_rules__get(&ri, &none, &id, &fresh), 0);
	ck_assert_uint_eq(id, 0);
	ck_assert(!fresh);
	ck_assert_int_eq(native_rules__get(&ri, &a, &ida, &fresh), 0);
	ck_assert(fresh);
	ck_assert_uint_ne(ida, 0);
	/* The same 12 bytes from another table: the same id, not fresh. */
	ck_assert_int_eq(native_rules__get(&ri, &(struct unwind_rule){ .cfa_off = 8,
									 .cfa = UNWIND_CFA_RSP },
					   &ida2, &fresh), 0);
	ck_assert_uint_eq(ida2, ida);
	ck_assert(!fresh);
	ck_assert_int_eq(native_rules__get(&ri, &b, &idb, &fresh), 0);
	ck_assert(fresh && idb != ida && idb != 0);
	ck_assert_uint_eq(ri.used, 3);
	/* Full: max 3 ids, 0 included. */
	ck_assert_int_eq(native_rules__get(&ri, &(struct unwind_rule){ .cfa_off = 24,
									 .cfa = UNWIND_CFA_RSP },
					   &id, &fresh), -ENOSPC);
	/* a has two references: one put keeps it. */
	native_rules__put(&ri, ida);
	ck_assert_int_eq(native_rules__get(&ri, &a, &id, &fresh), 0);
	ck_assert_uint_eq(id, ida);
	ck_assert(!fresh);
	native_rules__put(&ri, ida);
	native_rules__put(&ri, ida);
	ck_assert_uint_eq(ri.used, 2);
	/* Its id goes to the next new rule, which must be written (fresh). */
	ck_assert_int_eq(native_rules__get(&ri, &(struct unwind_rule){ .cfa_off = 24,
									 .cfa = UNWIND_CFA_RSP },
					   &id, &fresh), 0);
	ck_assert_uint_eq(id, ida);
	ck_assert(fresh);
	/* Puts of 0 or of ids not held change nothing. */
	native_rules__put(&ri, 0);
	native_rules__put(&ri, 99);
	ck_assert_uint_eq(ri.used, 3);
	native_rules__fini(&ri);
}
END_TEST

static const struct native_page_entry *find(const struct native_page_entry *e, size_t n,
					    uint32_t small, uint64_t page)
{
	for (size_t i = 0; i < n; i++)
		if (e[i].key.small == small && e[i].key.page == page)
			return &e[i];
	return NULL;
}

START_TEST(pages_one_mapping)
{
	struct native_span sp = { .start = 0x7f0000010000, .end = 0x7f0000032000,
				  .val = { .bias = 0x7f0000000000, .table = 7,
					   .kind = NATIVE_PAGE_TABLE } };
	struct native_page_entry *e;
	size_t n;

	ck_assert_int_eq(native_pages__split(42, &sp, 1, 100, &e, &n), 0);
	/* 0x10000..0x31fff: three 64 KiB pages, the last one only partly. */
	ck_assert_uint_eq(n, 3);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_eq(e[i].key.tgid, 42);
		ck_assert_uint_eq(e[i].key.small, 0);
		ck_assert_uint_eq(e[i].key.page, (0x7f0000010000 >> 16) + i);
		ck_assert_uint_eq(e[i].val.kind, NATIVE_PAGE_TABLE);
		ck_assert_uint_eq(e[i].val.table, 7);
		ck_assert_uint_eq(e[i].val.bias, 0x7f0000000000);
	}
	free(e);
}
END_TEST

START_TEST(pages_shared_64k_split_into_4k)
{
	/* Given out of order: b ends in the 64 KiB page where c starts; a is alone. */
	struct native_span sp[] = {
		{ .start = 0x23000, .end = 0x25000, .val = { .table = 3, .kind = NATIVE_PAGE_TABLE } },
		{ .start = 0x10000, .end = 0x22000, .val = { .table = 2, .kind = NATIVE_PAGE_FP } },
		{ .start = 0x0, .end = 0x10000, .val = { .table = 1, .kind = NATIVE_PAGE_TABLE } },
	};
	const struct native_page_entry *x;
	struct native_page_entry *e;
	size_t n;

	ck_assert_int_eq(native_pages__split(9, sp, 3, 100, &e, &n), 0);
	/* Page 0: a's alone. Page 1: b's alone. Page 2: b (0x20000-0x21fff) and c: SPLIT. */
	ck_assert_uint_eq(find(e, n, 0, 0)->val.table, 1);
	ck_assert_uint_eq(find(e, n, 0, 1)->val.table, 2);
	ck_assert_uint_eq(find(e, n, 0, 1)->val.kind, NATIVE_PAGE_FP);
	ck_assert_uint_eq(find(e, n, 0, 2)->val.kind, NATIVE_PAGE_SPLIT);
	ck_assert_uint_eq(find(e, n, 1, 0x20)->val.table, 2);
	ck_assert_uint_eq(find(e, n, 1, 0x21)->val.table, 2);
	ck_assert_ptr_null(find(e, n, 1, 0x22));	/* a hole */
	ck_assert_uint_eq(find(e, n, 1, 0x23)->val.table, 3);
	x = find(e, n, 1, 0x24);
	ck_assert_uint_eq(x->val.kind, NATIVE_PAGE_TABLE);
	ck_assert_ptr_null(find(e, n, 1, 0x25));
	/* 3 big + 4 small; no small entry for pages of one mapping only. */
	ck_assert_uint_eq(n, 7);
	/* Sorted: big ones first, by page. */
	for (size_t i = 1; i < n; i++)
		ck_assert(e[i - 1].key.small < e[i].key.small ||
			  (e[i - 1].key.small == e[i].key.small && e[i - 1].key.page < e[i].key.page));
	free(e);
}
END_TEST

START_TEST(pages_many_small_mappings_in_one_64k)
{
	struct native_span sp[4];
	struct native_page_entry *e;
	size_t n;

	for (int i = 0; i < 4; i++)
		sp[i] = (struct native_span){ .start = 0x50000 + i * 0x4000,
					      .end = 0x50000 + i * 0x4000 + 0x1000,
					      .val = { .table = 10 + i, .kind = NATIVE_PAGE_TABLE } };
	ck_assert_int_eq(native_pages__split(1, sp, 4, 100, &e, &n), 0);
	/* One SPLIT, one 4 KiB entry each. */
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(find(e, n, 0, 5)->val.kind, NATIVE_PAGE_SPLIT);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(find(e, n, 1, 0x50 + 4 * i)->val.table, 10 + i);
	free(e);
}
END_TEST

START_TEST(pages_hostile_spans)
{
	struct native_span over[] = { { .start = 0x10000, .end = 0x30000 },
				      { .start = 0x20000, .end = 0x40000 } };
	struct native_span odd = { .start = 0x10010, .end = 0x20000 };
	struct native_span empty = { .start = 0x10000, .end = 0x10000 };
	/* 1 TiB of code: far more entries than allowed, refused without walking it all. */
	struct native_span huge = { .start = 0, .end = 1ull << 40 };
	struct native_page_entry *e;
	size_t n;

	ck_assert_int_eq(native_pages__split(1, over, 2, 100, &e, &n), -EINVAL);
	ck_assert_int_eq(native_pages__split(1, &odd, 1, 100, &e, &n), -EINVAL);
	ck_assert_int_eq(native_pages__split(1, &empty, 1, 100, &e, &n), -EINVAL);
	ck_assert_int_eq(native_pages__split(1, &huge, 1, 1000, &e, &n), -E2BIG);
	ck_assert_ptr_null(e);
	ck_assert_int_eq(native_pages__split(1, NULL, 0, 100, &e, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(e);
}
END_TEST

Suite *native_parts_suite(void)
{
	Suite *s = suite_create("native_parts");
	TCase *tc = tcase_create("ranges");
	TCase *tr = tcase_create("rules");
	TCase *tp = tcase_create("pages");

	tcase_add_test(tc, ranges_fill_free_reuse);
	tcase_add_test(tc, ranges_fragmentation);
	tcase_add_test(tc, ranges_random_against_a_bitmap);
	tcase_add_test(tr, rules_interned_by_bytes);
	tcase_add_test(tp, pages_one_mapping);
	tcase_add_test(tp, pages_shared_64k_split_into_4k);
	tcase_add_test(tp, pages_many_small_mappings_in_one_64k);
	tcase_add_test(tp, pages_hostile_spans);
	suite_add_tcase(s, tc);
	suite_add_tcase(s, tr);
	suite_add_tcase(s, tp);
	return s;
}
