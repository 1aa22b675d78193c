// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend's rings within the locked memory of an unprivileged user
 * with a 64 KiB ulimit -l (RHEL 7's and Ubuntu 16.04's default): uid 65534
 * through setpriv and prlimit, at perf_event_paranoid 1 and 2. Before the
 * ring sets were planned together, --wall failed here: the on-CPU rings
 * took the whole budget and the off-CPU ones could not be mapped.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/host.h"
#include "tests/support/tests.h"

#define LIMITED "/usr/bin/prlimit", "--memlock=65536", "--", "/usr/bin/setpriv", \
	"--reuid=65534", "--regid=65534", "--clear-groups"

static struct run_result r;
static int saved_paranoid = -1;
static char saved_mlock[32];

static void write_sysctl(const char *path, const char *value)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(value, f);
	ck_assert_int_eq(fclose(f), 0);
}

/* In the runner itself, once: a failed test's own teardown would never run. */
static void save_sysctls(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_mlock_kb", "r");

	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(fgets(saved_mlock, sizeof(saved_mlock), f));
	fclose(f);
	saved_paranoid = perf_event_paranoid();
}

static void restore_sysctls(void)
{
	char buf[16];

	write_sysctl("/proc/sys/kernel/perf_event_mlock_kb", saved_mlock);
	snprintf(buf, sizeof(buf), "%d\n", saved_paranoid);
	write_sysctl("/proc/sys/kernel/perf_event_paranoid", buf);
}

static void teardown(void)
{
	run_result_free(&r);
	restore_sysctls();
}

static void set_paranoid(int level)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%d\n", level);
	write_sysctl("/proc/sys/kernel/perf_event_paranoid", buf);
}

static const char *offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}

/* What the blocking workload measured for blk-sleep, and what the profile says. */
static void assert_sleep_time(void)
{
	const char *p = strstr(r.out, " comm=blk-sleep us=");
	unsigned long long want, got = folded_count_prefix(r.out, "blk-sleep;");
	double diff;

	ck_assert_msg(p, "the workload printed nothing:\n%.400s", r.out);
	want = strtoull(p + strlen(" comm=blk-sleep us="), NULL, 10);
	diff = got > want ? got - want : want - got;
	ck_assert_msg(diff <= want * 0.05, "blk-sleep: reported %llu us, measured %llu\n%.400s", got,
		      want, r.err);
}

/* _i: paranoid 1 or 2 (bit 0), frame pointers or dwarf (bit 1). */
#define PARANOID(i) (1 + ((i) & 1))
#define UNWIND(i) ((i) & 2 ? "dwarf" : "fp")

START_TEST(wall_fits_both_ring_sets)
{
	set_paranoid(PARANOID(_i));
	run_cmd((char *[]){ LIMITED, (char *)profile_bin(), "-v", "--backend", "perf", "--wall",
			    "--unwind", (char *)UNWIND(_i), "-f", "--",
			    (char *)workload("blocking"), "sleep", "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.400s", r.exit_code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "perf: locked memory for perf rings: "));
	ck_assert_ptr_nonnull(strstr(r.err, "perf: perf rings: "));
	ck_assert_ptr_nonnull(strstr(r.err, "perf: off-CPU rings: "));
	/* Planned to fit: no ring had to be shrunk after the kernel refused it. */
	ck_assert_ptr_null(strstr(r.err, "refused"));
	assert_sleep_time();
}
END_TEST

START_TEST(offcputime_fits)
{
	set_paranoid(PARANOID(_i));
	run_cmd((char *[]){ LIMITED, (char *)offcputime_bin(), "--backend", "perf", "-f", "--",
			    (char *)workload("blocking"), "sleep", "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.400s", r.exit_code, r.err);
	assert_sleep_time();
}
END_TEST

START_TEST(profile_fits)
{
	set_paranoid(PARANOID(_i));
	run_cmd((char *[]){ LIMITED, (char *)profile_bin(), "--backend", "perf", "-F", "499",
			    "--unwind", (char *)UNWIND(_i), "-f", "--", (char *)workload("ratio31"),
			    "1", NULL },
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.400s", r.exit_code, r.err);
	ck_assert_uint_gt(folded_count(r.out, "hot_loop"), 50);
	/* 16 KiB stack copies fill 128 pages in 60 ms: a loaded host may lose some. */
	if (!(_i & 2))
		ck_assert_ptr_null(strstr(r.err, "lost"));
}
END_TEST

START_TEST(too_little_locked_memory_is_refused_with_the_numbers)
{
	write_sysctl("/proc/sys/kernel/perf_event_mlock_kb", "8\n");
	set_paranoid(1);
	run_cmd((char *[]){ "/usr/bin/prlimit", "--memlock=0", "--", "/usr/bin/setpriv",
			    "--reuid=65534", "--regid=65534", "--clear-groups",
			    (char *)profile_bin(), "--backend", "perf", "--wall", "-f", "--",
			    (char *)workload("blocking"), "sleep", "1", NULL },
		30, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_msg(strstr(r.err, "locked memory: the smallest rings need "), "%s", r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "(kernel.perf_event_mlock_kb 8 per CPU + ulimit -l 0 "
					    "KiB)"));
	ck_assert_uint_eq(count_lines_with(r.err, "profile:"), 1);
}
END_TEST

Suite *memlock_suite(void)
{
	Suite *s = suite_create("memlock");
	TCase *tc = tcase_create("unprivileged");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, save_sysctls, restore_sysctls);
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_loop_test(tc, wall_fits_both_ring_sets, 0, 4);
	tcase_add_loop_test(tc, offcputime_fits, 0, 2);
	tcase_add_loop_test(tc, profile_fits, 0, 4);
	tcase_add_test(tc, too_little_locked_memory_is_refused_with_the_numbers);
	suite_add_tcase(s, tc);
	return s;
}
