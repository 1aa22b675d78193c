// SPDX-License-Identifier: GPL-2.0
/*
 * A storm of short processes: the parent runs N children one after the
 * other, each exec'ing this binary to spin in short_lived_spin for MS
 * milliseconds and exit. Their maps exist only while they run.
 * Usage: shortlived [count] [ms]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void short_lived_spin(double ms)
{
	double end = now() + ms / 1000;

	while (now() < end)
		for (int i = 0; i < 10000; i++)
			sink = sink * 31 + i;
}

int main(int argc, char **argv)
{
	int count = argc > 1 ? atoi(argv[1]) : 20;
	const char *ms = argc > 2 ? argv[2] : "50";

	if (argc > 3 && !strcmp(argv[3], "child")) {
		short_lived_spin(atof(ms));
		return 0;
	}
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 1;
	self[n] = '\0';	/* exec by its real name, so that comm stays "shortlived" */
	for (int i = 0; i < count; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			execl(self, argv[0], "1", ms, "child", (char *)NULL);
			_exit(127);
		}
		if (pid < 0 || waitpid(pid, NULL, 0) < 0)
			return 1;
	}
	return 0;
}
