// SPDX-License-Identifier: GPL-2.0
/*
 * The build's Linux 4.9 check (scripts/check-bpf-compat.sh) passes our
 * program and fails programs that use what 4.9 lacks, each for its reason.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/tests.h"

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

/* Compile a BPF snippet and run the check on it; returns the check's output. */
static int check_snippet(const char *body, struct run_result *r)
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
		 "clang -g -O2 -target bpf -I/usr/include/$(gcc -print-multiarch) -c %s -o %s", src,
		 obj);
	ck_assert_int_eq(system(cmd), 0);
	snprintf(script, sizeof(script), "%s/scripts/check-bpf-compat.sh", srcdir());
	run_cmd((char *[]){ script, obj, NULL }, 30, 0, r);
	rc = r->exit_code;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	return rc;
}

START_TEST(our_program_passes)
{
	char script[512];
	const char *obj = getenv("PROFILE_BPF_OBJ");
	struct run_result r;

	ck_assert_ptr_nonnull(obj);
	snprintf(script, sizeof(script), "%s/scripts/check-bpf-compat.sh", srcdir());
	run_cmd((char *[]){ script, (char *)obj, NULL }, 30, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "loads on Linux 4.9"));
	run_result_free(&r);
}
END_TEST

static const struct {
	const char *body;
	const char *reason;
} bad[] = {
	{ "int g = 1;\nSEC(\"perf_event\") int p(void *c) { return g; }",
	  "global variables need Linux 5.2" },
	{ "SEC(\"perf_event\") int p(void *c) { volatile int x = 0; int n = "
	  "bpf_get_smp_processor_id();\n#pragma nounroll\nfor (int i = 0; i < n && i < 64; i++) x += i; "
	  "return x; }",
	  "loops need Linux 5.3" },
	{ "SEC(\"perf_event\") int p(void *c) { __u64 v = 0; return __sync_fetch_and_add(&v, 1); }",
	  "atomic with a return value" },
	{ "SEC(\"perf_event\") int p(void *c) { return bpf_get_current_task_btf() != 0; }",
	  "not a helper of the Linux 4.9 set" },
	{ "SEC(\"kprobe/x\") int p(void *c) { return 0; }", "only 'perf_event' programs" },
};

START_TEST(programs_4_9_cannot_load_fail_the_check)
{
	struct run_result r;

	ck_assert_int_ne(check_snippet(bad[_i].body, &r), 0);
	ck_assert_msg(strstr(r.err, bad[_i].reason), "want '%s', got: %.300s", bad[_i].reason,
		      r.err);
	run_result_free(&r);
}
END_TEST

Suite *bpf_compat_suite(void)
{
	Suite *s = suite_create("bpf-compat");
	TCase *tc = tcase_create("object");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, our_program_passes);
	tcase_add_loop_test(tc, programs_4_9_cannot_load_fail_the_check, 0,
			    sizeof(bad) / sizeof(bad[0]));
	suite_add_tcase(s, tc);
	return s;
}
