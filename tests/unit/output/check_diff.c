// SPDX-License-Identifier: GPL-2.0
/*
 * Differential profiles from files: the folded and pprof readers
 * (core/input), the comparison (core/model/diff.c) and the CI gate of
 * run__diff (--diff-threshold), on inputs of known difference.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/run/run.h"
#include "core/input/build.h"
#include "core/input/read.h"
#include "core/model/diff.h"
#include "core/output/writer.h"
#include "tests/support/tests.h"

/* The reference base: 100 samples, "hot" 80 of them. */
static const char base_text[] = "app;main;a;hot 80\n"
				"app;main;b 20\n";
/* The next build: hot down to 50 of 100, b up to 30, c new at 20. */
static const char new_text[] = "app;main;a;hot 50\n"
			       "app;main;b 30\n"
			       "app;main;c 20\n";

static void read_folded(const char *text, struct profile *p)
{
	struct errmsg em = { "" };

	ck_assert_msg(!profile__read_folded(text, strlen(text), p, &em), "%s", em.text);
}

static void diff_of(const char *a, const char *b, struct profile *d)
{
	struct profile pa, pb;

	read_folded(a, &pa);
	read_folded(b, &pb);
	ck_assert_int_eq(profile__diff(&pa, &pb, d), 0);
	profile__fini(&pa);
	profile__fini(&pb);
}

static const struct diff_function *find_fn(const struct diff_function *f, size_t nr,
					   const char *name)
{
	for (size_t i = 0; i < nr; i++)
		if (!strcmp(f[i].name, name))
			return &f[i];
	return NULL;
}

START_TEST(folded_lines_become_stacks_leaf_first)
{
	struct profile p;
	const struct profile_stack *s;

	read_folded("cc1;main;parse;-;do_syscall_64;ksys_read 7\n", &p);
	ck_assert_uint_eq(p.nr_stacks, 1);
	s = &p.stacks[0];
	ck_assert_str_eq(s->comm, "cc1");
	ck_assert_uint_eq(s->values[0], 7);
	ck_assert_uint_eq(s->nr_kernel, 2);
	ck_assert_uint_eq(s->nr_user, 2);
	/* Leaf first: kernel leaf, kernel root, user leaf, user root. */
	ck_assert_str_eq(profile__frame(&p, s, 0)->name, "ksys_read");
	ck_assert_int_eq(profile__frame(&p, s, 0)->kind, FRAME_KERNEL);
	ck_assert_str_eq(profile__frame(&p, s, 1)->name, "do_syscall_64");
	ck_assert_str_eq(profile__frame(&p, s, 2)->name, "parse");
	ck_assert_int_eq(profile__frame(&p, s, 2)->kind, FRAME_USER);
	ck_assert_str_eq(profile__frame(&p, s, 3)->name, "main");
	profile__fini(&p);
}
END_TEST

/* FlameGraph's stackcollapse output: _[k] marks, fractional counts, CRLF, junk lines. */
START_TEST(flamegraph_conventions_are_read)
{
	struct profile p;
	const struct profile_stack *s;

	read_folded("# a comment\r\n"
		    "java;start_thread;Foo::bar;sys_write_[k] 3.0\r\n"
		    "\n"
		    "no count here\n",
		    &p);
	ck_assert_uint_eq(p.nr_stacks, 1);
	s = &p.stacks[0];
	ck_assert_uint_eq(s->values[0], 3);
	ck_assert_uint_eq(s->nr_kernel, 1);
	ck_assert_str_eq(profile__frame(&p, s, 0)->name, "sys_write");
	ck_assert_str_eq(profile__frame(&p, s, 1)->name, "Foo::bar");
	profile__fini(&p);
}
END_TEST

START_TEST(text_that_is_not_folded_is_refused)
{
	static const char *const bad[] = { "hello world\n", "a;b c\n", "a;b 12x\n",
					   "a;b 99999999999999999999999\n" };
	struct errmsg em = { "" };
	struct profile p;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_ne(profile__read_folded(bad[i], strlen(bad[i]), &p, &em), 0);
		ck_assert_msg(strstr(em.text, "not folded stacks"), "%s", em.text);
		profile__fini(&p);
	}
}
END_TEST

/* A stack deeper than the reader keeps is cut, not refused, and the rest is read. */
START_TEST(very_deep_stacks_are_cut_to_the_limit)
{
	size_t n = INPUT_MAX_FRAMES * 3;
	char *text = malloc(n * 2 + 64), *p = text;
	struct profile prof;

	p += sprintf(p, "deep");
	for (size_t i = 0; i < n; i++)
		p += sprintf(p, ";f");
	sprintf(p, " 5\nok;main 1\n");
	read_folded(text, &prof);
	ck_assert_uint_eq(prof.nr_stacks, 2);
	ck_assert_uint_eq(prof.stacks[0].nr_user, INPUT_MAX_FRAMES);
	ck_assert_uint_eq(prof.stacks[0].values[0], 5);
	profile__fini(&prof);
	free(text);
}
END_TEST

START_TEST(shares_are_normalised_to_each_total)
{
	struct diff_function *fns;
	const struct diff_function *f;
	struct profile d;
	uint64_t tb, tn;
	size_t nr;

	/* The new profile is 10 times longer: shares, not counts, are compared. */
	diff_of(base_text,
		"app;main;a;hot 500\n"
		"app;main;b 300\n"
		"app;main;c 200\n",
		&d);
	ck_assert(d.differential);
	ck_assert_uint_eq(d.nr_columns, 2);
	profile__diff_totals(&d, &tb, &tn);
	ck_assert_uint_eq(tb, 100);
	ck_assert_uint_eq(tn, 1000);
	ck_assert_int_eq(profile__diff_functions(&d, &fns, &nr), 0);
	/* Sorted by growth: c (+20), b (+10), ..., hot (-30). */
	ck_assert_str_eq(fns[0].name, "c");
	ck_assert_double_eq_tol(fns[0].new - fns[0].base, 20.0, 1e-9);
	f = find_fn(fns, nr, "b");
	ck_assert_ptr_nonnull(f);
	ck_assert_double_eq_tol(f->base, 20.0, 1e-9);
	ck_assert_double_eq_tol(f->new, 30.0, 1e-9);
	ck_assert_str_eq(fns[nr - 1].name, "hot");
	ck_assert_double_eq_tol(fns[nr - 1].new - fns[nr - 1].base, -30.0, 1e-9);
	/* main and a are never the leaf: no self share in either. */
	f = find_fn(fns, nr, "main");
	ck_assert(!f || (f->base == 0 && f->new == 0));
	free(fns);
	profile__fini(&d);
}
END_TEST

/* A stack in one profile only is a stack of the comparison, zero in the other. */
START_TEST(stacks_are_matched_by_comm_and_names)
{
	struct profile d;
	size_t seen = 0;

	diff_of(base_text, new_text, &d);
	ck_assert_uint_eq(d.nr_stacks, 3);
	for (size_t i = 0; i < d.nr_stacks; i++) {
		const struct profile_stack *s = &d.stacks[i];
		const char *leaf = profile__frame(&d, s, 0)->name;

		if (!strcmp(leaf, "hot"))
			seen += s->values[0] == 80 && s->values[1] == 50;
		else if (!strcmp(leaf, "b"))
			seen += s->values[0] == 20 && s->values[1] == 30;
		else if (!strcmp(leaf, "c"))
			seen += s->values[0] == 0 && s->values[1] == 20;
	}
	ck_assert_uint_eq(seen, 3);
	profile__fini(&d);
}
END_TEST

/* The folded writer of a comparison: "stack base new", difffolded.pl's input. */
START_TEST(folded_output_of_a_diff_has_both_columns)
{
	struct writer_opts wo = { 0 };
	struct profile d;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	diff_of(base_text, new_text, &d);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(writer__folded(f, &d, &wo), 0);
	fclose(f);
	ck_assert_msg(strstr(buf, "app;main;a;hot 80 50\n"), "%s", buf);
	ck_assert_msg(strstr(buf, "app;main;c 0 20\n"), "%s", buf);
	free(buf);
	profile__fini(&d);
}
END_TEST

/* What the pprof writer writes, the pprof reader reads back: same stacks, same values. */
START_TEST(pprof_written_is_read_back)
{
	struct writer_opts wo = { 0 };
	struct errmsg em = { "" };
	struct profile p, back;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	read_folded("app;main;parse;-;do_syscall_64;ksys_read 7\n"
		    "app;main;a;hot 80\n",
		    &p);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(writer__pprof(f, &p, &wo), 0);
	fclose(f);
	ck_assert_msg(!profile__read_pprof((unsigned char *)buf, len, &back, &em), "%s", em.text);
	ck_assert_uint_eq(back.nr_stacks, 2);
	for (size_t i = 0; i < back.nr_stacks; i++) {
		const struct profile_stack *s = &back.stacks[i];

		if (s->values[0] == 7) {
			ck_assert_uint_eq(s->nr_kernel, 2);
			ck_assert_str_eq(profile__frame(&back, s, 0)->name, "ksys_read");
			ck_assert_str_eq(profile__frame(&back, s, 3)->name, "main");
		} else {
			ck_assert_uint_eq(s->values[0], 80);
			ck_assert_str_eq(profile__frame(&back, s, 0)->name, "hot");
		}
	}
	free(buf);
	profile__fini(&p);
	profile__fini(&back);
}
END_TEST

START_TEST(garbage_is_not_a_pprof_file)
{
	static const unsigned char not_gzip[] = "hello";
	/* A gzip stream of "hello": not a profile.proto message. */
	static const unsigned char gz_hello[] = { 0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00,
						  0x00, 0x00, 0x03, 0xcb, 0x48, 0xcd, 0xc9,
						  0xc9, 0x07, 0x00, 0x86, 0xa6, 0x10, 0x36,
						  0x05, 0x00, 0x00, 0x00 };
	struct errmsg em = { "" };
	struct profile p;

	ck_assert_int_ne(profile__read_pprof(not_gzip, sizeof(not_gzip), &p, &em), 0);
	ck_assert_msg(strstr(em.text, "not a gzip stream"), "%s", em.text);
	profile__fini(&p);
	ck_assert_int_ne(profile__read_pprof(gz_hello, sizeof(gz_hello), &p, &em), 0);
	ck_assert_msg(strstr(em.text, "not a profile.proto"), "%s", em.text);
	profile__fini(&p);
}
END_TEST

static char dir[64];

static void setup(void)
{
	strcpy(dir, "/tmp/check_diff.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

static const char *write_file(const char *name, const char *text)
{
	static char paths[2][128];
	static int next;
	char *path = paths[next++ % 2];
	FILE *f;

	snprintf(path, sizeof(paths[0]), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
	return path;
}

/* The gate: exit 1 only when a function's self share grew by more than the threshold. */
START_TEST(the_threshold_gates_on_the_largest_growth)
{
	struct run_opts o = { .format = FORMAT_BCC, .output = "/dev/null" };

	o.diff_base = write_file("base.folded", base_text);
	o.diff_new = write_file("new.folded", new_text);
	/* c grew by 20 points. */
	o.diff_threshold = 19.5;
	ck_assert_int_eq(run__diff(&o), 1);
	o.diff_threshold = 20.5;
	ck_assert_int_eq(run__diff(&o), 0);
	/* No threshold: a report, never a failure. */
	o.diff_threshold = -1;
	ck_assert_int_eq(run__diff(&o), 0);
	/* The same profile twice: nothing grew, even at 0. */
	o.diff_new = o.diff_base;
	o.diff_threshold = 0;
	ck_assert_int_eq(run__diff(&o), 0);
}
END_TEST

START_TEST(an_unreadable_input_fails_the_run)
{
	struct run_opts o = { .format = FORMAT_BCC, .output = "/dev/null", .diff_threshold = -1 };
	char missing[128];

	snprintf(missing, sizeof(missing), "%s/missing", dir);
	o.diff_base = write_file("base.folded", base_text);
	o.diff_new = missing;
	ck_assert_int_eq(run__diff(&o), 1);
	o.diff_new = write_file("junk", "this is not a profile\n");
	ck_assert_int_eq(run__diff(&o), 1);
	/* A directory is not a profile file. */
	o.diff_new = dir;
	ck_assert_int_eq(run__diff(&o), 1);
}
END_TEST

Suite *diff_suite(void)
{
	Suite *s = suite_create("diff");
	TCase *tc = tcase_create("diff");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, folded_lines_become_stacks_leaf_first);
	tcase_add_test(tc, flamegraph_conventions_are_read);
	tcase_add_test(tc, text_that_is_not_folded_is_refused);
	tcase_add_test(tc, very_deep_stacks_are_cut_to_the_limit);
	tcase_add_test(tc, shares_are_normalised_to_each_total);
	tcase_add_test(tc, stacks_are_matched_by_comm_and_names);
	tcase_add_test(tc, folded_output_of_a_diff_has_both_columns);
	tcase_add_test(tc, pprof_written_is_read_back);
	tcase_add_test(tc, garbage_is_not_a_pprof_file);
	tcase_add_test(tc, the_threshold_gates_on_the_largest_growth);
	tcase_add_test(tc, an_unreadable_input_fails_the_run);
	suite_add_tcase(s, tc);
	return s;
}
