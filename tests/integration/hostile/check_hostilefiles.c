// SPDX-License-Identifier: GPL-2.0
/*
 * Files a user leaves for a root profiler to read (issue 20): the hostilelf
 * workload writes an ELF file, maps it and runs its code, and the profile
 * of it must cost what the profile of a harmless file of the same size
 * costs. Peak RSS is the profiler's (and its command's), from wait4.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/tests.h"

struct run_cost {
	int status;
	long rss_kb;
	double seconds;
};

/* Runs argv with its output thrown away, killed after timeout_s. */
static struct run_cost run_measured(char *const argv[], unsigned int timeout_s)
{
	struct run_cost c = { -1, -1, -1 };
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "w", stdout))
			_exit(127);
		alarm(timeout_s);
		execv(argv[0], argv);
		_exit(127);
	}
	ck_assert_int_eq(wait4(pid, &status, 0, &ru), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	c.status = status;
	c.rss_kb = ru.ru_maxrss;
	c.seconds = t1.tv_sec - t0.tv_sec + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	return c;
}

static struct run_cost profile_of(const char *backend, const char *mode, const char *format,
				  bool inline_frames)
{
	char path[128], out[160];
	char *argv[16];
	int n = 0;
	struct run_cost c;

	snprintf(path, sizeof(path), "/tmp/profile-hostilefiles-%s-%d.elf", mode, (int)getpid());
	snprintf(out, sizeof(out), "/tmp/profile-hostilefiles-%s-%d.out", mode, (int)getpid());
	argv[n++] = (char *)profile_bin();
	argv[n++] = "--backend";
	argv[n++] = (char *)backend;
	argv[n++] = "-F";
	argv[n++] = "199";
	argv[n++] = "--format";
	argv[n++] = (char *)format;
	argv[n++] = "--output";
	argv[n++] = out;
	if (inline_frames)
		argv[n++] = "--inline";
	argv[n++] = "--";
	argv[n++] = (char *)workload("hostilelf");
	argv[n++] = (char *)mode;
	argv[n++] = path;
	argv[n++] = "2";
	argv[n] = NULL;
	c = run_measured(argv, 120);
	unlink(path);
	unlink(out);
	ck_assert_msg(WIFEXITED(c.status) && !WEXITSTATUS(c.status), "%s %s: status %#x", backend,
		      mode, c.status);
	return c;
}

/*
 * 8192 symbols naming suffixes of one 128 KiB string (0.45 MB of ELF):
 * 1 GB and 11 s (perf), 1 GB (bpf), where plain names take 12 MB and 2 s.
 */
START_TEST(symbols_naming_one_long_string)
{
	const char *be = test_backends[_i];
	struct run_cost p = profile_of(be, "plain", "folded", false);
	struct run_cost h = profile_of(be, "names", "folded", false);

	ck_assert_msg(h.rss_kb < 2 * p.rss_kb + 32768, "%s: hostile names %ld KB, plain %ld KB", be,
		      h.rss_kb, p.rss_kb);
	ck_assert_msg(h.seconds < 2 * p.seconds + 2, "%s: hostile names %.1f s, plain %.1f s", be,
		      h.seconds, p.seconds);
}
END_TEST

/*
 * 2.5 MB of ELF whose compressed .debug_info inflates to 2 GiB, profiled to
 * pprof with --inline: 4.2 GB and 72 s, against 32 MB and 2.5 s for one
 * of the same size inflating to 8 MiB.
 */
START_TEST(compressed_dwarf_that_inflates_to_gigabytes)
{
	const char *be = test_backends[_i];
	struct run_cost p = profile_of(be, "debug", "pprof", true);
	struct run_cost h = profile_of(be, "zdebug", "pprof", true);

	ck_assert_msg(h.rss_kb < 2 * p.rss_kb + 32768, "%s: 2 GiB of DWARF %ld KB, 8 MiB %ld KB",
		      be, h.rss_kb, p.rss_kb);
	ck_assert_msg(h.seconds < 2 * p.seconds + 2, "%s: 2 GiB of DWARF %.1f s, 8 MiB %.1f s", be,
		      h.seconds, p.seconds);
}
END_TEST

Suite *hostilefiles_suite(void)
{
	Suite *s = suite_create("hostilefiles");
	TCase *tc = tcase_create("hostilefiles");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, symbols_naming_one_long_string, 0, 2);
	tcase_add_loop_test(tc, compressed_dwarf_that_inflates_to_gigabytes, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
