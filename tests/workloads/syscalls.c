// SPDX-License-Identifier: GPL-2.0
/*
 * Spends most of its time in the kernel: reads /dev/zero in a loop from
 * read_loop for N seconds (default 3).
 */
#include <fcntl.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static char buf[1 << 20];

__attribute__((noinline)) static void read_loop(int fd, double seconds)
{
	struct timespec start, now;

	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		if (read(fd, buf, sizeof(buf)) < 0)
			exit(1);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < seconds);
}

int main(int argc, char **argv)
{
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return 1;
	read_loop(fd, argc > 1 ? atof(argv[1]) : 3);
	return 0;
}
