// SPDX-License-Identifier: GPL-2.0
/*
 * A recursion deeper than any stack budget (frame pointers kept), ending
 * in user code or in the kernel, for the [truncated] marker's tests.
 *
 * Usage: deep spin|kernel|sleep SECONDS [DEPTH]
 *
 *   spin    deep_recurse x DEPTH -> deep_spin: on-CPU in user mode
 *   kernel  deep_recurse x DEPTH -> deep_read: reads /dev/zero, so that
 *           most on-CPU samples are taken in the kernel (clearing the
 *           buffer), with kernel frames before the user ones
 *   sleep   deep_recurse x DEPTH -> deep_sleep: nanosleeps of 1 ms, off-CPU
 *
 * DEPTH defaults to 300, more than the 127 frames a stack may have.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double seconds;
static char buf[1 << 20];
volatile unsigned long deep_sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void deep_spin(void)
{
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 100000; i++)
			deep_sink += i;
}

__attribute__((noinline)) static void deep_read(void)
{
	int fd = open("/dev/zero", O_RDONLY);
	double end = now() + seconds;

	if (fd < 0) {
		perror("deep: /dev/zero");
		exit(1);
	}
	while (now() < end)
		if (read(fd, buf, sizeof(buf)) < 0) {
			perror("deep: read");
			exit(1);
		}
	close(fd);
}

__attribute__((noinline)) static void deep_sleep(void)
{
	struct timespec ts = { 0, 1000000 };
	double end = now() + seconds;

	while (now() < end)
		nanosleep(&ts, NULL);
}

/* Not a tail call (the workloads are built with -fno-optimize-sibling-calls). */
__attribute__((noinline)) void deep_recurse(int depth, void (*leaf)(void))
{
	if (depth > 1)
		deep_recurse(depth - 1, leaf);
	else
		leaf();
	__asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv)
{
	void (*leaf)(void) = NULL;

	if (argc < 3 || argc > 4 || (seconds = atof(argv[2])) <= 0) {
		fprintf(stderr, "usage: deep spin|kernel|sleep SECONDS [DEPTH]\n");
		return 2;
	}
	if (!strcmp(argv[1], "spin"))
		leaf = deep_spin;
	else if (!strcmp(argv[1], "kernel"))
		leaf = deep_read;
	else if (!strcmp(argv[1], "sleep"))
		leaf = deep_sleep;
	if (!leaf) {
		fprintf(stderr, "usage: deep spin|kernel|sleep SECONDS [DEPTH]\n");
		return 2;
	}
	deep_recurse(argc > 3 ? atoi(argv[3]) : 300, leaf);
	return 0;
}
