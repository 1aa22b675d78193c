// SPDX-License-Identifier: GPL-2.0
/*
 * The second image of tests/workloads/execfirst.c: it renames itself to
 * the first image's comm (any process may take any name), then spins in
 * second_spin for MS milliseconds, code the first image never had.
 * Usage: execsecond COMM MS
 */
#include <stdlib.h>
#include <sys/prctl.h>
#include <time.h>

static volatile unsigned long sink;

static double clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) static void second_pad(void)
{
	sink += 3;
}

__attribute__((noinline)) static void second_spin(double ms)
{
	for (double end = clock_ms() + ms; clock_ms() < end;)
		sink = sink * 7 + 1;
}

int main(int argc, char **argv)
{
	if (argc < 3)
		return 2;
	prctl(PR_SET_NAME, argv[1]);
	second_pad();
	second_spin(atof(argv[2]));
	return 0;
}
