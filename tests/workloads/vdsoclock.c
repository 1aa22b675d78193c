// SPDX-License-Identifier: GPL-2.0
/* Calls clock_gettime in a loop for N seconds: its time is in the vdso. */
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 2;
	struct timespec start, ts;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do
		clock_gettime(CLOCK_MONOTONIC, &ts);
	while ((ts.tv_sec - start.tv_sec) + (ts.tv_nsec - start.tv_nsec) / 1e9 < seconds);
	return 0;
}
