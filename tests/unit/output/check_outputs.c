// SPDX-License-Identifier: GPL-2.0
/*
 * The outputs people look at, checked by real consumers: pprof decoded by
 * an independent implementation (pprof-format, run with node) must say what
 * the folded report of the same profile says; the flame graph SVG must be
 * well-formed XML, and in headless Chromium render without script errors,
 * size the hottest function right, find it with Search and zoom on click.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/agg/agg.h"
#include "core/lib/utf8.h"
#include "tests/support/fixture.h"
#include "tests/support/render.h"
#include "tests/support/tests.h"

#define PERIOD_NS 10101010ULL	/* 99 Hz */

static struct sym_fixture fx;
static struct agg agg;
static struct symbolizer *sym;
static char dir[] = "/tmp/profile-outputs-XXXXXX";
static char kallsyms[600];

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

static void add(pid_t pid, const char *comm, const uint64_t *k, unsigned int nk,
		const uint64_t *u, unsigned int nu, int kerr, uint64_t weight)
{
	fixture_count(&agg, &fx.as, pid, comm, k, nk, u, nu, kerr, weight);
}

static void setup(void)
{
	uint64_t k1[] = { 0xffffffff81000114ULL, 0xffffffff81000210ULL };
	uint64_t u1[] = { 0, 0, 0 }, u2[] = { 0 };
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	sym_fixture_load(&fx, workload("symfixture"));
	u1[0] = fx.alpha + 4;
	u1[1] = fx.beta + 6;
	u1[2] = fx.main + 10;
	u2[0] = fx.gamma + 2;
	snprintf(kallsyms, sizeof(kallsyms), "%s/kallsyms", dir);
	f = fopen(kallsyms, "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000110 T k_leaf\nffffffff81000200 T k_mid\n",
	      f);
	fclose(f);
	agg__init(&agg);
	add(1234, "app", k1, 2, u1, 3, 0, 30);
	add(1234, "app", NULL, 0, u2, 1, 0, 10);
	add(1235, "worker", NULL, 0, u1 + 1, 2, 0, 5);
	add(1234, "app", NULL, 0, u2, 1, -EEXIST, 1);
	sym = symbolizer__new();
	symbolizer__set_kallsyms(sym, kallsyms);
}

static void teardown(void)
{
	char cmd[128];

	symbolizer__free(sym);
	agg__fini(&agg);
	sym_fixture_free(&fx);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-outputs-XXXXXX");
}

static char *node_decode(const char *file, const char *mode)
{
	static struct run_result r;
	char script[600];

	snprintf(script, sizeof(script), "%s/tests/js/folded.mjs", srcdir());
	run_result_free(&r);
	run_cmd((char *[]){ "/usr/bin/env", "node", script, (char *)file, (char *)mode, NULL }, 30,
		0, &r);
	ck_assert_msg(r.exit_code == 0, "node: %.300s", r.err);
	return r.out;
}

/* The bytes of a report written to path. */
static void write_file(const char *path, const struct render_opts *o)
{
	size_t len;
	char *buf = render(&agg, sym, o, &len);
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	fclose(f);
	free(buf);
}

static void write_pprof(const char *path, const char *comment)
{
	struct render_opts o = { .format = FORMAT_PPROF, .period_ns = PERIOD_NS,
				 .comment = comment };

	write_file(path, &o);
}

START_TEST(pprof_decodes_to_the_folded_report)
{
	struct render_opts ro = { .format = FORMAT_FOLDED };
	char path[700], *folded = render(&agg, sym, &ro, NULL);

	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	write_pprof(path, "test");
	/* Missed stacks are frames of their own in pprof, as in the folded report. */
	ck_assert_str_eq(node_decode(path, NULL), folded);
	free(folded);
}
END_TEST

/* flamegraph.pl reads "stack count" lines with this expression; ours must all match. */
START_TEST(folded_output_parses_as_flamegraph_pl_does)
{
	struct render_opts ro = { .format = FORMAT_FOLDED, .delimited = true, .annotations = true };
	char path[700];
	struct run_result r;

	snprintf(path, sizeof(path), "%s/f.folded", dir);
	write_file(path, &ro);
	run_cmd((char *[]){ "/usr/bin/perl", "-ne",
			    "chomp; my ($stack, $samples) = (/^(.*)\\s+?(\\d+(?:\\.\\d*)?)$/); "
			    "die qq(unparsed line $.: $_\\n) unless defined $samples; "
			    "die qq(empty frame in line $.\\n) if $stack =~ /(^|;)(;|$)/; "
			    "$t += $samples; END { print qq($t\\n) }",
			    path, NULL },
		10, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
	ck_assert_str_eq(r.out, "46\n");
	run_result_free(&r);
}
END_TEST

START_TEST(pprof_types_period_mappings_labels)
{
	char path[700], want[256];
	const char *out;

	snprintf(path, sizeof(path), "%s/p.pb.gz", dir);
	write_pprof(path, NULL);
	out = node_decode(path, "--summary");
	ck_assert_ptr_nonnull(strstr(out, "\"sampleTypes\":[\"samples/count\",\"cpu/nanoseconds\"]"));
	ck_assert_ptr_nonnull(strstr(out, "\"periodType\":\"cpu/nanoseconds\""));
	snprintf(want, sizeof(want), "\"samples\":46,\"cpuNanoseconds\":%llu",
		 46 * PERIOD_NS);
	ck_assert_msg(strstr(out, want), "want %s in %s", want, out);
	ck_assert_ptr_nonnull(strstr(out, "\"[kernel.kallsyms]\""));
	ck_assert_ptr_nonnull(strstr(out, "/symfixture\""));
	ck_assert_ptr_null(strstr(out, "\"buildIds\":0"));	/* the fixture has one */
	ck_assert_ptr_nonnull(strstr(out, "\"labels\":[\"comm\",\"pid\"]"));
}
END_TEST

static void write_svg(const char *path, const char *title)
{
	struct render_opts o = { .format = FORMAT_SVG, .title = title };

	write_file(path, &o);
}

START_TEST(svg_is_well_formed_and_marks_kernel_frames)
{
	char path[700], cmd[1024];
	struct run_result r;

	snprintf(path, sizeof(path), "%s/f.svg", dir);
	write_svg(path, "profile of <test> & more");
	snprintf(cmd, sizeof(cmd),
		 "import sys, xml.etree.ElementTree as E; t = E.parse('%s'); "
		 "n = '{http://www.w3.org/2000/svg}'; "
		 "print(len(t.getroot().findall('.//' + n + 'g')), "
		 "t.getroot().find(n + 'text').text)",
		 path);
	run_cmd((char *[]){ "/usr/bin/env", "python3", "-c", cmd, NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "not well-formed XML: %.300s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "profile of <test> & more"));
	run_result_free(&r);
	run_cmd((char *[]){ "/bin/cat", path, NULL }, 10, 0, &r);
	/* Kernel frames lose their annotation on screen and get the kernel palette. */
	ck_assert_ptr_nonnull(strstr(r.out, "<title>k_leaf (30 samples, 65.22%)</title>"));
	ck_assert_ptr_null(strstr(r.out, "_[k]"));
	ck_assert_ptr_nonnull(strstr(r.out, "<title>- (30 samples"));
	ck_assert_ptr_nonnull(strstr(r.out, "fill=\"rgb(160,160,160)\""));
	ck_assert_ptr_nonnull(strstr(r.out, "<title>all (46 samples, 100.00%)</title>"));
	/* Self-contained: nothing fetched from elsewhere. */
	ck_assert_ptr_null(strstr(r.out, "href="));
	ck_assert_ptr_null(strstr(r.out, "src="));
	ck_assert_ptr_null(strstr(r.out, "@import"));
	run_result_free(&r);
}
END_TEST

static bool have_chromium(void)
{
	const char *c = getenv("CHROMIUM");

	return access(c ? c : "/usr/bin/chromium", X_OK) == 0;
}

/* key=value from svg_check.mjs */
static double value_of(const char *out, const char *key)
{
	const char *p = strstr(out, key);

	ck_assert_msg(p, "no %s in %s", key, out);
	p += strlen(key);
	while (*p && (*p < '0' || *p > '9'))
		p++;
	return atof(p);
}

/* What the SVG and pprof writers keep as is; everything else prints as \\xNN. */
START_TEST(utf8_sequences_as_xml_and_proto3_want_them)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ "a", 1 },		{ "\xc3\xa9", 2 },	     { "\xe2\x82\xac", 3 },
		{ "\xf0\x9f\x94\xa5", 4 }, { "\xc0\xaf", 0 },   /* overlong '/' */
		{ "\xe0\x80\xaf", 0 },	/* overlong */  { "\xed\xa0\x80", 0 }, /* surrogate */
		{ "\xf4\x90\x80\x80", 0 }, /* past U+10FFFF */ { "\x80", 0 },
		{ "\xff", 0 },		{ "\xe2\x82", 0 },	     /* cut short */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(utf8__seq_len((const unsigned char *)cases[i].s,
					    strlen(cases[i].s)) == cases[i].len,
			      "case %zu", i);
	/* Cuts back to the start of a sequence, never inside one. */
	ck_assert_uint_eq(utf8__boundary("a\xc3\xa9" "b", 2), 1);
	ck_assert_uint_eq(utf8__boundary("a\xc3\xa9" "b", 3), 3);
	ck_assert_uint_eq(utf8__boundary("a\xff" "b", 2), 2);
}
END_TEST

/*
 * Controls that text from others shows escaped: C0, DEL, C1, and the
 * format characters that reorder or split a line (issue 46 row 6); their
 * neighbours are text.
 */
START_TEST(utf8_controls_are_c0_c1_bidi_and_line_separators)
{
	static const struct {
		const char *s;
		size_t len;
	} cases[] = {
		{ "\x01", 1 }, { "\x7f", 1 }, { "a", 0 }, { "\xc2\x85", 2 }, { "\xc2\xa0", 0 },
		{ "\xe2\x80\x8d", 0 },	/* U+200D ZWJ: text (emoji sequences) */
		{ "\xe2\x80\x8e", 3 }, { "\xe2\x80\x8f", 3 },	/* LRM, RLM */
		{ "\xe2\x80\xa7", 0 },
		{ "\xe2\x80\xa8", 3 }, { "\xe2\x80\xa9", 3 },	/* LS, PS */
		{ "\xe2\x80\xaa", 3 }, { "\xe2\x80\xab", 3 }, { "\xe2\x80\xac", 3 },
		{ "\xe2\x80\xad", 3 }, { "\xe2\x80\xae", 3 },	/* LRE RLE PDF LRO RLO */
		{ "\xe2\x80\xaf", 0 },
		{ "\xe2\x81\xa5", 0 },
		{ "\xe2\x81\xa6", 3 }, { "\xe2\x81\xa7", 3 }, { "\xe2\x81\xa8", 3 },
		{ "\xe2\x81\xa9", 3 },	/* LRI RLI FSI PDI */
		{ "\xe2\x81\xaa", 0 },
		{ "\xe2\x80", 0 },	/* cut short */
		{ "\xe2\x80\x2e", 0 },	/* not a continuation byte */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(utf8__control_len((const unsigned char *)cases[i].s,
						strlen(cases[i].s)) == cases[i].len,
			      "case %zu", i);
}
END_TEST

/*
 * A title elided to the width is cut between characters, and bytes that are
 * not UTF-8 (a hostile command line) are escaped: the file stays readable XML.
 */
START_TEST(svg_title_is_elided_between_characters_and_stays_utf8)
{
	char path[700], cmd[1024], title[512] = "";
	struct run_result r;

	for (int i = 0; i < 150; i++)
		strcat(title, "\xc3\xa9");	/* e acute, two bytes */
	strcat(title, "\xff\xc3");
	snprintf(path, sizeof(path), "%s/t.svg", dir);
	write_svg(path, title + 1);	/* starts inside a sequence */
	snprintf(cmd, sizeof(cmd),
		 "import xml.etree.ElementTree as E; t = E.parse('%s'); "
		 "n = '{http://www.w3.org/2000/svg}'; "
		 "x = [e for e in t.getroot().iter(n + 'text') if e.get('id') == 'title'][0].text; "
		 "print(len(x), x.endswith('...'), x.startswith('\\\\xa9'), x.count('\\u00e9'))",
		 path);
	run_cmd((char *[]){ "/usr/bin/env", "python3", "-c", cmd, NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "not well-formed XML: %.300s", r.err);
	/* "\xa9" (4), 51 whole characters (103 bytes of the 107 allowed, less the stray one), "..." */
	ck_assert_msg(strstr(r.out, "True True"), "%s", r.out);
	run_result_free(&r);
}
END_TEST

START_TEST(svg_renders_searches_and_zooms_in_chromium)
{
	char script[600], svg[700], png[700];
	struct run_result r;

	if (!have_chromium()) {
		fprintf(stderr, "tests: chromium not installed: skipping the browser test\n");
		return;
	}
	snprintf(svg, sizeof(svg), "%s/f.svg", dir);
	write_svg(svg, "browser test");
	snprintf(png, sizeof(png), "%s/flamegraph.png", getenv("PROFILE_ARTIFACTS") ?
		 getenv("PROFILE_ARTIFACTS") : dir);
	snprintf(script, sizeof(script), "%s/tests/js/svg_check.mjs", srcdir());
	run_cmd((char *[]){ "/usr/bin/env", "node", script, svg, png, "fixture_alpha", NULL }, 60, 0,
		&r);
	ck_assert_msg(r.exit_code == 0, "svg_check: %.300s", r.err);
	ck_assert_msg(strstr(r.out, "errors=0\n"), "%s", r.out);
	/* fixture_alpha is in 30 of the 46 samples. */
	ck_assert_msg(value_of(r.out, "share=") > 65.0 && value_of(r.out, "share=") < 65.5, "%s",
		      r.out);
	ck_assert_msg(value_of(r.out, "matched=") > 65.0 && value_of(r.out, "matched=") < 65.5,
		      "%s", r.out);
	ck_assert_msg(value_of(r.out, "zoomed=") > 1170, "%s", r.out);
	ck_assert_ptr_nonnull(strstr(r.out, "label=fixture_alpha"));
	ck_assert_int_eq(access(png, R_OK), 0);
	run_result_free(&r);
}
END_TEST

START_TEST(real_run_writes_pprof_and_svg_files)
{
	char pb[700], svg[700], want[128];
	struct run_result r;
	const char *out;
	double samples;

	snprintf(pb, sizeof(pb), "%s/run.pb.gz", dir);
	run_cmd((char *[]){ (char *)profile_bin(), "-F", "99", "--format", "pprof", "--output", pb,
			    "--", (char *)workload("ratio31"), "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%.300s", r.err);
	/* The command's own stdout stays on stdout; the report went to the file. */
	ck_assert_ptr_nonnull(strstr(r.out, "hot_tid="));
	run_result_free(&r);
	out = node_decode(pb, "--summary");
	samples = value_of(out, "\"samples\":");
	ck_assert_msg(samples > 50, "%s", out);
	snprintf(want, sizeof(want), "\"cpuNanoseconds\":%llu", (unsigned long long)samples * PERIOD_NS);
	ck_assert_msg(strstr(out, want), "want %s in %s", want, out);
	/* From its entry: a complete unwind has clone3 below start_thread, and a
	 * sample taken before the process's unwind tables were loaded does not. */
	out = node_decode(pb, NULL);
	ck_assert_msg(folded_count_from_entry(out, "ratio31;start_thread;hot_thread;hot_loop ") * 2 >
			  (uint64_t)samples,
		      "%s", out);

	snprintf(svg, sizeof(svg), "%s/run.svg", dir);
	run_cmd((char *[]){ (char *)profile_bin(), "-F", "99", "--format", "svg", "--output", svg,
			    "--", (char *)workload("ratio31"), "1", NULL },
		30, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	run_result_free(&r);
	run_cmd((char *[]){ "/bin/cat", svg, NULL }, 10, 0, &r);
	ck_assert_ptr_nonnull(strstr(r.out, "<title>hot_loop ("));
	ck_assert_ptr_nonnull(strstr(r.out, "profile of command "));
	ck_assert_ptr_nonnull(strstr(r.out, " Hz, "));
	run_result_free(&r);
}
END_TEST

Suite *outputs_suite(void)
{
	Suite *s = suite_create("outputs");
	TCase *tc = tcase_create("consumers");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, pprof_decodes_to_the_folded_report);
	tcase_add_test(tc, pprof_types_period_mappings_labels);
	tcase_add_test(tc, folded_output_parses_as_flamegraph_pl_does);
	tcase_add_test(tc, svg_is_well_formed_and_marks_kernel_frames);
	tcase_add_test(tc, svg_renders_searches_and_zooms_in_chromium);
	tcase_add_test(tc, utf8_sequences_as_xml_and_proto3_want_them);
	tcase_add_test(tc, utf8_controls_are_c0_c1_bidi_and_line_separators);
	tcase_add_test(tc, svg_title_is_elided_between_characters_and_stays_utf8);
	suite_add_tcase(s, tc);

	TCase *tr = tcase_create("real-run");

	tcase_set_tags(tr, TAG_ROOT);
	tcase_set_timeout(tr, 90);
	tcase_add_checked_fixture(tr, setup, teardown);
	tcase_add_test(tr, real_run_writes_pprof_and_svg_files);
	suite_add_tcase(s, tr);
	return s;
}
