// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/python_layouts.h against the DWARF of the pyenv builds: gdb prints
 * each field's offset in each installed libpython, and the table must say
 * the same. Versions not installed are skipped; 3.14 has no build here.
 */
#include <check.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "interp/python/python.h"
#include "tests/support/tests.h"
#include "tests/unit/python/pyenv.h"

/* A field: from version lo to hi (major * 100 + minor), its C expression, the table's value. */
struct field {
	int lo, hi;
	const char *expr;
	int16_t field;		/* offsetof(struct py_layout, ...), or -1: constant */
	int32_t constant;
	bool at_most;		/* the table's value may be smaller (bytes read of a struct) */
};

#define L(f) offsetof(struct py_layout, f), 0, false
#define LM(f) offsetof(struct py_layout, f), 0, true
#define K(c) -1, c, false

static const struct field fields[] = {
	{ 307, 399, "&((_PyRuntimeState *)0)->interpreters.head", L(runtime_interp_head) },
	{ 207, 399, "&((PyInterpreterState *)0)->next", L(interp_next) },
	{ 207, 310, "&((PyInterpreterState *)0)->tstate_head", L(interp_threads_head) },
	{ 311, 399, "&((PyInterpreterState *)0)->threads.head", L(interp_threads_head) },
	{ 207, 399, "&((PyThreadState *)0)->next", L(tstate_next) },
	{ 207, 399, "&((PyThreadState *)0)->interp", L(tstate_interp) },
	{ 207, 310, "&((PyThreadState *)0)->frame", L(tstate_frame) },
	{ 311, 312, "&((PyThreadState *)0)->cframe", L(tstate_frame) },
	{ 311, 312, "&((_PyCFrame *)0)->current_frame", L(cframe_current) },
	{ 313, 399, "&((PyThreadState *)0)->current_frame", L(tstate_frame) },
	{ 207, 399, "&((PyThreadState *)0)->thread_id", L(tstate_thread_id) },
	{ 311, 399, "&((PyThreadState *)0)->native_thread_id", L(tstate_native_tid) },
	{ 207, 310, "&((PyFrameObject *)0)->f_code", L(frame_code) },
	{ 207, 310, "&((PyFrameObject *)0)->f_back", L(frame_back) },
	{ 207, 310, "&((PyFrameObject *)0)->f_lasti", L(frame_lasti) },
	{ 207, 310, "sizeof(PyFrameObject)", LM(frame_read) },
	{ 311, 312, "&((_PyInterpreterFrame *)0)->f_code", L(frame_code) },
	{ 313, 399, "&((_PyInterpreterFrame *)0)->f_executable", L(frame_code) },
	{ 311, 399, "&((_PyInterpreterFrame *)0)->previous", L(frame_back) },
	{ 311, 312, "&((_PyInterpreterFrame *)0)->prev_instr", L(frame_lasti) },
	{ 313, 399, "&((_PyInterpreterFrame *)0)->instr_ptr", L(frame_lasti) },
	{ 311, 311, "&((_PyInterpreterFrame *)0)->is_entry", L(frame_entry) },
	{ 312, 399, "&((_PyInterpreterFrame *)0)->owner", L(frame_entry) },
	{ 311, 399, "sizeof(_PyInterpreterFrame)", LM(frame_read) },
	{ 207, 399, "&((PyCodeObject *)0)->co_filename", L(code_filename) },
	{ 207, 399, "&((PyCodeObject *)0)->co_name", L(code_name) },
	{ 311, 399, "&((PyCodeObject *)0)->co_qualname", L(code_qualname) },
	{ 207, 399, "&((PyCodeObject *)0)->co_firstlineno", L(code_firstlineno) },
	{ 207, 309, "&((PyCodeObject *)0)->co_lnotab", L(code_linetable) },
	{ 310, 399, "&((PyCodeObject *)0)->co_linetable", L(code_linetable) },
	{ 312, 399, "&((PyCodeObject *)0)->co_version", L(code_version) },
	{ 207, 310, "&((PyCodeObject *)0)->co_code", L(code_code) },
	{ 311, 399, "&((PyCodeObject *)0)->co_code_adaptive", L(code_adaptive) },
	{ 207, 207, "&((PyStringObject *)0)->ob_sval", L(str_data) },
	{ 300, 399, "&((PyASCIIObject *)0)->state", L(str_state) },
	{ 300, 399, "sizeof(PyASCIIObject)", L(str_ascii_size) },
	{ 300, 399, "sizeof(PyCompactUnicodeObject)", L(str_compact_size) },
	{ 300, 399, "&((PyBytesObject *)0)->ob_sval", K(PY_BYTES_SVAL) },
	{ 207, 399, "&((PyObject *)0)->ob_type", K(PY_OB_TYPE) },
	{ 207, 399, "&((PyVarObject *)0)->ob_size", K(PY_VAR_OB_SIZE) },
	{ 207, 399, "&((PyTypeObject *)0)->tp_name", K(PY_TYPE_TP_NAME) },
	{ 207, 399, "&((PyTypeObject *)0)->tp_basicsize", K(PY_TYPE_TP_BASICSIZE) },
};

#define NR_FIELDS (sizeof(fields) / sizeof(fields[0]))

START_TEST(table_matches_the_dwarf_of_each_build)
{
	const char *minor = py_test_minors[_i];
	char exe_buf[512], lib[1024], exprs[NR_FIELDS][160];
	const char *exe = py_test_interpreter(minor, exe_buf, sizeof(exe_buf));
	char *argv[2 * NR_FIELDS + 5];
	const struct py_layout *l;
	struct run_result r;
	size_t argc = 0, checked = 0;
	int version;

	if (!exe || !strcmp(minor, "debian") || !py_test_library(exe, lib, sizeof(lib)) ||
	    access("/usr/bin/gdb", X_OK)) {
		fprintf(stderr, "py_dwarf: no pyenv Python %s (or no gdb) here: skipped\n", minor);
		return;
	}
	version = (minor[0] - '0') * 100 + atoi(minor + 2);
	l = py_layout__for_version(version / 100, version % 100);
	ck_assert_ptr_nonnull(l);
	argv[argc++] = "/usr/bin/gdb";
	argv[argc++] = "-batch";
	argv[argc++] = "-nx";
	for (size_t i = 0; i < NR_FIELDS; i++) {
		if (version < fields[i].lo || version > fields[i].hi)
			continue;
		snprintf(exprs[i], sizeof(exprs[i]), "printf \"F%zu %%ld\\n\", (long)%s", i,
			 fields[i].expr);
		argv[argc++] = "-ex";
		argv[argc++] = exprs[i];
	}
	argv[argc++] = lib;
	argv[argc] = NULL;
	run_cmd(argv, 120, 0, &r);
	for (size_t i = 0; i < NR_FIELDS; i++) {
		const struct field *f = &fields[i];
		char key[16], *at;
		int32_t want;
		long got;

		if (version < f->lo || version > f->hi)
			continue;
		snprintf(key, sizeof(key), "F%zu ", i);
		at = strstr(r.out, key);
		ck_assert_msg(at, "%s: gdb could not read %s: %s", lib, f->expr, r.err);
		got = atol(at + strlen(key));
		if (f->field < 0)
			want = f->constant;
		else
			memcpy(&want, (const char *)l + f->field, sizeof(want));
		if (f->at_most)
			ck_assert_msg(want <= got, "%s: %s is %ld, the table reads %d", lib, f->expr,
				      got, want);
		else
			ck_assert_msg(want == got, "%s: %s is %ld, the table says %d", lib, f->expr,
				      got, want);
		checked++;
	}
	ck_assert_uint_ge(checked, 20);
	run_result_free(&r);
}
END_TEST

Suite *py_dwarf_suite(void)
{
	Suite *s = suite_create("py_dwarf");
	TCase *tc = tcase_create("gdb");

	tcase_set_timeout(tc, 150);
	tcase_add_loop_test(tc, table_matches_the_dwarf_of_each_build, 0, PY_TEST_NR_MINORS);
	suite_add_tcase(s, tc);
	return s;
}
