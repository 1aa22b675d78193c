// SPDX-License-Identifier: GPL-2.0
/*
 * Line tables: the decoders against CPython's own reading of real tables
 * (each installed interpreter compiles argparse and a function with long
 * jumps, and prints every code object's table and its lines: co_lines()
 * from 3.10, dis.findlinestarts before), and against hostile tables.
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python/pyint.h"
#include "tests/support/tests.h"
#include "tests/unit/python/pyenv.h"

static const char dump_script[] =
	"import argparse, binascii, dis, sys\n"
	"def codes(co):\n"
	"    yield co\n"
	"    for c in co.co_consts:\n"
	"        if hasattr(c, 'co_code'):\n"
	"            for x in codes(c):\n"
	"                yield x\n"
	"src = open(argparse.__file__.replace('.pyc', '.py')).read()\n"
	"src += '\\ndef far(a):\\n    b = 1\\n' + '\\n' * 300 + '    c = [' + ', '.join(['a'] * 300)\n"
	"src += ']\\n' + '\\n' * 200 + '    return (b +\\n        c[0] if a else\\n        b)\\n'\n"
	"out = []\n"
	"for co in codes(compile(src, 'x.py', 'exec')):\n"
	"    new = sys.version_info >= (3, 10)\n"
	"    table = co.co_linetable if new else co.co_lnotab\n"
	"    out.append('code %d %d %s' % (co.co_firstlineno, len(co.co_code),\n"
	"               binascii.hexlify(table).decode('ascii') or '-'))\n"
	"    if new:\n"
	"        for start, end, line in co.co_lines():\n"
	"            out.append('r %d %d %d' % (start, end, line or 0))\n"
	"    else:\n"
	"        for off, line in dis.findlinestarts(co):\n"
	"            out.append('s %d %d' % (off, line))\n"
	"sys.stdout.write('\\n'.join(out) + '\\n')\n";

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;

	if (!strcmp(hex, "-"))
		return 0;
	for (; hex[0] && hex[1] && n < max; hex += 2) {
		unsigned int b;

		ck_assert_int_eq(sscanf(hex, "%2x", &b), 1);
		out[n++] = (uint8_t)b;
	}
	return n;
}

struct starts {
	int off[4096], line[4096];
	size_t nr;
};

/* <= 3.9: the line of offset off is that of the last start at or before it. */
static int line_of_starts(const struct starts *s, int firstline, int off)
{
	int line = firstline;

	for (size_t i = 0; i < s->nr && s->off[i] <= off; i++)
		line = s->line[i];
	return line;
}

/*
 * Checks one code object's table at every offset of its code; the count of
 * offsets checked. *head becomes the next code object's head line, or NULL.
 */
static size_t check_code(const struct py_layout *l, char **save, char **head, size_t *codes)
{
	static uint8_t table[1 << 20];
	static char hex[1 << 21];
	static struct starts starts;
	int firstline, code_len;
	size_t len, checked = 0;
	char *line;

	ck_assert_int_eq(sscanf(*head, "code %d %d %2097151s", &firstline, &code_len, hex), 3);
	len = unhex(hex, table, sizeof(table));
	starts.nr = 0;
	(*codes)++;
	while ((line = strtok_r(NULL, "\n", save))) {
		int a, b, c;

		if (!strncmp(line, "code ", 5))
			break;
		if (sscanf(line, "r %d %d %d", &a, &b, &c) == 3) {
			for (int off = a; off < b; off += 2, checked++)
				ck_assert_msg(py_lines__line(l, table, len, firstline, off) == c,
					      "%d.%d: code at line %d, offset %d: %d, CPython says %d",
					      l->major, l->minor, firstline, off,
					      py_lines__line(l, table, len, firstline, off), c);
		} else if (sscanf(line, "s %d %d", &a, &b) == 2 && starts.nr < 4096) {
			starts.off[starts.nr] = a;
			starts.line[starts.nr++] = b;
		}
	}
	if (l->lines_kind == PY_LINES_LNOTAB) {
		/* 2.7 instructions are 1 or 3 bytes: every offset; 3.6+ 2-byte units. */
		int step = l->major == 2 ? 1 : 2;

		for (int off = 0; off < code_len; off += step, checked++)
			ck_assert_msg(py_lines__line(l, table, len, firstline, off) ==
					      line_of_starts(&starts, firstline, off),
				      "%d.%d: code at line %d, offset %d: %d, CPython says %d",
				      l->major, l->minor, firstline, off,
				      py_lines__line(l, table, len, firstline, off),
				      line_of_starts(&starts, firstline, off));
	}
	/* What stopped the loop is the next code object's head. */
	*head = line;
	return checked;
}

START_TEST(real_tables_decode_as_cpython_reads_them)
{
	const char *minor = py_test_minors[_i];
	char exe_buf[512], *argv[] = { exe_buf, "-E", "-s", "-c", (char *)dump_script, NULL };
	const char *exe = py_test_interpreter(minor, exe_buf, sizeof(exe_buf));
	const struct py_layout *l;
	struct run_result r;
	size_t codes = 0, checked;
	char *save = NULL, *first;

	if (!exe) {
		fprintf(stderr, "py_lines: no Python %s here: skipped\n", minor);
		return;
	}
	if (!strcmp(minor, "debian"))
		l = py_layout__for_version(3, 11);
	else
		l = py_layout__for_version(minor[0] - '0', atoi(minor + 2));
	ck_assert_ptr_nonnull(l);
	run_ok(&r, argv, 60);
	first = strtok_r(r.out, "\n", &save);
	ck_assert_ptr_nonnull(first);
	for (checked = 0; first;)
		checked += check_code(l, &save, &first, &codes);
	ck_assert_msg(codes > 100 && checked > 5000, "%s: %zu code objects, %zu offsets", exe,
		      codes, checked);
	run_result_free(&r);
}
END_TEST

START_TEST(edge_tables)
{
	/* 3.10: a range without a line leaves the count where it was. */
	static const uint8_t t310[] = { 4, 1, 2, 0x80, 2, 3 };
	/* 3.11: a long-form entry, a no-location entry, a one-line-form entry. */
	static const uint8_t t311[] = { 0x80 | 14 << 3 | 1, 0x0a, 0, 0, 0, 0x80 | 15 << 3,
					0x80 | 11 << 3, 1, 2 };
	/* 2.7's increments are unsigned, 3.6+'s signed. */
	static const uint8_t lnotab[] = { 2, 0xfe, 2, 5 };

	ck_assert_int_eq(py_lines__linetable310(t310, sizeof(t310), 10, 0), 11);
	ck_assert_int_eq(py_lines__linetable310(t310, sizeof(t310), 10, 4), -1);
	ck_assert_int_eq(py_lines__linetable310(t310, sizeof(t310), 10, 6), 14);
	ck_assert_int_eq(py_lines__linetable310(t310, sizeof(t310), 10, 8), -1);
	ck_assert_int_eq(py_lines__linetable310(t310, sizeof(t310), 10, -2), 10);
	ck_assert_int_eq(py_lines__locations(t311, sizeof(t311), 10, 0), 15);
	ck_assert_int_eq(py_lines__locations(t311, sizeof(t311), 10, 2), 15);
	ck_assert_int_eq(py_lines__locations(t311, sizeof(t311), 10, 4), -1);
	ck_assert_int_eq(py_lines__locations(t311, sizeof(t311), 10, 6), 16);
	ck_assert_int_eq(py_lines__locations(t311, sizeof(t311), 10, 8), -1);
	ck_assert_int_eq(py_lines__lnotab(lnotab, sizeof(lnotab), 10, 2, true), 8);
	ck_assert_int_eq(py_lines__lnotab(lnotab, sizeof(lnotab), 10, 4, true), 13);
	ck_assert_int_eq(py_lines__lnotab(lnotab, sizeof(lnotab), 10, 2, false), 264);
	ck_assert_int_eq(py_lines__lnotab(lnotab, 3, 10, 100, true), 8);
	/* A line that would overflow an int is no line; a varint that never ends ends with the table. */
	{
		static const uint8_t big[] = { 0x80 | 13 << 3, 0x7e, 0x7f, 0x7f, 0x7f, 0x7f, 0x3f };
		static const uint8_t endless[] = { 0x80 | 13 << 3, 0x40, 0x40, 0x40 };

		ck_assert_int_eq(py_lines__locations(big, sizeof(big), 0x7fffff00, 0), -1);
		ck_assert_int_eq(py_lines__locations(endless, sizeof(endless), 5, 0), 5);
	}
}
END_TEST

/* Any bytes: no crash, no read past the table (AddressSanitizer watches), bounded time. */
START_TEST(random_tables_are_harmless)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL;

	for (int round = 0; round < 2000; round++) {
		size_t len = round % 64;
		uint8_t *t = malloc(len ? len : 1);

		for (size_t i = 0; i < len; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			t[i] = (uint8_t)x;
		}
		for (int64_t addr = -4; addr < 300; addr += 3) {
			ck_assert_int_ge(py_lines__lnotab(t, len, 1, addr, true), -1);
			ck_assert_int_ge(py_lines__linetable310(t, len, 1, addr), -1);
			ck_assert_int_ge(py_lines__locations(t, len, 1, addr), -1);
		}
		free(t);
	}
}
END_TEST

Suite *py_lines_suite(void)
{
	Suite *s = suite_create("py_lines");
	TCase *tc = tcase_create("tables");

	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, real_tables_decode_as_cpython_reads_them, 0, PY_TEST_NR_MINORS);
	tcase_add_test(tc, edge_tables);
	tcase_add_test(tc, random_tables_are_harmless);
	suite_add_tcase(s, tc);
	return s;
}
