// SPDX-License-Identifier: GPL-2.0
/*
 * The reason given when perf events cannot follow a --cgroup directory,
 * from /proc/cgroups as kernels of each kind print it.
 */
#include <string.h>

#include "compat/cgroup.h"
#include "tests/support/tests.h"

#define HEAD "#subsys_name\thierarchy\tnum_cgroups\tenabled\ncpuset\t0\t1\t1\n"

static const struct {
	const char *proc_cgroups;
	enum cgroup_version version;
	int major, minor;
	const char *root_subtree;
	const char *want;
} cases[] = {
	/* 4.9 with only cgroup2 mounted: v2 has no perf_event before 4.11. */
	{ HEAD "perf_event\t0\t1\t1\n", CGROUP_V2, 4, 9, "", "from Linux 4.11, this is 4.9" },
	/* 4.19 on a hybrid host: perf_event mounted as a v1 hierarchy. */
	{ HEAD "perf_event\t3\t1\t1\n", CGROUP_V2, 4, 19, "cpu\n", "bound to a v1 hierarchy" },
	/* A v1 directory of another hierarchy while perf_event is on v2. */
	{ HEAD "perf_event\t0\t1\t1\n", CGROUP_V1, 5, 4, NULL, "use the v2 directory" },
	/* A v1 directory outside perf_event's v1 hierarchy. */
	{ HEAD "perf_event\t3\t1\t1\n", CGROUP_V1, 4, 4, NULL, "under the perf_event hierarchy" },
	{ HEAD, CGROUP_V2, 6, 1, "", "CONFIG_CGROUP_PERF" },
	{ HEAD "perf_event\t0\t1\t0\n", CGROUP_V2, 6, 1, "", "disabled" },
	{ "", CGROUP_V2, 6, 1, "", "CONFIG_CGROUP_PERF" },
	/* 4.19 and 5.4 with only cgroup2, its root's subtree_control never written. */
	{ HEAD "perf_event\t0\t1\t1\n", CGROUP_V2, 4, 19, "\n",
	  "echo +cpu > /sys/fs/cgroup/cgroup.subtree_control" },
	/* Written: the reason is elsewhere, not the subtree_control one. */
	{ HEAD "perf_event\t0\t1\t1\n", CGROUP_V2, 5, 4, "cpu\n", "not in its hierarchy" },
};

START_TEST(names_the_cause)
{
	struct cgroup_dir cg = { .path = "/sys/fs/cgroup/x", .fd = -1,
				 .version = cases[_i].version };
	char why[512];

	cgroup_dir__perf_reason(&cg, cases[_i].proc_cgroups, cases[_i].major, cases[_i].minor,
				"/sys/fs/cgroup", cases[_i].root_subtree, why, sizeof(why));
	ck_assert_msg(strstr(why, cases[_i].want) != NULL, "want '%s' in: %s", cases[_i].want,
		      why);
	ck_assert_ptr_nonnull(strstr(why, "/sys/fs/cgroup/x"));
}
END_TEST

Suite *cgroupwhy_suite(void)
{
	Suite *s = suite_create("cgroupwhy");
	TCase *tc = tcase_create("reason");

	tcase_add_loop_test(tc, names_the_cause, 0, sizeof(cases) / sizeof(cases[0]));
	suite_add_tcase(s, tc);
	return s;
}
