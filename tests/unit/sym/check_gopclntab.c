// SPDX-License-Identifier: GPL-2.0
/*
 * Go function names from .gopclntab (core/sym/gopclntab.c): a table built
 * here byte by byte, then broken in each way a hostile file could; and a Go
 * program built with Debian's go, whose stripped copy must name every
 * function as the unstripped copy's .symtab does (nm). No root needed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/sym/elfsym.h"
#include "core/sym/gopclntab.h"
#include "tests/support/tests.h"

#define GO "/usr/lib/go-1.19/bin/go"
#define TEXT 0x401000u

/* A Go 1.18 table of two functions, main.a [TEXT, +0x10) and main.b [+0x10, +0x30). */
struct table {
	unsigned char b[132];	/* the last 8 bytes unused */
};

static void put32(unsigned char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void put64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void build(struct table *t)
{
	unsigned char *b = t->b;

	memset(b, 0, sizeof(t->b));
	put32(b, 0xfffffff0);		/* magic: Go 1.18 */
	b[6] = 1;			/* minLC */
	b[7] = 8;			/* ptrSize */
	put64(b + 8, 2);		/* nfunc */
	put64(b + 24, TEXT);		/* textStart */
	put64(b + 32, 72);		/* funcnameOffset */
	put64(b + 64, 88);		/* pclnOffset: functab */
	memcpy(b + 72, "main.a\0main.b\0", 14);
	/* functab: {entry 0, funcoff 20}, {entry 0x10, funcoff 28}, end 0x30 */
	put32(b + 88, 0);
	put32(b + 92, 20);
	put32(b + 96, 0x10);
	put32(b + 100, 28);
	put32(b + 104, 0x30);
	/* _func records: entryOff, nameOff */
	put32(b + 108, 0);
	put32(b + 112, 0);
	put32(b + 116, 0x10);
	put32(b + 120, 7);
}

struct seen {
	int n;
	uint64_t addr[4], size[4];
	char name[4][32];
};

static int record(uint64_t addr, uint64_t size, const char *name, size_t len, void *arg)
{
	struct seen *s = arg;

	if (s->n < 4) {
		s->addr[s->n] = addr;
		s->size[s->n] = size;
		snprintf(s->name[s->n], sizeof(s->name[0]), "%.*s", (int)len, name);
	}
	s->n++;
	return 0;
}

static int walk(const struct table *t, size_t size, struct seen *s)
{
	memset(s, 0, sizeof(*s));
	return go_pclntab__for_each(t->b, size, 0, record, s);
}

START_TEST(a_table_names_its_functions_with_their_ranges)
{
	struct table t;
	struct seen s;

	build(&t);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), 2);
	ck_assert_uint_eq(s.addr[0], TEXT);
	ck_assert_uint_eq(s.size[0], 0x10);
	ck_assert_str_eq(s.name[0], "main.a");
	ck_assert_uint_eq(s.addr[1], TEXT + 0x10);
	ck_assert_uint_eq(s.size[1], 0x20);
	ck_assert_str_eq(s.name[1], "main.b");
}
END_TEST

START_TEST(broken_tables_are_refused_or_skipped_within_their_bounds)
{
	struct table t;
	struct seen s;

	/* Not a table of a known version. */
	build(&t);
	put32(t.b, 0xfffffffb);		/* Go 1.2-1.15 */
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), -ENOENT);
	ck_assert_int_eq(walk(&t, 7, &s), -ENOENT);
	/* A header cut short, a count larger than the section, offsets outside it. */
	build(&t);
	ck_assert_int_eq(walk(&t, 60, &s), -EINVAL);
	put64(t.b + 8, 1ull << 40);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), -EINVAL);
	build(&t);
	put64(t.b + 64, 1000);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), -EINVAL);
	/* The functab's last entry past the end: the count does not fit. */
	build(&t);
	ck_assert_int_eq(walk(&t, 106, &s), -EINVAL);
	/* A name offset outside the names, a record outside the section: that function only. */
	build(&t);
	put32(t.b + 120, 1000);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), 1);
	ck_assert_str_eq(s.name[0], "main.a");
	build(&t);
	put32(t.b + 92, 0xfffffff0);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), 1);
	ck_assert_str_eq(s.name[0], "main.b");
	/* A name without its NUL before the end of the section is not read past it. */
	build(&t);
	memcpy(t.b + 124, "zzzzzzzz", 8);
	put32(t.b + 120, 124 - 72);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), 1);
	ck_assert_str_eq(s.name[0], "main.a");
	/* Entries out of order: no range for that one. */
	build(&t);
	put32(t.b + 96, 0x40);
	ck_assert_int_eq(walk(&t, sizeof(t.b), &s), 1);
	ck_assert_str_eq(s.name[0], "main.a");
}
END_TEST

/* The stripped program's names where nm reads the unstripped one's. */
START_TEST(a_stripped_go_program_names_what_its_symtab_names)
{
	char dir[] = "/tmp/profile-go-XXXXXX", cmd[2048], path[600], line[1024];
	struct elf_symtab *st;
	unsigned int checked = 0, same = 0, main_spin = 0;
	FILE *nm;

	if (access(GO, X_OK)) {
		fprintf(stderr, "gopclntab: skipping: %s is not installed "
				"(scripts/install-deps.sh installs golang-go)\n", GO);
		return;
	}
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(cmd, sizeof(cmd),
		 "cd %s && printf '%%s\\n' 'package main' 'import (\"fmt\"; \"os\")' "
		 "'func spin(n int) int { s := 0; for i := 0; i < n; i++ { s += len(fmt.Sprint(i)) }; return s }' "
		 "'func main() { fmt.Fprintln(os.Stdout, spin(10)) }' > main.go && "
		 "HOME=%s GOCACHE=%s/cache GO111MODULE=off GOFLAGS= %s build -o prog main.go && "
		 "strip -o prog.stripped prog",
		 dir, dir, dir, GO);
	ck_assert_msg(system(cmd) == 0, "%s", cmd);
	snprintf(path, sizeof(path), "%s/prog.stripped", dir);
	st = elf_symtab__load(path);
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(elf_symtab__source(st), ELF_SYM_GOPCLNTAB);
	ck_assert_uint_gt(elf_symtab__count(st), 1000);
	snprintf(cmd, sizeof(cmd), "nm %s/prog", dir);
	nm = popen(cmd, "r");
	ck_assert_ptr_nonnull(nm);
	while (fgets(line, sizeof(line), nm)) {
		unsigned long long addr;
		char type, name[600];
		uint64_t off;
		const char *got;

		if (sscanf(line, "%llx %c %599s", &addr, &type, name) != 3 ||
		    (type != 'T' && type != 't') || !strchr(name, '.'))
			continue;
		/* The symtab names assembly functions' ABI0 symbols "x.abi0"; the runtime "x". */
		if (strlen(name) > 5 && !strcmp(name + strlen(name) - 5, ".abi0"))
			name[strlen(name) - 5] = '\0';
		got = elf_symtab__lookup_vaddr(st, addr, &off);
		checked++;
		same += got && off == 0 && !strcmp(got, name);
		main_spin += got && !strcmp(got, "main.spin");
	}
	pclose(nm);
	elf_symtab__free(st);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	/* nm also lists a few labels (runtime.text, ...) and spells type..eq names apart. */
	ck_assert_msg(checked > 1000 && same * 100 >= checked * 98, "%u of %u", same, checked);
	ck_assert_uint_eq(main_spin, 1);
}
END_TEST

Suite *gopclntab_suite(void)
{
	Suite *s = suite_create("gopclntab");
	TCase *tc = tcase_create("gopclntab");

	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_table_names_its_functions_with_their_ranges);
	tcase_add_test(tc, broken_tables_are_refused_or_skipped_within_their_bounds);
	tcase_add_test(tc, a_stripped_go_program_names_what_its_symtab_names);
	suite_add_tcase(s, tc);
	return s;
}
