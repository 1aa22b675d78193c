// SPDX-License-Identifier: GPL-2.0
/*
 * profile --diff on two real runs: build/workloads/regress and its next
 * build, regress_slow, which spends about half its time in a new function,
 * validate_slowly. Each is profiled by one backend and compared by the
 * other's output, in folded and pprof form: the comparison must name the
 * regression, the CI gate must trip on it, the flame graph must paint it red.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static char dir[64];
static char base_path[128], new_path[128];
static struct run_result r;

static void setup(void)
{
	char link[128];

	strcpy(dir, "/tmp/check_diff_runs.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	/* Stacks are matched by comm: the next build runs under the same name. */
	snprintf(link, sizeof(link), "%s/regress", dir);
	ck_assert_int_eq(symlink(workload("regress_slow"), link), 0);
	memset(&r, 0, sizeof(r));
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* Profile one build with backend into dir/name in format. */
static void profile_build(const char *program, const char *backend, const char *format,
			  const char *name, char *path, size_t len)
{
	struct run_result pr;

	snprintf(path, len, "%s/%s", dir, name);
	run_ok(&pr,
	       (char *[]){ (char *)profile_bin(), "-F", "499", "--backend", (char *)backend,
			   "--format", (char *)format, "--output", path, "--", (char *)program,
			   "2", NULL },
	       30);
	run_result_free(&pr);
}

static void profile_both(int i, const char *format)
{
	char program[128];

	snprintf(program, sizeof(program), "%s/regress", dir);
	profile_build(workload("regress"), test_backends[i], format, "base", base_path,
		      sizeof(base_path));
	profile_build(program, test_backends[!i], format, "new", new_path, sizeof(new_path));
}

/* The change column of the report's row for function fn (in the functions table). */
static double function_change(const char *report, const char *fn)
{
	const char *table = strstr(report, "Functions by change"), *line;
	char pattern[128];

	ck_assert_ptr_nonnull(table);
	snprintf(pattern, sizeof(pattern), "  %s\n", fn);
	line = strstr(table, pattern);
	ck_assert_msg(line, "no row for %s in:\n%s", fn, report);
	while (line > table && line[-1] != '\n')
		line--;
	return atof(line);
}

static void check_report_names_the_regression(void)
{
	const char *table;
	double grew;

	run_cmd((char *[]){ (char *)profile_bin(), "--diff", base_path, new_path, NULL }, 20, 0,
		&r);
	ck_assert_msg(r.exit_code == 0, "%s", r.err);
	/* The first row of the functions table is the largest growth. */
	table = strstr(r.out, "Functions by change");
	ck_assert_ptr_nonnull(table);
	table = strchr(strchr(table, '\n') + 1, '\n') + 1;
	ck_assert_msg(memmem(table, strcspn(table, "\n"), "  validate_slowly", 17),
		      "validate_slowly is not first:\n%s", r.out);
	grew = function_change(r.out, "validate_slowly");
	/* About half the new build's time; the rest shrank in proportion. */
	ck_assert_msg(grew > 30 && grew < 70, "validate_slowly grew %.2f points:\n%s", grew, r.out);
	ck_assert_msg(function_change(r.out, "checksum") < -10, "%s", r.out);
	ck_assert_msg(function_change(r.out, "format_record") < -3, "%s", r.out);
	run_result_free(&r);
}

static void check_gate(void)
{
	run_cmd((char *[]){ (char *)profile_bin(), "--diff", "--diff-threshold", "20",
			    "--output", "/dev/null", base_path, new_path, NULL },
		20, 0, &r);
	ck_assert_msg(r.exit_code == 1, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "validate_slowly: self share grew by"), "%s", r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s",
		      r.err);
	run_result_free(&r);
	/* Comparing the new build with itself: nothing grew. */
	run_cmd((char *[]){ (char *)profile_bin(), "--diff", "--diff-threshold", "0",
			    "--output", "/dev/null", new_path, new_path, NULL },
		20, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	run_result_free(&r);
}

START_TEST(folded_runs_name_the_regression)
{
	profile_both(_i, "folded");
	check_report_names_the_regression();
	check_gate();
}
END_TEST

START_TEST(pprof_runs_name_the_regression)
{
	profile_both(_i, "pprof");
	check_report_names_the_regression();
	check_gate();
}
END_TEST

/*
 * The fill of the widest frame named fn in an SVG: a function may also
 * appear in a few samples' odd stacks (under an interrupt, say) whose
 * change is noise.
 */
static void frame_fill(const char *svg, const char *fn, char *fill, size_t len)
{
	char title[128];
	const char *p, *f, *w;
	double widest = -1;

	snprintf(title, sizeof(title), "<title>%s (", fn);
	for (p = strstr(svg, title); p; p = strstr(p + 1, title)) {
		w = strstr(p, "width=\"");
		f = strstr(p, "fill=\"");
		ck_assert_ptr_nonnull(w);
		ck_assert_ptr_nonnull(f);
		if (atof(w + 7) <= widest)
			continue;
		widest = atof(w + 7);
		f += 6;
		snprintf(fill, len, "%.*s", (int)strcspn(f, "\""), f);
	}
	ck_assert_msg(widest >= 0, "no frame %s", fn);
}

START_TEST(the_differential_flame_graph_is_red_where_it_grew)
{
	char out[160], fill[64], *svg;
	size_t n;
	FILE *f;

	profile_both(0, "folded");
	snprintf(out, sizeof(out), "%s/diff.svg", dir);
	run_ok(&r,
	       (char *[]){ (char *)profile_bin(), "--diff", "--format", "svg", "--output", out,
			   base_path, new_path, NULL },
	       20);
	f = fopen(out, "r");
	ck_assert_ptr_nonnull(f);
	svg = calloc(1, 8 << 20);
	n = fread(svg, 1, (8 << 20) - 1, f);
	fclose(f);
	ck_assert_uint_gt(n, 0);
	frame_fill(svg, "validate_slowly", fill, sizeof(fill));
	ck_assert_msg(!strncmp(fill, "rgb(255,", 8), "validate_slowly: %s", fill);
	frame_fill(svg, "checksum", fill, sizeof(fill));
	ck_assert_msg(strstr(fill, ",255)") && strncmp(fill, "rgb(255,", 8), "checksum: %s", fill);
	free(svg);
}
END_TEST

START_TEST(diff_usage_errors_exit_2)
{
	static const char *const cases[][4] = {
		{ "--diff", "only-one", NULL, "expected two files" },
		{ "--diff", "-p", "1", "not allowed with argument -p" },
		{ "--diff-threshold", "5", NULL, "only with --diff" },
		{ "--diff", "--diff-threshold", "nan", "must be a number of points" },
		{ "--diff", "--wall", NULL, "not allowed with argument" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		run_cmd((char *[]){ (char *)profile_bin(), (char *)cases[i][0], (char *)cases[i][1],
				    (char *)cases[i][2], "a", "b", NULL },
			10, 0, &r);
		ck_assert_msg(r.exit_code == 2, "case %zu: exit %d %s", i, r.exit_code, r.err);
		ck_assert_msg(strstr(r.err, cases[i][3]), "case %zu: %s", i, r.err);
		run_result_free(&r);
	}
}
END_TEST

Suite *diff_runs_suite(void)
{
	Suite *s = suite_create("diff_runs");
	TCase *tc = tcase_create("diff_runs");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, folded_runs_name_the_regression, 0, 2);
	tcase_add_loop_test(tc, pprof_runs_name_the_regression, 0, 2);
	tcase_add_test(tc, the_differential_flame_graph_is_red_where_it_grew);
	tcase_add_test(tc, diff_usage_errors_exit_2);
	suite_add_tcase(s, tc);
	return s;
}
