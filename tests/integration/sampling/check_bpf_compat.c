// SPDX-License-Identifier: GPL-2.0
/*
 * The build's kernel check (scripts/check-bpf-compat.sh) passes our
 * programs and fails programs that use what 4.9 lacks, each for its reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

/* Compile a BPF snippet (with extra clang flags) and run the check on it; returns its status. */
static int check_snippet(const char *body, const char *cflags, struct run_result *r)
{
	char dir[] = "/tmp/profile-bpfc-XXXXXX", src[128], obj[128], cmd[1024], script[512];
	FILE *f;
	int rc;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/x.bpf.c", dir);
	snprintf(obj, sizeof(obj), "%s/x.bpf.o", dir);
	f = fopen(src, "w");
	fprintf(f, "#include <linux/types.h>\n#include <linux/bpf.h>\n"
		   "#include <bpf/bpf_helpers.h>\n%s\n"
		   "char LICENSE[] SEC(\"license\") = \"GPL\";\n",
		body);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "clang -g -O2 -target bpf %s -I/usr/include/$(gcc -print-multiarch) -c %s -o %s",
		 cflags ? cflags : "", src, obj);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(script, sizeof(script), "%s/scripts/check-bpf-compat.sh", srcdir());
	run_cmd((char *[]){ script, obj, NULL }, 30, 0, r);
	rc = r->exit_code;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	return rc;
}

/* The programs held to 4.9: the counting one and, next to it, the off-CPU and stack-copy ones. */
static const char *const our_objs[] = { "profile.bpf.o", "offcpu.bpf.o", "dwarf.bpf.o" };

START_TEST(our_programs_pass)
{
	char script[512], obj[4096];
	const char *profile_obj = getenv("PROFILE_BPF_OBJ");
	const char *slash;
	struct run_result r;

	ck_assert_ptr_nonnull(profile_obj);
	slash = strrchr(profile_obj, '/');
	snprintf(obj, sizeof(obj), "%.*s%s", slash ? (int)(slash - profile_obj + 1) : 0,
		 profile_obj, our_objs[_i]);
	snprintf(script, sizeof(script), "%s/scripts/check-bpf-compat.sh", srcdir());
	run_cmd((char *[]){ script, obj, NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%s: %s", obj, r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "loads on Linux 4.9"));
	run_result_free(&r);
}
END_TEST

/* A tracepoint program that reads its record at offsets from a map, as offcpu does. */
START_TEST(tracepoint_programs_with_4_9_helpers_pass)
{
	static const char body[] =
		"struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1);\n"
		"\t__type(key, __u32); __type(value, __u32); } off SEC(\".maps\");\n"
		"SEC(\"%s\") int p(void *c) { __u32 k = 0, *o = bpf_map_lookup_elem(&off, &k);\n"
		"\t__u32 v = 0; if (!o) return 0; bpf_probe_read(&v, 4, c + *o);\n"
		"\treturn v == bpf_ktime_get_ns(); }";
	static const char *const sections[] = { "tracepoint/sched/sched_switch",
						"tp/sched/sched_switch" };
	struct run_result r;
	char prog[1024];

	for (size_t i = 0; i < sizeof(sections) / sizeof(sections[0]); i++) {
		snprintf(prog, sizeof(prog), body, sections[i]);
		ck_assert_msg(check_snippet(prog, NULL, &r) == 0, "%s: %s", sections[i], r.err);
		run_result_free(&r);
	}
}
END_TEST

static const struct {
	const char *body;
	const char *reason;
	const char *cflags;
} bad[] = {
	{ "int g = 1;\nSEC(\"perf_event\") int p(void *c) { return g; }",
	  "global variables need Linux 5.2", NULL },
	{ "SEC(\"perf_event\") int p(void *c) { volatile int x = 0; int n = "
	  "bpf_get_smp_processor_id();\n#pragma nounroll\nfor (int i = 0; i < n && i < 64; i++) x += i; "
	  "return x; }",
	  "loops need Linux 5.3", NULL },
	{ "SEC(\"perf_event\") int p(void *c) { __u64 v = 0; return __sync_fetch_and_add(&v, 1); }",
	  "atomic with a return value", NULL },
	{ "SEC(\"perf_event\") int p(void *c) { return bpf_get_current_task_btf() != 0; }",
	  "call 158: a helper of Linux 5.11, not of 4.9", NULL },
	{ "SEC(\"kprobe/x\") int p(void *c) { return 0; }",
	  "only 'perf_event' and 'tracepoint/CATEGORY/NAME' programs", NULL },
	/* Tracepoint programs: what a newer off-CPU program might reach for. */
	{ "SEC(\"tracepoint/sched/sched_switch\") int p(void *c) { __u32 v = 0;\n"
	  "bpf_probe_read_kernel(&v, 4, c + 24); return v; }",
	  "call 113: a helper of Linux 5.5, not of 4.9", NULL },
	/* 4.9's helpers take buffers on the BPF stack only (map values: 4.10). */
	{ "struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1);\n"
	  "\t__type(key, __u32); __type(value, char[16]); } m SEC(\".maps\");\n"
	  "SEC(\"perf_event\") int p(void *c) { __u32 k = 0; char *v = bpf_map_lookup_elem(&m, &k);\n"
	  "\tif (v) bpf_get_current_comm(v, 16); return 0; }",
	  "call 16 (insn", NULL },
	{ "struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1);\n"
	  "\t__type(key, __u32); __type(value, __u64[8]); } m SEC(\".maps\");\n"
	  "SEC(\"perf_event\") int p(void *c) { __u32 k = 0; __u64 *v = bpf_map_lookup_elem(&m, &k);\n"
	  "\tif (v) bpf_probe_read(v + 1, 8, c); return 0; }",
	  "a map value as the helper's buffer", NULL },
	{ "int g;\nSEC(\"tracepoint/sched/sched_switch\") int p(void *c) { return g++; }",
	  "global variables need Linux 5.2", NULL },
	{ "SEC(\"raw_tracepoint/sched_switch\") int p(void *c) { return 0; }",
	  "code in section raw_tracepoint/sched_switch", NULL },
	{ "SEC(\"tp_btf/sched_switch\") int p(void *c) { return 0; }",
	  "code in section tp_btf/sched_switch", NULL },
	{ "SEC(\"tracepoint/sched/sched_switch\") int p(void *c) { __u64 a = bpf_ktime_get_ns(),\n"
	  "b = bpf_get_smp_processor_id(); return a < b; }",
	  "jump if less (-mcpu=v2): needs Linux 4.14", "-mcpu=v2" },
};

START_TEST(programs_4_9_cannot_load_fail_the_check)
{
	struct run_result r;

	ck_assert_int_ne(check_snippet(bad[_i].body, bad[_i].cflags, &r), 0);
	ck_assert_msg(strstr(r.err, bad[_i].reason), "want '%s', got: %.300s", bad[_i].reason,
		      r.err);
	run_result_free(&r);
}
END_TEST

/* A source marked for a newer kernel is held to that one: a 5.15 helper passes at 5.15 only. */
START_TEST(objects_are_held_to_the_kernel_they_name)
{
	static const char body[] =
		"SEC(\"perf_event\") int p(void *c) { return bpf_task_pt_regs(0) != 0; }";
	char dir[] = "/tmp/profile-bpfc-XXXXXX", src[128], obj[128], cmd[1024], script[512];
	struct run_result r;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(src, sizeof(src), "%s/x.bpf.c", dir);
	snprintf(obj, sizeof(obj), "%s/x.bpf.o", dir);
	f = fopen(src, "w");
	fprintf(f, "#include <linux/types.h>\n#include <linux/bpf.h>\n"
		   "#include <bpf/bpf_helpers.h>\n%s\nchar LICENSE[] SEC(\"license\") = \"GPL\";\n",
		body);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "clang -g -O2 -target bpf -I/usr/include/$(gcc -print-multiarch) -c %s -o %s", src,
		 obj);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(script, sizeof(script), "%s/scripts/check-bpf-compat.sh", srcdir());
	run_cmd((char *[]){ script, obj, "5.15", NULL }, 30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.out, "loads on Linux 5.15"));
	run_result_free(&r);
	run_cmd((char *[]){ script, obj, "5.14", NULL }, 30, 0, &r);
	ck_assert_int_ne(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "call 175: a helper of Linux 5.15, not of 5.14"));
	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

Suite *bpf_compat_suite(void)
{
	Suite *s = suite_create("bpf-compat");
	TCase *tc = tcase_create("object");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, our_programs_pass, 0, sizeof(our_objs) / sizeof(our_objs[0]));
	tcase_add_test(tc, tracepoint_programs_with_4_9_helpers_pass);
	tcase_add_test(tc, objects_are_held_to_the_kernel_they_name);
	tcase_add_loop_test(tc, programs_4_9_cannot_load_fail_the_check, 0,
			    sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, tc);
	return s;
}
