// SPDX-License-Identifier: GPL-2.0
/*
 * Aggregation, resolution and both text formats, exact strings: user frames
 * resolve through a real process's maps (the symfixture), kernel frames
 * through a kallsyms file written by the test.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/agg/agg.h"
#include "core/model/resolve.h"
#include "core/output/writer.h"
#include "core/sym/symbolize.h"
#include "tests/support/fixture.h"
#include "tests/support/measure.h"
#include "tests/support/render.h"
#include "tests/support/tests.h"

#define K_LEAF 0xffffffff81000110ULL
#define K_MID 0xffffffff81000200ULL

static struct sym_fixture fx;
static struct agg agg;
static struct symbolizer *sym;
static char kallsyms[] = "/tmp/profile-report-ks-XXXXXX";

static void setup(void)
{
	FILE *f;

	sym_fixture_load(&fx, workload("symfixture"));
	agg__init(&agg);
	f = fdopen(mkstemp(kallsyms), "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000110 T k_leaf\nffffffff81000200 T k_mid\n",
	      f);
	fclose(f);
	sym = symbolizer__new();
	symbolizer__set_kallsyms(sym, kallsyms);
}

static void teardown(void)
{
	unlink(kallsyms);
	strcpy(kallsyms, "/tmp/profile-report-ks-XXXXXX");
	symbolizer__free(sym);
	agg__fini(&agg);
	sym_fixture_free(&fx);
}

static void add(pid_t pid, const char *comm, const uint64_t *k, unsigned int nk,
		const uint64_t *u, unsigned int nu, int kerr, uint64_t weight)
{
	fixture_count(&agg, &fx.as, pid, comm, k, nk, u, nu, kerr, weight);
}

/* Two raw stacks that print the same, one user-only, one with a missed kernel stack. */
static void add_standard_set(void)
{
	uint64_t k1[] = { K_LEAF + 4, K_MID + 0x10 }, k2[] = { K_LEAF + 8, K_MID + 0x10 };
	uint64_t u1[] = { fx.alpha + 4, fx.beta + 6, fx.main + 10 };
	uint64_t u2[] = { fx.gamma + 2 };

	add(1234, "app", k1, 2, u1, 3, 0, 3);
	add(1234, "app", k2, 2, u1, 3, 0, 2);
	add(1234, "app", NULL, 0, u2, 1, 0, 1);
	add(1234, "app", NULL, 0, u1, 1, -EEXIST, 1);
}

struct report_stats {
	uint64_t missing_stacks;
	bool stack_map_collision;
};

/* The report (kept until the next call) and what the profile says of missed stacks. */
static char *render_report(struct render_opts *o, struct report_stats *st)
{
	static char *last;
	struct profile p;
	bool full;

	free(last);
	last = render(&agg, sym, o, NULL);
	render_profile(&agg, sym, o, &p);
	st->missing_stacks = profile__missed_stacks(&p, &st->stack_map_collision, &full);
	profile__fini(&p);
	return last;
}

/* prof's folded text is expected; prof is freed. */
static void assert_folded_is(struct profile *prof, const char *expected)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(writer__folded(f, prof, &(struct writer_opts){ 0 }), 0);
	fclose(f);
	ck_assert_str_eq(buf, expected);
	free(buf);
	profile__fini(prof);
}

/* Resolving frames while sampling goes on changes nothing in the report. */
START_TEST(frames_resolved_during_the_run_report_the_same)
{
	struct render_opts o = { .format = FORMAT_FOLDED };
	uint64_t k1[] = { K_LEAF + 4, K_MID + 0x10 }, u1[] = { fx.alpha + 4, fx.beta + 6 };
	uint64_t nowhere[] = { 0x10 };	/* no mapping (yet): resolved at the end */
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true };
	struct resolve_meta meta = { 0 };
	struct resolver *r = resolver__new(sym, &spec);
	struct report_stats st;
	struct profile prof;
	char expected[8192];

	add_standard_set();
	add(1234, "app", NULL, 0, nowhere, 1, 0, 1);
	add(1234, "app", k1, 2, u1, 2, 0, 1);
	strcpy(expected, render_report(&o, &st));

	agg__fini(&agg);
	agg__init(&agg);
	add(1234, "app", k1, 2, u1, 2, 0, 1);
	add(1234, "app", NULL, 0, nowhere, 1, 0, 1);
	resolver__prepare(r, &agg, 1000);
	ck_assert_uint_eq(agg.nr_seen, agg.nr);
	add_standard_set();
	resolver__prepare(r, &agg, 1000);
	ck_assert_int_eq(resolver__build(r, &agg, &meta, &prof), 0);
	assert_folded_is(&prof, expected);
	resolver__free(r);
}
END_TEST

/*
 * What -v counts for the stacks includes their frames: a stack of known
 * frames (another pid) adds its entry alone, one with a new frame adds the
 * frame too. A busy host's compilers keep showing new code addresses, and
 * uncounted they read as growth of everything else.
 */
START_TEST(bytes_held_for_stacks_count_their_frames)
{
	uint64_t k1[] = { K_LEAF + 4, K_MID + 0x10 }, u1[] = { fx.alpha + 4, fx.beta + 6 };
	uint64_t u2[] = { fx.gamma + 2, fx.beta + 6 };
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true };
	struct resolver *r = resolver__new(sym, &spec);
	size_t one, same_frames, new_frame;

	add(1234, "app", k1, 2, u1, 2, 0, 1);
	resolver__prepare(r, &agg, 1000);
	one = resolver__stack_bytes(r);
	ck_assert_uint_ge(one, 4 * sizeof(struct profile_frame));
	add(1235, "app", k1, 2, u1, 2, 0, 1);
	resolver__prepare(r, &agg, 1000);
	same_frames = resolver__stack_bytes(r);
	ck_assert_uint_eq(same_frames - one, sizeof(struct profile_stack));
	add(1236, "app", k1, 2, u2, 2, 0, 1);
	resolver__prepare(r, &agg, 1000);
	new_frame = resolver__stack_bytes(r);
	ck_assert_uint_ge(new_frame - same_frames,
			  sizeof(struct profile_stack) + sizeof(struct profile_frame));
	resolver__free(r);
}
END_TEST

/*
 * A stack left raw during the run (an address no mapping holds yet) whose
 * process ended long ago is finished before the image's mappings are let
 * go, and prints as it would have at the end.
 */
START_TEST(stacks_of_a_settled_image_are_finished_before_it_is_released)
{
	struct render_opts o = { .format = FORMAT_FOLDED };
	uint64_t u1[] = { fx.alpha + 4, fx.beta + 6 }, nowhere[] = { 0x10, fx.beta + 6 };
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true };
	struct resolve_meta meta = { 0 };
	struct resolver *r = resolver__new(sym, &spec);
	size_t nr_maps = fx.as.nr_maps;
	struct report_stats st;
	struct profile prof;
	char expected[8192];

	add(1234, "app", NULL, 0, nowhere, 2, 0, 3);
	add(1234, "app", NULL, 0, u1, 2, 0, 1);
	strcpy(expected, render_report(&o, &st));
	ck_assert_ptr_nonnull(strstr(expected, "[unknown]"));

	agg__fini(&agg);
	agg__init(&agg);
	add(1234, "app", NULL, 0, nowhere, 2, 0, 3);
	add(1234, "app", NULL, 0, u1, 2, 0, 1);
	resolver__prepare(r, &agg, 1000);
	ck_assert(resolver__caught_up(r, &agg));
	ck_assert_uint_eq(agg.nr_released, 1);	/* the address without a mapping waits */
	ck_assert(resolver__finish_settled(r, &agg));
	ck_assert_uint_eq(agg.nr_released, 1);	/* still running: it still waits */

	fx.as.settled = true;
	ck_assert(resolver__finish_settled(r, &agg));
	ck_assert_uint_eq(agg.nr_released, 2);
	/* What the tracker's release does: the report must not need the mappings any more. */
	fx.as.nr_maps = 0;
	ck_assert_int_eq(resolver__build(r, &agg, &meta, &prof), 0);
	fx.as.nr_maps = nr_maps;
	fx.as.settled = false;
	assert_folded_is(&prof, expected);
	resolver__free(r);
}
END_TEST

START_TEST(identical_samples_count_once)
{
	uint64_t u[] = { fx.alpha + 1 };

	add(1, "a", NULL, 0, u, 1, 0, 1);
	add(1, "a", NULL, 0, u, 1, 0, 4);
	add(1, "b", NULL, 0, u, 1, 0, 1);	/* another comm: another stack */
	add(2, "a", NULL, 0, u, 1, 0, 1);	/* another process: another stack */
	ck_assert_uint_eq(agg__size(&agg), 3);
	ck_assert_uint_eq(agg__total(&agg, WEIGHT_SAMPLES), 7);
}
END_TEST

START_TEST(folded_sorted_ascending_merged_by_text)
{
	struct render_opts o = { .format = FORMAT_FOLDED };
	struct report_stats st;

	add_standard_set();
	ck_assert_str_eq(render_report(&o, &st),
			 "app;fixture_alpha;[Missed Kernel Stack] 1\n"
			 "app;fixture_gamma_static 1\n"
			 "app;main;fixture_beta;fixture_alpha;k_mid;k_leaf 5\n");
	ck_assert_uint_eq(st.missing_stacks, 1);
	ck_assert(st.stack_map_collision);
}
END_TEST

START_TEST(folded_delimited_annotated)
{
	struct render_opts o = { .format = FORMAT_FOLDED, .delimited = true, .annotations = true };
	struct report_stats st;

	add_standard_set();
	ck_assert_str_eq(render_report(&o, &st),
			 "app;fixture_alpha;[Missed Kernel Stack] 1\n"
			 "app;fixture_gamma_static 1\n"
			 "app;main;fixture_beta;fixture_alpha;-;k_mid_[k];k_leaf_[k] 5\n");
}
END_TEST

START_TEST(multiline_as_bcc_prints_it)
{
	struct render_opts o = { .format = FORMAT_BCC, .delimited = true };
	struct report_stats st;

	add_standard_set();
	ck_assert_str_eq(render_report(&o, &st),
			 "    [Missed Kernel Stack]\n"
			 "    fixture_alpha\n"
			 "    -                app (1234)\n"
			 "        1\n"
			 "\n"
			 "    fixture_gamma_static\n"
			 "    -                app (1234)\n"
			 "        1\n"
			 "\n"
			 "    k_leaf\n"
			 "    k_mid\n"
			 "    --\n"
			 "    fixture_alpha\n"
			 "    fixture_beta\n"
			 "    main\n"
			 "    -                app (1234)\n"
			 "        5\n"
			 "\n");
}
END_TEST

START_TEST(user_only_and_kernel_only_views)
{
	struct render_opts u = { .format = FORMAT_FOLDED, .user_only = true };
	struct render_opts k = { .format = FORMAT_FOLDED, .kernel_only = true };
	struct report_stats st;

	add_standard_set();
	ck_assert_str_eq(render_report(&u, &st), "app;fixture_alpha 1\n"
					  "app;fixture_gamma_static 1\n"
					  "app;main;fixture_beta;fixture_alpha 5\n");
	ck_assert_uint_eq(st.missing_stacks, 0);
	ck_assert_str_eq(render_report(&k, &st), "app 1\n"
					  "app;[Missed Kernel Stack] 1\n"
					  "app;k_mid;k_leaf 5\n");
	ck_assert_uint_eq(st.missing_stacks, 1);
}
END_TEST

START_TEST(addresses_keep_stacks_apart)
{
	struct render_opts o = { .format = FORMAT_FOLDED, .addresses = true, .kernel_only = true };
	struct report_stats st;
	char want[256];

	add_standard_set();
	render_report(&o, &st);
	/* k1 and k2 differ in the leaf address: two lines now. */
	snprintf(want, sizeof(want), "app;%#llx k_mid+0x10 [kernel];%#llx k_leaf+0x4 [kernel] 3\n",
		 K_MID + 0x10, K_LEAF + 4);
	ck_assert_ptr_nonnull(strstr(render_report(&o, &st), want));
	snprintf(want, sizeof(want), "app;%#llx k_mid+0x10 [kernel];%#llx k_leaf+0x8 [kernel] 2\n",
		 K_MID + 0x10, K_LEAF + 8);
	ck_assert_ptr_nonnull(strstr(render_report(&o, &st), want));
}
END_TEST

START_TEST(return_addresses_resolve_at_ip_minus_one)
{
	/* A caller frame pointing just past the end of fixture_beta's entry byte... */
	uint64_t u[] = { fx.alpha + 1, fx.gamma + 1 };
	struct render_opts o = { .format = FORMAT_FOLDED };
	struct report_stats st;
	char want[128];

	add(7, "x", NULL, 0, u, 2, 0, 1);
	snprintf(want, sizeof(want), "x;fixture_gamma_static;fixture_alpha 1\n");
	ck_assert_str_eq(render_report(&o, &st), want);

	/* ...and at a function's first byte, a return address belongs to the one before. */
	agg__fini(&agg);
	agg__init(&agg);
	uint64_t v[] = { fx.alpha + 1, fx.alpha };

	add(7, "x", NULL, 0, v, 2, 0, 1);
	ck_assert_ptr_null(strstr(render_report(&o, &st), "x;fixture_alpha;fixture_alpha"));
}
END_TEST

START_TEST(unknown_frames_and_warnings)
{
	uint64_t u[] = { 0x10 };
	struct render_opts o = { .format = FORMAT_FOLDED };
	struct report_stats st;
	char *warn;

	add(9, "y", NULL, 0, u, 1, 0, 2);
	ck_assert_str_eq(render_report(&o, &st), "y;[unknown] 2\n");
	add(9, "y", NULL, 0, u, 1, -EEXIST, 1);
	add(9, "y", NULL, 0, NULL, 0, -ENOMEM, 1);
	warn = render_warnings(&agg, sym, &o);
	ck_assert_str_eq(warn, "WARNING: 2 stack traces could not be displayed. Consider increasing "
			       "--stack-storage-size.\n");
	free(warn);
}
END_TEST

/* A stack of pid with kernel frames k and its user part lost with user_err (as the bpf backend's). */
static void add_user_lost(pid_t pid, const uint64_t *k, unsigned int nk, int user_err,
			  uint64_t weight)
{
	struct sample s = { .pid = pid, .tid = pid, .kernel_ips = k, .nr_kernel = nk,
			    .user_err = user_err, .weight = weight };

	snprintf(s.comm, sizeof(s.comm), "cc1plus");
	ck_assert_int_eq(agg__add(&agg, &s, NULL, 0), 0);
}

static unsigned int markers(const char *text)
{
	unsigned int n = 0;

	for (const char *p = text; (p = strstr(p, "[Missed User Stack]")); p++)
		n++;
	return n;
}

/*
 * Raw keys that differ only in how the user stack was lost (a collision,
 * a full map) print as one stack: the warning counts it once, as bcc
 * counts one per stack it prints with a marker. Folded lines carry no pid,
 * so another process's stack merges there too; pprof keeps every stack.
 */
START_TEST(a_stack_printed_once_is_warned_once)
{
	struct render_opts b = { .format = FORMAT_BCC, .addresses = true };
	struct render_opts f = { .format = FORMAT_FOLDED, .addresses = true };
	struct render_opts svg = { .format = FORMAT_SVG, .addresses = true };
	struct render_opts pprof = { .format = FORMAT_PPROF, .addresses = true };
	uint64_t k[] = { K_LEAF + 4, K_MID + 0x10 };
	char *text, *warn;

	add_user_lost(1234, k, 2, -EEXIST, 3);
	add_user_lost(1234, k, 2, -ENOMEM, 2);
	add_user_lost(1235, k, 2, -EEXIST, 1);
	ck_assert_uint_eq(agg__size(&agg), 3);

	text = render(&agg, sym, &b, NULL);
	ck_assert_uint_eq(markers(text), 2);
	ck_assert_ptr_nonnull(strstr(text, "    -                cc1plus (1234)\n        5\n"));
	ck_assert_uint_eq(render_missed(&agg, sym, &b), 2);
	warn = render_warnings(&agg, sym, &b);
	ck_assert_str_eq(warn, "WARNING: 2 stack traces could not be displayed. Consider increasing "
			       "--stack-storage-size.\n");
	free(warn);
	free(text);

	text = render(&agg, sym, &f, NULL);
	ck_assert_uint_eq(markers(text), 1);
	ck_assert_uint_eq(render_missed(&agg, sym, &f), 1);
	free(text);
	/* The flame graph is drawn from the folded lines: one path with the marker. */
	ck_assert_uint_eq(render_missed(&agg, sym, &svg), 1);
	/* A Sample per stack, each with the marker's Location. */
	ck_assert_uint_eq(render_missed(&agg, sym, &pprof), 3);
}
END_TEST

/* Names anyone controls cannot add frames or lines (issue 14, case 5). */
START_TEST(names_cannot_add_frames_or_lines)
{
	uint64_t u[] = { fx.alpha + 4 };
	struct render_opts f = { .format = FORMAT_FOLDED }, b = { .format = FORMAT_BCC };
	struct report_stats st;

	add(7, "x;y\nz", NULL, 0, u, 1, 0, 1);
	ck_assert_str_eq(render_report(&f, &st), "x\\x3by\\x0az;fixture_alpha 1\n");
	/* In the multi-line report ';' is no separator; a newline still is. */
	ck_assert_str_eq(render_report(&b, &st), "    fixture_alpha\n"
						 "    -                x;y\\x0az (7)\n"
						 "        1\n\n");
}
END_TEST

/*
 * Nor drive the terminal the report is read on (issue 32): C1 controls
 * (U+009B CSI, U+009D OSC, U+0085), as C0 ones, print as their bytes.
 * Other text, and bytes that are no UTF-8 (no control to a UTF-8
 * terminal), stay as they are.
 */
START_TEST(names_cannot_drive_the_terminal)
{
	uint64_t u[] = { fx.alpha + 4 };
	struct render_opts f = { .format = FORMAT_FOLDED }, b = { .format = FORMAT_BCC };
	struct report_stats st;

	add(7, "\xc2\x9b" "31m\xc2\x9d" "0\x1b\xc2\x85\xc3\xa9\x9b\x7f", NULL, 0, u, 1, 0, 1);
	ck_assert_str_eq(render_report(&f, &st),
			 "\\xc2\\x9b31m\\xc2\\x9d0\\x1b\\xc2\\x85\xc3\xa9\x9b\\x7f;fixture_alpha 1\n");
	ck_assert_str_eq(render_report(&b, &st),
			 "    fixture_alpha\n"
			 "    -                \\xc2\\x9b31m\\xc2\\x9d0\\x1b\\xc2\\x85\xc3\xa9\x9b\\x7f (7)\n"
			 "        1\n\n");
}
END_TEST

/*
 * Nor reorder or split the line it is printed on (issue 46 row 6): a
 * right-to-left override (U+202E) and a line separator (U+2028) print as
 * their bytes; a character beside them (U+2027) stays. The whole set is
 * utf8__control_len's test (check_outputs.c).
 */
START_TEST(names_cannot_reorder_or_split_the_line)
{
	uint64_t u[] = { fx.alpha + 4 };
	struct render_opts f = { .format = FORMAT_FOLDED };
	struct report_stats st;

	add(7, "p\xe2\x80\xae" "q\xe2\x80\xa8" "r\xe2\x80\xa7" "s", NULL, 0, u, 1, 0, 1);
	ck_assert_str_eq(render_report(&f, &st),
			 "p\\xe2\\x80\\xaeq\\xe2\\x80\\xa8r\xe2\x80\xa7" "s;fixture_alpha 1\n");
}
END_TEST

/* fx's maps moved by delta, as another process of the same binary maps them (ASLR). */
static void moved_space(struct addr_space *as, uint64_t delta, uint64_t ino_delta)
{
	memset(as, 0, sizeof(*as));
	for (size_t i = 0; i < fx.as.nr_maps; i++) {
		struct mapping m = fx.as.maps[i];

		m.start += delta;
		m.end += delta;
		if (mapping__is_file(&m))
			m.ino += ino_delta;
		ck_assert_int_eq(addr_space__insert(as, &m), 0);
	}
}

static void free_space(struct addr_space *as)
{
	for (size_t i = 0; i < as->nr_maps; i++)
		free(as->maps[i].path);
	free(as->maps);
}

#define DELTA 0x100000000ULL

/*
 * Issue 45: a user frame no symbol names, in a file, prints the file's base
 * name in folded stacks and flame graphs ("[libcrypto.so.3]", as perf's
 * stackcollapse-perf.pl), and [unknown] in the multi-line report, as bcc
 * prints it (-A adds the module there). Two addresses of one file are one
 * frame, as in perf's scripts; memory without a file stays [unknown]. The
 * name is the file's, anyone's to choose: it is escaped as every name is
 * (';', a newline, a right-to-left override; XML's specials in the SVG).
 */
START_TEST(frames_without_a_symbol_name_their_file)
{
	static const char path[] = "/nonexistent/li;b\n\xe2\x80\xae<x>&.so.3";
	const uint64_t lib = 0x7f2000000000ULL, anon = 0x7f3000000000ULL;
	uint64_t u1[] = { lib + 0x120, fx.main + 10 }, u2[] = { lib + 0x4567, fx.main + 10 };
	uint64_t u3[] = { anon + 0x10, fx.main + 10 };
	struct render_opts f = { .format = FORMAT_FOLDED }, b = { .format = FORMAT_BCC };
	struct render_opts a = { .format = FORMAT_BCC, .addresses = true };
	struct render_opts svg = { .format = FORMAT_SVG, .title = "t" };
	struct report_stats st;
	struct addr_space as;
	char *text, *report;

	moved_space(&as, 0, 0);
	ck_assert_int_eq(addr_space__insert(&as, &(struct mapping){ .start = lib,
								       .end = lib + 0x10000,
								       .exec = true,
								       .ino = 77,
								       .path = (char *)path }),
			 0);
	ck_assert_int_eq(addr_space__insert(&as, &(struct mapping){ .start = anon,
								       .end = anon + 0x10000,
								       .exec = true,
								       .path = "//anon" }),
			 0);
	fixture_count(&agg, &as, 100, "cc1", NULL, 0, u1, 2, 0, 2);
	fixture_count(&agg, &as, 100, "cc1", NULL, 0, u2, 2, 0, 3);
	fixture_count(&agg, &as, 100, "cc1", NULL, 0, u3, 2, 0, 4);
	ck_assert_str_eq(render_report(&f, &st),
			 "cc1;main;[unknown] 4\n"
			 "cc1;main;[li\\x3bb\\x0a\\xe2\\x80\\xae<x>&.so.3] 5\n");
	ck_assert_str_eq(render_report(&b, &st), "    [unknown]\n"
						 "    main\n"
						 "    -                cc1 (100)\n"
						 "        9\n\n");
	/* -A: apart by address, the module after [unknown] as for every frame. */
	ck_assert_int_ge(asprintf(&text,
				  "    0x7f2000000120 [unknown] [li;b\\x0a\\xe2\\x80\\xae<x>&.so.3]\n"
				  "    %#" PRIx64 " main+0xa [symfixture]\n"
				  "    -                cc1 (100)\n"
				  "        2\n\n",
				  fx.main + 10),
			 0);
	report = render_report(&a, &st);
	/* Ascending by count: this block of 2 first, then lib + 0x4567's 3, the anon 4. */
	ck_assert_msg(!strncmp(report, text, strlen(text)), "%s", report);
	ck_assert_ptr_nonnull(strstr(report, "    0x7f2000004567 [unknown] [li;b"));
	ck_assert_ptr_nonnull(strstr(report, "    0x7f3000000010 [unknown]\n"));
	free(text);
	text = render(&agg, sym, &svg, NULL);
	ck_assert_msg(strstr(text, "<title>[li\\x3bb\\x0a\\xe2\\x80\\xae&lt;x&gt;&amp;.so.3] (5 "
				   "samples"),
		      "%s", text);
	ck_assert_ptr_null(strstr(text, "<x>"));
	free(text);
	free_space(&as);
}
END_TEST

/* The unknown user frames of a profile: profile frames without a name. */
static unsigned int unknown_user_frames(bool by_file, const struct addr_space *other)
{
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true, .frames_by_file = by_file };
	struct resolve_meta meta = { 0 };
	struct resolver *r = resolver__new(sym, &spec);
	uint64_t u[] = { 0x10, fx.main + 10 }, v[] = { 0x20, fx.main + 10 + DELTA };
	struct profile prof;
	unsigned int n = 0;

	agg__fini(&agg);
	agg__init(&agg);
	fixture_count(&agg, &fx.as, 100, "cc1", NULL, 0, u, 2, 0, 1);
	fixture_count(&agg, other, 101, "cc1", NULL, 0, v, 2, 0, 1);
	resolver__prepare(r, &agg, 1000);
	ck_assert_int_eq(resolver__build(r, &agg, &meta, &prof), 0);
	for (size_t i = 0; i < prof.nr_frames; i++)
		n += prof.frames[i].kind == FRAME_USER && !prof.frames[i].name;
	ck_assert_uint_eq(prof.nr_stacks, 2);
	profile__fini(&prof);
	resolver__free(r);
	return n;
}

/*
 * Addresses no mapping holds (a frame-pointer walk through code built
 * without them) print [unknown] in every process: where no writer prints
 * addresses they are one frame, not one per process and address (a busy
 * host's thousands of compilers grew the frames without bound).
 */
START_TEST(unmapped_addresses_are_one_frame_where_addresses_are_not_printed)
{
	struct addr_space other;

	moved_space(&other, DELTA, 0);
	ck_assert_uint_eq(unknown_user_frames(true, &other), 1);
	ck_assert_uint_eq(unknown_user_frames(false, &other), 2);
	free_space(&other);
}
END_TEST

/* The same stacks in three processes: two at other addresses, as ASLR puts them. */
static void count_in_three_processes(const struct addr_space *moved)
{
	uint64_t k[] = { K_LEAF + 4, K_MID + 0x10 };
	uint64_t u[] = { fx.alpha + 4, fx.beta + 6, fx.main + 10 };
	uint64_t v[] = { fx.alpha + 4 + DELTA, fx.beta + 6 + DELTA, fx.main + 10 + DELTA };
	uint64_t w[] = { fx.gamma + 2 + DELTA, fx.main + 10 + DELTA };

	fixture_count(&agg, &fx.as, 100, "cc1", k, 2, u, 3, 0, 3);
	fixture_count(&agg, moved, 101, "cc1", k, 2, v, 3, 0, 2);
	fixture_count(&agg, moved, 102, "cc1", k, 2, v, 3, 0, 1);
	fixture_count(&agg, moved, 102, "cc1", NULL, 0, w, 2, 0, 4);
}

/*
 * A profile of the counts of three processes (as during a run: prepared,
 * then built), with user frames by file or by address, and its folded and
 * multi-line texts.
 */
static void build_three(const struct addr_space *moved, bool by_file, struct profile *p,
			char **folded, char **bcc)
{
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true, .period_ns = 1,
				     .frames_by_file = by_file };
	struct resolve_meta meta = { 0 };
	struct resolver *r = resolver__new(sym, &spec);
	size_t len;
	FILE *f;

	ck_assert_ptr_nonnull(r);
	agg__fini(&agg);
	agg__init(&agg);
	count_in_three_processes(moved);
	resolver__prepare(r, &agg, 1000);
	ck_assert_int_eq(resolver__build(r, &agg, &meta, p), 0);
	resolver__free(r);
	f = open_memstream(folded, &len);
	ck_assert_int_eq(writer__folded(f, p, &(struct writer_opts){ 0 }), 0);
	fclose(f);
	f = open_memstream(bcc, &len);
	ck_assert_int_eq(writer__bcc(f, p, &(struct writer_opts){ .delimited = true }), 0);
	fclose(f);
}

/* The profiles of the three processes with frames by address and by file, which print alike. */
struct both_ways {
	struct addr_space moved;
	struct profile by_addr, by_file;
	char *folded;		/* by file */
};

static void build_both_ways(struct both_ways *b, uint64_t ino_delta)
{
	char *fa, *ba, *bf;

	moved_space(&b->moved, DELTA, ino_delta);
	build_three(&b->moved, false, &b->by_addr, &fa, &ba);
	build_three(&b->moved, true, &b->by_file, &b->folded, &bf);
	ck_assert_str_eq(b->folded, fa);
	ck_assert_str_eq(bf, ba);
	free(fa);
	free(ba);
	free(bf);
}

static void free_both_ways(struct both_ways *b)
{
	free(b->folded);
	profile__fini(&b->by_addr);
	profile__fini(&b->by_file);
	free_space(&b->moved);
}

/*
 * Issues 20 and 22: every compiler process maps cc1 at its own addresses.
 * Where no address is printed, its frames are one per offset of the file,
 * and stacks that differ only by process share their frames: the report
 * is the one frames per address give.
 */
START_TEST(processes_of_one_binary_share_frames)
{
	struct both_ways b;

	build_both_ways(&b, 0);
	ck_assert_str_eq(b.folded, "cc1;main;fixture_gamma_static 4\n"
				   "cc1;main;fixture_beta;fixture_alpha;k_mid;k_leaf 6\n");
	/* Kernel 2 + user 3 (+ gamma) frames, where each process had its own. */
	ck_assert_uint_eq(b.by_file.nr_frames, 6);
	ck_assert_uint_eq(b.by_addr.nr_frames, 9);
	/* Four stacks (one per process and stack), three of them one run of frames. */
	ck_assert_uint_eq(b.by_file.nr_stacks, 4);
	ck_assert_uint_eq(b.by_file.stacks[0].first, b.by_file.stacks[1].first);
	ck_assert_uint_eq(b.by_file.stacks[1].first, b.by_file.stacks[2].first);
	ck_assert_uint_eq(b.by_file.nr_stack_frames, 5 + 2);
	ck_assert_uint_eq(b.by_addr.stacks[1].first, b.by_addr.stacks[2].first);
	ck_assert_uint_ne(b.by_addr.stacks[0].first, b.by_addr.stacks[1].first);
	free_both_ways(&b);
}
END_TEST

/*
 * A process whose mapping names the binary's path but another file (an
 * inode that is not the path's any more: the binary was replaced) shares
 * no frame with one that maps the real file: its frames name no function,
 * only the file the process maps (issue 45), and its two stacks stay apart
 * from the real file's.
 */
START_TEST(another_file_at_the_same_path_shares_no_frames)
{
	struct both_ways b;

	build_both_ways(&b, 1);
	ck_assert_str_eq(b.folded, "cc1;[symfixture];[symfixture];[symfixture];k_mid;k_leaf 3\n"
				   "cc1;main;fixture_beta;fixture_alpha;k_mid;k_leaf 3\n"
				   "cc1;[symfixture];[symfixture] 4\n");
	free_both_ways(&b);
}
END_TEST

/*
 * Once a stack is in the profile, its addresses are freed (issue 22); more
 * samples of it still count. A stack whose names may still change (no
 * mapping yet: JIT code, or a side-band record to come) keeps them.
 */
START_TEST(raw_stacks_are_freed_once_in_the_profile)
{
	struct resolve_spec spec = { .kind = PROFILE_ON_CPU, .user_frames = true,
				     .kernel_frames = true, .period_ns = 1, .frames_by_file = true };
	struct resolve_meta meta = { 0 };
	struct resolver *r = resolver__new(sym, &spec);
	uint64_t u[] = { fx.alpha + 4, fx.main + 10 }, nowhere[] = { 0x10 };
	struct profile p;
	char *buf = NULL;
	size_t len;
	FILE *f;

	add(1, "a", NULL, 0, u, 2, 0, 1);
	add(1, "a", NULL, 0, nowhere, 1, 0, 1);
	resolver__prepare(r, &agg, 1000);
	ck_assert_uint_eq(agg.nr_released, 1);
	ck_assert_ptr_null(agg__entry(&agg, 0)->raw);
	ck_assert_ptr_nonnull(agg__entry(&agg, 1)->raw);
	add(1, "a", NULL, 0, u, 2, 0, 5);
	add(1, "a", NULL, 0, nowhere, 1, 0, 2);
	ck_assert_uint_eq(agg__size(&agg), 2);
	ck_assert_int_eq(resolver__build(r, &agg, &meta, &p), 0);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(writer__folded(f, &p, &(struct writer_opts){ 0 }), 0);
	fclose(f);
	ck_assert_str_eq(buf, "a;[unknown] 3\n"
			      "a;main;fixture_alpha 6\n");
	free(buf);
	profile__fini(&p);
	resolver__free(r);
}
END_TEST

/*
 * glibc's count of free heap. AddressSanitizer's allocator is not glibc's:
 * there it is 0, and the test adds fewer entries (it still checks their
 * memory).
 */
#if TESTS_UNDER_ASAN
#define HEAP_ENTRIES 50000
static size_t free_heap(void)
{
	return 0;
}
#else
#define HEAP_ENTRIES 1000000
static size_t free_heap(void)
{
	return mallinfo2().fordblks;
}
#endif

/*
 * A long run adds entries for hours, with the rest of the program's small
 * blocks allocated between them. The array of chunk pointers used to grow
 * by one each chunk, and every move left a hole between chunks that the
 * heap kept as free memory: the holes summed to the square of the chunks
 * (9.7 MB free after 22 minutes of a compile loop; in an hour, the part of
 * the RSS that was not stacks grew by 59 MB, each minute more).
 */
START_TEST(entries_added_for_long_leave_the_heap_without_holes)
{
	enum { ENTRIES = HEAP_ENTRIES, KEEP_EVERY = 300 };
	void **kept = calloc(ENTRIES / KEEP_EVERY + 1, sizeof(*kept));
	struct agg big;
	size_t before = free_heap(), after;

	agg__init(&big);
	for (size_t i = 0; i < ENTRIES; i++) {
		uint64_t u[] = { i + 1, 2, 3, 4 };
		struct sample s = { .pid = 1, .tid = 1, .user_ips = u, .nr_user = 1 + i % 4,
				    .weight = 1 };

		ck_assert_int_eq(agg__add(&big, &s, NULL, 0), 0);
		/* The rest of the program: a small block that stays. */
		if (!(i % KEEP_EVERY))
			kept[i / KEEP_EVERY] = malloc(40 + i / KEEP_EVERY % 200);
		/* The resolver has what it needs of the raw stack. */
		agg__release(&big, agg__entry(&big, i));
	}
	after = free_heap();
	ck_assert_msg(after < before + 512 * 1024, "%zu bytes of free heap after %d entries, %zu before",
		      after, ENTRIES, before);
	for (size_t i = 0; i <= ENTRIES / KEEP_EVERY; i++)
		free(kept[i]);
	free(kept);
	agg__fini(&big);
}
END_TEST

Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("formats");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, identical_samples_count_once);
	tcase_add_test(tc, frames_resolved_during_the_run_report_the_same);
	tcase_add_test(tc, bytes_held_for_stacks_count_their_frames);
	tcase_add_test(tc, stacks_of_a_settled_image_are_finished_before_it_is_released);
	tcase_add_test(tc, unmapped_addresses_are_one_frame_where_addresses_are_not_printed);
	tcase_add_test(tc, processes_of_one_binary_share_frames);
	tcase_add_test(tc, another_file_at_the_same_path_shares_no_frames);
	tcase_add_test(tc, frames_without_a_symbol_name_their_file);
	tcase_add_test(tc, raw_stacks_are_freed_once_in_the_profile);
	tcase_add_test(tc, folded_sorted_ascending_merged_by_text);
	tcase_add_test(tc, folded_delimited_annotated);
	tcase_add_test(tc, multiline_as_bcc_prints_it);
	tcase_add_test(tc, user_only_and_kernel_only_views);
	tcase_add_test(tc, addresses_keep_stacks_apart);
	tcase_add_test(tc, return_addresses_resolve_at_ip_minus_one);
	tcase_add_test(tc, unknown_frames_and_warnings);
	tcase_add_test(tc, a_stack_printed_once_is_warned_once);
	tcase_add_test(tc, names_cannot_add_frames_or_lines);
	tcase_add_test(tc, names_cannot_drive_the_terminal);
	tcase_add_test(tc, names_cannot_reorder_or_split_the_line);
	suite_add_tcase(s, tc);
	tc = tcase_create("heap");
	tcase_set_timeout(tc, 60);	/* a million entries: under a second alone, more beside a build */
	tcase_add_test(tc, entries_added_for_long_leave_the_heap_without_holes);
	suite_add_tcase(s, tc);
	return s;
}
