// SPDX-License-Identifier: GPL-2.0
/*
 * The first image of a process that execs another program which takes
 * this one's name (tests/workloads/execsecond.c): it spins in first_spin
 * for MS milliseconds, then execs SECOND with its own comm and MS.
 * Run it under `setarch -R` so that both images sit at the same addresses.
 * Usage: execfirst MS SECOND
 */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void first_spin(double ms)
{
	for (double end = now_ms() + ms; now_ms() < end;)
		sink++;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	first_spin(atof(argv[1]));
	execl(argv[2], argv[2], "execfirst", argv[1], (char *)NULL);
	return 1;
}
