// SPDX-License-Identifier: GPL-2.0
/*
 * Memory and time of the symbol readers on hostile files, against harmless
 * files of the same size: written by the hostilelf workload (ELF files) or
 * here (perf maps), read in a child whose peak RSS is measured.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sym/elfsym.h"
#include "tests/support/measure.h"
#include "tests/support/tests.h"

/* Writes an ELF file with the hostilelf workload; returns its path (static). */
static const char *hostilelf(const char *mode)
{
	static char paths[4][64];
	static int next;
	char *path = paths[next++ % 4];
	char *argv[] = { (char *)workload("hostilelf"), (char *)mode, path, NULL };
	struct run_result r;

	snprintf(path, sizeof(paths[0]), "/tmp/profile-bounds-%s-%d.elf", mode, (int)getpid());
	run_ok(&r, argv, 60);
	run_result_free(&r);
	return path;
}

/* Loads the symbols of path; checks the names of the first and last functions. */
static long load_symbols(const void *arg)
{
	struct elf_symtab *st = elf_symtab__load(arg);
	uint64_t off;
	const char *first, *last;
	long ok;

	if (!st)
		return 10;
	first = elf_symtab__lookup_vaddr(st, 0x1000 + 4, &off);
	last = elf_symtab__lookup_vaddr(st, 0x1000 + 8191 * 16, &off);
	if (!first || !last)
		return 11;
	if (!strcmp(first, "fn_00000000000"))
		ok = !strcmp(last, "fn_00000008191") ? 0 : 12;
	else
		/* Suffixes of one long string, cut, but not to nothing. */
		ok = first[0] == 'f' && strlen(first) == 4096 && last[0] == 'f' ? 0 : 13;
	elf_symtab__free(st);
	return ok;
}

/*
 * 8192 functions named by suffixes of one 128 KiB string (0.45 MB of ELF)
 * took a copy of it each: 1 GB. Names are referenced in the string table.
 */
START_TEST(symbols_naming_one_long_string_cost_what_plain_ones_do)
{
	const char *plain = hostilelf("plain"), *hostile = hostilelf("names");
	struct cost p = measure(load_symbols, plain, 60);
	struct cost h = measure(load_symbols, hostile, 60);

	unlink(plain);
	unlink(hostile);
	ck_assert_msg(h.rss_kb < 2 * p.rss_kb + 16384, "hostile names: %ld KB, plain: %ld KB",
		      h.rss_kb, p.rss_kb);
	ck_assert_msg(h.seconds < 4 * p.seconds + 1, "hostile names: %.2f s, plain: %.2f s",
		      h.seconds, p.seconds);
	ck_assert_int_eq(p.result, 0);
	ck_assert_int_eq(h.result, 0);
}
END_TEST

Suite *symbounds_suite(void)
{
	Suite *s = suite_create("symbounds");
	TCase *te = tcase_create("elfnames");

	tcase_set_timeout(te, 120);
	tcase_add_test(te, symbols_naming_one_long_string_cost_what_plain_ones_do);
	suite_add_tcase(s, te);
	return s;
}
