// SPDX-License-Identifier: GPL-2.0
/*
 * A kernel function's range from a kallsyms text (compat/kallsyms.c), in
 * one pass over files laid out as /proc/kallsyms is: mostly sorted, with
 * data symbols between, modules and aliases out of order, zeros for users
 * kptr_restrict hides the addresses from. No root needed.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "compat/kallsyms.h"
#include "tests/support/tests.h"

static char path[] = "/tmp/profile-kallsyms-XXXXXX";

static void write_text(const char *text)
{
	int fd = mkstemp(path);
	FILE *f;

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

static void teardown(void)
{
	unlink(path);
	snprintf(path, sizeof(path), "/tmp/profile-kallsyms-XXXXXX");
}

START_TEST(the_next_text_symbol_ends_it)
{
	uint64_t start, end;

	write_text("ffffffff81000000 T _stext\n"
		   "ffffffff81a00000 t __schedule\n"
		   "ffffffff81a00100 D some_data\n"
		   "ffffffff81a00c40 T schedule\n"
		   "ffffffff81a01000 T later\n");
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), 0);
	ck_assert_uint_eq(start, 0xffffffff81a00000ull);
	ck_assert_uint_eq(end, 0xffffffff81a00c40ull);
}
END_TEST

/* An entry out of order before the symbol (an alias, a module) can be its end. */
START_TEST(out_of_order_entries_count)
{
	uint64_t start, end;

	write_text("ffffffffc0000000 t mod_fn\t[mod]\n"
		   "ffffffff81a00800 t alias_in_between\n"
		   "ffffffff81000000 T _stext\n"
		   "ffffffff81a00000 T __schedule\n"
		   "ffffffff81a00c40 T schedule\n");
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), 0);
	ck_assert_uint_eq(start, 0xffffffff81a00000ull);
	ck_assert_uint_eq(end, 0xffffffff81a00800ull);
}
END_TEST

START_TEST(the_last_symbol_ends_nowhere)
{
	uint64_t start, end;

	write_text("ffffffff81000000 T _stext\nffffffff81a00000 T __schedule\n");
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), 0);
	ck_assert_uint_eq(end, UINT64_MAX);
}
END_TEST

START_TEST(missing_or_hidden_is_enoent)
{
	uint64_t start, end;

	write_text("ffffffff81000000 T _stext\nffffffff81a00000 D __schedule\n");
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), -ENOENT);
	teardown();
	write_text("0000000000000000 T _stext\n0000000000000000 T __schedule\n");
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), -ENOENT);
	ck_assert_int_eq(kallsyms__range("/nonexistent/kallsyms", "__schedule", &start, &end),
			 -ENOENT);
}
END_TEST

/* Lines longer than the buffer or without fields are skipped, not misread. */
START_TEST(malformed_lines_are_skipped)
{
	uint64_t start, end;
	char text[4096];
	int n;

	n = snprintf(text, sizeof(text), "garbage\n\nffffffff81a00000 T __schedule\nzz T x\n");
	for (int i = 0; i < 700 && n < (int)sizeof(text) - 64; i++)
		text[n++] = 'a';
	snprintf(text + n, sizeof(text) - n, "\nffffffff81a00200 T schedule\n");
	write_text(text);
	ck_assert_int_eq(kallsyms__range(path, "__schedule", &start, &end), 0);
	ck_assert_uint_eq(end, 0xffffffff81a00200ull);
}
END_TEST

/* This machine's own file, when its addresses are shown: __schedule has a real size. */
START_TEST(proc_kallsyms)
{
	uint64_t start, end;
	int err = kallsyms__range("/proc/kallsyms", "__schedule", &start, &end);

	if (err == -ENOENT)
		return;	/* hidden from this user */
	ck_assert_int_eq(err, 0);
	ck_assert_uint_gt(end, start);
	ck_assert_uint_lt(end - start, 1 << 20);
}
END_TEST

Suite *kallsyms_suite(void)
{
	Suite *s = suite_create("kallsyms");
	TCase *tc = tcase_create("range");

	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, the_next_text_symbol_ends_it);
	tcase_add_test(tc, out_of_order_entries_count);
	tcase_add_test(tc, the_last_symbol_ends_nowhere);
	tcase_add_test(tc, missing_or_hidden_is_enoent);
	tcase_add_test(tc, malformed_lines_are_skipped);
	tcase_add_test(tc, proc_kallsyms);
	suite_add_tcase(s, tc);
	return s;
}
