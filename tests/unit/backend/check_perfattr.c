// SPDX-License-Identifier: GPL-2.0
/*
 * The perf_event_open fallback ladder against a kernel that refuses
 * PERF_FLAG_FD_CLOEXEC with EINVAL, as kernels before 3.14 do: a seccomp
 * filter in the test's own (forked) process makes this kernel answer so.
 * The events are on the test process itself, user mode only: allowed up to
 * perf_event_paranoid 2 without privileges.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "compat/features.h"
#include "compat/host.h"
#include "compat/perf_event.h"
#include "tests/support/tests.h"

static void refuse_cloexec_flag(void)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_perf_event_open, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, PERF_FLAG_FD_CLOEXEC, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EINVAL),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(filter) / sizeof(filter[0]), .filter = filter };

	ck_assert_int_eq(prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), 0);
	ck_assert_int_eq(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog), 0);
}

static void self_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = 1000000;
	attr->disabled = 1;
	attr->exclude_kernel = 1;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
}

static bool cloexec_set(int fd)
{
	int flags = fcntl(fd, F_GETFD);

	return flags >= 0 && (flags & FD_CLOEXEC);
}

START_TEST(the_flag_is_kept_where_the_kernel_has_it)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd;

	self_attr(&attr);
	fd = perf_attr__open(&ladder, &attr, 0, -1);
	if (fd == -EACCES)
		return;	/* perf_event_paranoid 3 (Debian's): nothing to test here */
	ck_assert_int_ge(fd, 0);
	ck_assert(cloexec_set(fd));
	ck_assert(!ladder.dropped[PERF_ATTR_FD_CLOEXEC]);
	ck_assert(!ladder.dropped[PERF_ATTR_MMAP2]);
	ck_assert(!perf_event_cloexec_flag_missing());
	close(fd);
}
END_TEST

START_TEST(a_refused_flag_is_a_ladder_step_and_fcntl_sets_cloexec)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd;

	refuse_cloexec_flag();
	self_attr(&attr);
	fd = perf_attr__open(&ladder, &attr, 0, -1);
	if (fd == -EACCES)
		return;
	ck_assert_msg(fd >= 0, "perf_attr__open: %s", strerror(-fd));
	ck_assert(cloexec_set(fd));
	ck_assert(ladder.dropped[PERF_ATTR_FD_CLOEXEC]);
	ck_assert(perf_event_cloexec_flag_missing());
	ck_assert_ptr_nonnull(strstr(perf_attr_feature__name(PERF_ATTR_FD_CLOEXEC), "3.14"));
	/* Attributes older than the flag were never dropped. */
	ck_assert(!ladder.dropped[PERF_ATTR_EXCLUDE_CALLCHAIN]);
	ck_assert(!ladder.dropped[PERF_ATTR_SAMPLE_ID_ALL]);
	close(fd);
}
END_TEST

START_TEST(what_the_probe_learnt_spares_the_ladder_its_attrs)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd;

	refuse_cloexec_flag();
	/* The feature probe of -vv and auto says "supported" (not "missing"), and learns. */
	if (kernel_feature__state(FEAT_PERF_EVENT_OPEN) == FEATURE_NOT_PERMITTED)
		return;
	ck_assert_int_eq(kernel_feature__state(FEAT_PERF_EVENT_OPEN), FEATURE_SUPPORTED);
	ck_assert(perf_event_cloexec_flag_missing());
	self_attr(&attr);
	fd = perf_event_open_cloexec(&attr, 0, -1, -1, 0);
	ck_assert_msg(fd >= 0, "perf_event_open_cloexec: %s", strerror(-fd));
	ck_assert(cloexec_set(fd));
	close(fd);

	self_attr(&attr);
	fd = perf_attr__open(&ladder, &attr, 0, -1);
	ck_assert_int_ge(fd, 0);
	ck_assert(cloexec_set(fd));
	ck_assert(ladder.dropped[PERF_ATTR_FD_CLOEXEC]);
	/* mmap2 is 3.16: this kernel has it, and the ladder had no EINVAL to drop it for. */
	ck_assert(!ladder.dropped[PERF_ATTR_MMAP2]);
	ck_assert(attr.mmap2);
	close(fd);
}
END_TEST

/* 5.12 added attr.build_id: kept where the kernel is that new, dropped (EINVAL) before. */
START_TEST(build_id_mmap_records_where_the_kernel_has_them)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	struct utsname u;
	int major = 0, minor = 0, fd;

	ck_assert_int_eq(uname(&u), 0);
	ck_assert_int_eq(sscanf(u.release, "%d.%d", &major, &minor), 2);
	self_attr(&attr);
	attr.build_id = 1;
	fd = perf_attr__open(&ladder, &attr, 0, -1);
	if (fd == -EACCES)
		return;
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(ladder.dropped[PERF_ATTR_BUILD_ID], major < 5 || (major == 5 && minor < 12));
	ck_assert_int_eq(attr.build_id, !ladder.dropped[PERF_ATTR_BUILD_ID]);
	ck_assert(!ladder.dropped[PERF_ATTR_MMAP2]);
	close(fd);
}
END_TEST

/* The -v note for old kernels: x86-64 before 4.16 only, whatever the release's suffix. */
START_TEST(syscall_user_stacks_are_cut_on_x86_64_before_4_16)
{
	ck_assert(kernel_cuts_syscall_user_stacks("4.4.302", "x86_64"));
	ck_assert(kernel_cuts_syscall_user_stacks("3.10.0-1160.el7.x86_64", "x86_64"));
	ck_assert(kernel_cuts_syscall_user_stacks("4.15.18", "x86_64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("4.16.0", "x86_64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("4.19.325", "x86_64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("6.18.44-fc", "x86_64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("4.4.302", "aarch64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("garbage", "x86_64"));
	ck_assert(!kernel_cuts_syscall_user_stacks("", "x86_64"));
}
END_TEST

Suite *perfattr_suite(void)
{
	Suite *s = suite_create("perfattr");
	TCase *tc = tcase_create("cloexec");

	tcase_add_test(tc, the_flag_is_kept_where_the_kernel_has_it);
	tcase_add_test(tc, build_id_mmap_records_where_the_kernel_has_them);
	tcase_add_test(tc, a_refused_flag_is_a_ladder_step_and_fcntl_sets_cloexec);
	tcase_add_test(tc, what_the_probe_learnt_spares_the_ladder_its_attrs);
	suite_add_tcase(s, tc);
	tc = tcase_create("old kernels");
	tcase_add_test(tc, syscall_user_stacks_are_cut_on_x86_64_before_4_16);
	suite_add_tcase(s, tc);
	return s;
}
