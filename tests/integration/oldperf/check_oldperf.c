// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend where the kernel is old: what can be made to look like
 * an old kernel on this one is (deny_syscall perf_cloexec: EINVAL for
 * PERF_FLAG_FD_CLOEXEC, as before 3.14); the real 3.10 and 4.4 kernels are
 * the kernel matrix's (tests/kernels).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/tests.h"

static struct run_result r;

static const char *offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}

static void teardown(void)
{
	run_result_free(&r);
}

/* What the blocking workload measured for comm ("offcpu tid= comm=C us=N" lines). */
static unsigned long long truth_us(const char *out, const char *comm)
{
	char key[64];
	const char *p;

	snprintf(key, sizeof(key), " comm=%s us=", comm);
	p = strstr(out, key);
	ck_assert_msg(p, "the workload printed nothing for %s:\n%.500s", comm, out);
	return strtoull(p + strlen(key), NULL, 10);
}

static void assert_within_pct(unsigned long long got, unsigned long long want, double pct)
{
	double diff = got > want ? got - want : want - got;

	ck_assert_msg(want > 0 && diff <= want * pct / 100.0,
		      "reported %llu, the workload measured %llu\nstderr: %.400s", got, want, r.err);
}

START_TEST(profile_without_the_cloexec_flag)
{
	run_cmd((char *[]){ (char *)workload("deny_syscall"), "perf_cloexec",
			    (char *)profile_bin(), "-v", "--backend", "perf", "-F", "499", "-f", "--",
			    (char *)workload("ratio31"), "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.400s", r.exit_code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "perf: this kernel lacks PERF_FLAG_FD_CLOEXEC (3.14"));
	/* Nothing newer than the flag was dropped for it: mmap2 (3.16) is kept here. */
	ck_assert_ptr_null(strstr(r.err, "lacks mmap2"));
	/* 1 s at 499 Hz; this host is shared, so well below the 499 a free CPU gives. */
	ck_assert_uint_gt(folded_count(r.out, "hot_loop") + folded_count(r.out, "warm_loop"), 20);
}
END_TEST

START_TEST(offcputime_without_the_cloexec_flag)
{
	run_cmd((char *[]){ (char *)workload("deny_syscall"), "perf_cloexec",
			    (char *)offcputime_bin(), "--backend", "perf", "-f", "--",
			    (char *)workload("blocking"), "sleep", "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.400s", r.exit_code, r.err);
	assert_within_pct(folded_count_prefix(r.out, "blk-sleep;"), truth_us(r.out, "blk-sleep"), 5);
}
END_TEST

Suite *oldperf_suite(void)
{
	Suite *s = suite_create("oldperf");
	TCase *tc = tcase_create("cloexec");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, profile_without_the_cloexec_flag);
	tcase_add_test(tc, offcputime_without_the_cloexec_flag);
	suite_add_tcase(s, tc);
	return s;
}
