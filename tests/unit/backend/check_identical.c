// SPDX-License-Identifier: GPL-2.0
/*
 * The same samples through each backend's conversion path give
 * byte-identical reports: ring records through the perf decoder, count-map
 * entries and stack-map values through the bpf converter.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-bpf/convert.h"
#include "backend-perfring/decode.h"
#include "backend-perfring/ringsample.h"
#include "core/agg/pipeline.h"
#include "tests/support/fixture.h"
#include "tests/support/records.h"
#include "tests/support/render.h"
#include "tests/support/tests.h"

#define PID 3000000	/* above pid_max: never read from /proc */
#define K_LEAF 0xffffffff81000110ULL
#define K_MID 0xffffffff81000200ULL

static struct sym_fixture fx;
static struct pipeline_config pcfg;
static char kallsyms[] = "/tmp/profile-ident-ks-XXXXXX";

struct logical_sample {
	uint32_t tid;
	const char *comm;
	uint64_t kernel[4];
	unsigned int nk;
	uint64_t user[4];
	unsigned int nu;
	unsigned int times;
};

static struct logical_sample set[4];

static void setup(void)
{
	FILE *f;

	sym_fixture_load(&fx, workload("symfixture"));
	f = fdopen(mkstemp(kallsyms), "w");
	fputs("ffffffff81000000 T _stext\nffffffff81000110 T k_leaf\nffffffff81000200 T k_mid\n",
	      f);
	fclose(f);
	pcfg = (struct pipeline_config){ .user_stacks = true, .kernel_stacks = true };
	set[0] = (struct logical_sample){ PID, "app", { K_LEAF + 4, K_MID + 8 }, 2,
					  { fx.alpha + 2, fx.beta + 5, fx.main + 9 }, 3, 7 };
	set[1] = (struct logical_sample){ PID, "app", { 0 }, 0, { fx.gamma + 1, fx.main + 9 }, 2, 3 };
	set[2] = (struct logical_sample){ PID + 1, "app-worker", { K_LEAF + 12 }, 1,
					  { fx.beta + 1, fx.main + 9 }, 2, 5 };
	set[3] = (struct logical_sample){ PID, "app", { K_MID + 1, K_MID + 8 }, 2, { 0 }, 0, 2 };
}

static void teardown(void)
{
	unlink(kallsyms);
	strcpy(kallsyms, "/tmp/profile-ident-ks-XXXXXX");
	sym_fixture_free(&fx);
}

/* Both pipelines know the process the same way: the fixture's mappings, comms. */
static void init_core(struct pipeline *core)
{
	ck_assert_int_eq(pipeline__init(core, &pcfg), 0);
	ck_assert_int_eq(proctrack__exec(core->procs, PID, "app", 0), 0);
	for (size_t i = 0; i < fx.as.nr_maps; i++)
		ck_assert_int_eq(proctrack__mmap(core->procs, PID, &fx.as.maps[i]), 0);
	ck_assert_int_eq(proctrack__set_comm(core->procs, PID, "app"), 0);
	ck_assert_int_eq(proctrack__set_comm(core->procs, PID + 1, "app-worker"), 0);
}

static void feed_perf(struct pipeline *core)
{
	struct record_builder b;

	for (int i = 0; i < 4; i++)
		for (unsigned int n = 0; n < set[i].times; n++) {
			uint64_t kbuf[MAX_STACK_DEPTH], ubuf[MAX_STACK_DEPTH];
			struct decoded_sample ds;
			struct sample s;

			ck_assert_int_eq(decode__sample(rb_sample(&b, PID, set[i].tid, i % 2,
								  set[i].kernel, set[i].nk,
								  set[i].user, set[i].nu),
							TEST_SAMPLE_TYPE, 0, &ds),
					 0);
			perfring__convert_sample(&ds, core->procs, kbuf, ubuf, &s);
			ck_assert_int_eq(pipeline__add(core, &s), 0);
		}
}

/* What the BPF program stores: one key per stack pair, counts, zero-terminated stacks. */
static void feed_bpf(struct pipeline *core)
{
	for (int i = 0; i < 4; i++) {
		uint64_t kstack[PROFILE_MAX_STACK_DEPTH] = { 0 }, ustack[PROFILE_MAX_STACK_DEPTH] = { 0 };
		uint64_t kbuf[MAX_STACK_DEPTH + 1];
		struct profile_key key = { .tgid = PID };
		struct sample s;

		snprintf(key.comm, sizeof(key.comm), "%s", set[i].comm);
		key.kernel_stack_id = set[i].nk ? 10 + i : -EFAULT;
		key.user_stack_id = set[i].nu ? 20 + i : -EFAULT;
		key.kernel_ip = set[i].nk ? set[i].kernel[0] : 0;
		memcpy(kstack, set[i].kernel, set[i].nk * sizeof(uint64_t));
		memcpy(ustack, set[i].user, set[i].nu * sizeof(uint64_t));
		bpf_convert__sample(&key, set[i].times, set[i].nk ? kstack : NULL,
				    set[i].nu ? ustack : NULL, kbuf, &s);
		ck_assert_int_eq(pipeline__add(core, &s), 0);
	}
}

static char *report(struct pipeline *core, bool folded)
{
	struct render_opts ro = { .format = folded ? FORMAT_FOLDED : FORMAT_BCC, .delimited = true };
	struct symbolizer *sym = symbolizer__new();
	char *buf;

	symbolizer__set_kallsyms(sym, kallsyms);
	buf = render(&core->agg, sym, &ro, NULL);
	symbolizer__free(sym);
	return buf;
}

START_TEST(both_conversion_paths_print_the_same)
{
	struct pipeline perf_core, bpf_core;

	init_core(&perf_core);
	init_core(&bpf_core);
	feed_perf(&perf_core);
	feed_bpf(&bpf_core);
	for (int folded = 0; folded <= 1; folded++) {
		char *a = report(&perf_core, folded), *b = report(&bpf_core, folded);

		ck_assert_str_eq(a, b);
		/* Not vacuous: every stack is there, symbolized. */
		ck_assert_ptr_nonnull(strstr(a, folded ? "app;main;fixture_beta;fixture_alpha;-;k_mid;k_leaf 7\n"
						       : "    k_leaf\n    k_mid\n    --\n    fixture_alpha\n"));
		ck_assert_ptr_nonnull(strstr(a, "app-worker"));
		ck_assert_ptr_nonnull(strstr(a, "fixture_gamma_static"));
		free(a);
		free(b);
	}
	pipeline__fini(&perf_core);
	pipeline__fini(&bpf_core);
}
END_TEST

/* The flame graph and the pprof profile, too, come out the same from either backend. */
START_TEST(both_conversion_paths_give_the_same_svg_and_pprof)
{
	struct render_opts svg_opts = { .format = FORMAT_SVG, .title = "same" };
	struct render_opts pb_opts = { .format = FORMAT_PPROF, .period_ns = 1000000 };
	struct pipeline cores[2];
	char *svg[2], pb[2][64], script[600];
	struct run_result decoded[2];
	struct symbolizer *sym;

	init_core(&cores[0]);
	init_core(&cores[1]);
	feed_perf(&cores[0]);
	feed_bpf(&cores[1]);
	snprintf(script, sizeof(script), "%s/tests/js/folded.mjs",
		 getenv("PROFILE_SRCDIR") ? getenv("PROFILE_SRCDIR") : ".");
	for (int i = 0; i < 2; i++) {
		size_t len;
		char *gz;
		FILE *f;

		sym = symbolizer__new();
		symbolizer__set_kallsyms(sym, kallsyms);
		svg[i] = render(&cores[i].agg, sym, &svg_opts, NULL);
		gz = render(&cores[i].agg, sym, &pb_opts, &len);
		snprintf(pb[i], sizeof(pb[i]), "/tmp/profile-ident-%d-%d.pb.gz", (int)getpid(), i);
		f = fopen(pb[i], "w");
		ck_assert_uint_eq(fwrite(gz, 1, len, f), len);
		fclose(f);
		free(gz);
		symbolizer__free(sym);
		run_cmd((char *[]){ "/usr/bin/env", "node", script, pb[i], NULL }, 30, 0, &decoded[i]);
		unlink(pb[i]);
		ck_assert_msg(decoded[i].exit_code == 0, "node: %.300s", decoded[i].err);
		pipeline__fini(&cores[i]);
	}
	ck_assert_str_eq(svg[0], svg[1]);
	ck_assert_ptr_nonnull(strstr(svg[0], "<title>fixture_alpha ("));
	/* Sample order in the file follows hash order; what it says is the same. */
	ck_assert_str_eq(decoded[0].out, decoded[1].out);
	ck_assert_ptr_nonnull(strstr(decoded[0].out, "app;main;fixture_beta;fixture_alpha;k_mid;k_leaf 7\n"));
	for (int i = 0; i < 2; i++) {
		free(svg[i]);
		run_result_free(&decoded[i]);
	}
}
END_TEST

START_TEST(bpf_kernel_leaf_is_added_only_when_missing)
{
	uint64_t kstack[PROFILE_MAX_STACK_DEPTH] = { K_MID + 8 }, kbuf[MAX_STACK_DEPTH + 1];
	struct profile_key key = { .tgid = 1, .kernel_stack_id = 1, .user_stack_id = -EFAULT,
				   .kernel_ip = K_LEAF + 4 };
	struct sample s;

	/* A walk that starts above the interrupted function: the leaf is added. */
	bpf_convert__sample(&key, 1, kstack, NULL, kbuf, &s);
	ck_assert_uint_eq(s.nr_kernel, 2);
	ck_assert_uint_eq(s.kernel_ips[0], K_LEAF + 4);
	ck_assert_uint_eq(s.kernel_ips[1], K_MID + 8);
	/* A walk that includes it (this kernel): never twice. */
	kstack[0] = K_LEAF + 4;
	kstack[1] = K_MID + 8;
	bpf_convert__sample(&key, 1, kstack, NULL, kbuf, &s);
	ck_assert_uint_eq(s.nr_kernel, 2);
	ck_assert_uint_eq(s.kernel_ips[0], K_LEAF + 4);
}
END_TEST

START_TEST(bpf_stack_ids_errors_and_absence)
{
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	struct profile_key key = { .tgid = 1, .kernel_stack_id = -EFAULT,
				   .user_stack_id = -EEXIST };
	struct sample s;

	bpf_convert__sample(&key, 4, NULL, NULL, kbuf, &s);
	ck_assert_int_eq(s.kernel_err, 0);	/* user-mode sample: no kernel stack */
	ck_assert_int_eq(s.user_err, -EEXIST);	/* collision: missed */
	ck_assert_uint_eq(s.weight, 4);
	key.user_stack_id = -ENOMEM;
	key.kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	bpf_convert__sample(&key, 1, NULL, NULL, kbuf, &s);
	ck_assert_int_eq(s.user_err, -ENOMEM);
	ck_assert_int_eq(s.kernel_err, 0);
	ck_assert_int_eq(s.nr_kernel, 0);
}
END_TEST

Suite *identical_suite(void)
{
	Suite *s = suite_create("identical");
	TCase *tc = tcase_create("convert");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, both_conversion_paths_print_the_same);
	tcase_add_test(tc, both_conversion_paths_give_the_same_svg_and_pprof);
	tcase_add_test(tc, bpf_kernel_leaf_is_added_only_when_missing);
	tcase_add_test(tc, bpf_stack_ids_errors_and_absence);
	suite_add_tcase(s, tc);
	return s;
}
