// SPDX-License-Identifier: GPL-2.0
/*
 * Many distinct call paths, for report-latency benchmarks: path p in
 * [0, N) calls level functions f0..f9 chosen by p's decimal digits, then
 * spins briefly in leaf. Two threads walk all paths round-robin.
 * Usage: manystacks N seconds
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static unsigned int paths = 100, levels = 2;
static double seconds = 5;

static void step(unsigned int level, unsigned int path);

__attribute__((noinline)) static void leaf(void)
{
	for (int i = 0; i < 200; i++)
		sink = sink * 31 + i;
}

#define LEVEL_FN(i)                                                                        \
	__attribute__((noinline)) static void f##i(unsigned int level, unsigned int path)  \
	{                                                                                  \
		step(level, path);                                                         \
	}
LEVEL_FN(0) LEVEL_FN(1) LEVEL_FN(2) LEVEL_FN(3) LEVEL_FN(4)
LEVEL_FN(5) LEVEL_FN(6) LEVEL_FN(7) LEVEL_FN(8) LEVEL_FN(9)

static void (*const table[10])(unsigned int, unsigned int) = { f0, f1, f2, f3, f4,
								f5, f6, f7, f8, f9 };

__attribute__((noinline)) static void step(unsigned int level, unsigned int path)
{
	if (level == 0) {
		leaf();
		return;
	}
	table[path % 10](level - 1, path / 10);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *walker(void *arg)
{
	unsigned int p = (unsigned int)(unsigned long)arg;
	double end = now() + seconds;

	while (now() < end)
		for (int i = 0; i < 1000; i++, p = (p + 1) % paths)
			step(levels, p);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		paths = (unsigned int)atoi(argv[1]);
	if (argc > 2)
		seconds = atof(argv[2]);
	for (levels = 1; levels < 9; levels++) {
		unsigned long cap = 1;

		for (unsigned int i = 0; i < levels; i++)
			cap *= 10;
		if (cap >= paths)
			break;
	}
	for (unsigned long i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, walker, (void *)(i * paths / 2));
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return 0;
}
