// SPDX-License-Identifier: GPL-2.0
/*
 * A process that execs itself: it spins in spin_before_exec for the given
 * milliseconds, then execs its own binary (same comm, a new image at
 * another base under ASLR), which spins in spin_after_exec as long.
 * Usage: reexec MS [after]
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void spin_before_exec(double ms)
{
	for (double end = now_ms() + ms; now_ms() < end;)
		sink++;
}

__attribute__((noinline)) static void spin_after_exec(double ms)
{
	for (double end = now_ms() + ms; now_ms() < end;)
		sink += 2;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 500;

	if (argc > 2 && !strcmp(argv[2], "after")) {
		spin_after_exec(ms);
		return 0;
	}
	spin_before_exec(ms);
	execl("/proc/self/exe", argv[0], argv[1], "after", (char *)NULL);
	return 1;
}
