// SPDX-License-Identifier: GPL-2.0
/*
 * Burns CPU for S seconds in one process per NAME, each renamed with
 * prctl(PR_SET_NAME) to NAME's bytes: comms that are not text (U+FFFF,
 * C1 controls, bad UTF-8), as any user may give their processes.
 * Usage: renamed SECONDS HEXNAME... (e.g. "efbfbf" for U+FFFF)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void renamed_burn(double seconds)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			sink = sink * 31 + i;
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < seconds);
}

static void rename_to(const char *hex)
{
	char name[16] = "";
	size_t n = strlen(hex) / 2;

	if (n > 15)
		n = 15;
	for (size_t i = 0; i < n; i++) {
		unsigned int b;

		sscanf(hex + 2 * i, "%2x", &b);
		name[i] = (char)b;
	}
	prctl(PR_SET_NAME, name, 0, 0, 0);
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;

	for (int i = 3; i < argc; i++) {
		if (fork() == 0) {
			rename_to(argv[i]);
			renamed_burn(seconds);
			return 0;
		}
	}
	if (argc > 2)
		rename_to(argv[2]);
	renamed_burn(seconds);
	while (wait(NULL) > 0)
		;
	return 0;
}
