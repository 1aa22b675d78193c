// SPDX-License-Identifier: GPL-2.0
/*
 * The bundled demo: two threads burn CPU in different call paths for N
 * seconds (default 3), one of them also in the kernel (read of /dev/zero).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile unsigned long sink;
static double seconds = 3;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void compute_hash(void)
{
	for (unsigned long i = 0; i < 100000; i++)
		sink = sink * 31 + i;
}

__attribute__((noinline)) static void parse_input(void)
{
	compute_hash();
}

__attribute__((noinline)) static void read_zero(int fd)
{
	static char buf[65536];

	if (read(fd, buf, sizeof(buf)) < 0)
		exit(1);
}

static void *io_worker(void *arg)
{
	int fd = open("/dev/zero", O_RDONLY);
	double end = now() + seconds;

	(void)arg;
	while (now() < end) {
		read_zero(fd);
		parse_input();
	}
	close(fd);
	return NULL;
}

static void *cpu_worker(void *arg)
{
	double end = now() + seconds;

	(void)arg;
	while (now() < end)
		compute_hash();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;

	if (argc > 1)
		seconds = atof(argv[1]);
	pthread_create(&a, NULL, cpu_worker, NULL);
	pthread_create(&b, NULL, io_worker, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
