// SPDX-License-Identifier: GPL-2.0
#include "tests/support/measure.h"

#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/tests.h"

static long rss_now_kb(void)
{
	long pages = 0, rss = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &rss) != 2)
			rss = 0;
		fclose(f);
	}
	return rss * (sysconf(_SC_PAGESIZE) / 1024);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct cost measure(long (*fn)(const void *), const void *arg, unsigned int timeout_s)
{
	struct cost c = { -1, -1, -1 };
	int fds[2], status;
	pid_t pid;

	ck_assert_int_eq(pipe(fds), 0);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		struct rusage ru;
		struct cost r;
		long before;
		double t0;

		signal(SIGALRM, SIG_DFL);
		alarm(timeout_s);
		before = rss_now_kb();
		t0 = now();
		r.result = fn(arg);
		r.seconds = now() - t0;
		getrusage(RUSAGE_SELF, &ru);
		r.rss_kb = ru.ru_maxrss - before;
		if (write(fds[1], &r, sizeof(r)) != sizeof(r))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (read(fds[0], &c, sizeof(c)) != sizeof(c))
		c.rss_kb = -1;
	close(fds[0]);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "the reader died (status %#x)",
		      status);
	return c;
}

