// SPDX-License-Identifier: GPL-2.0
/*
 * N threads that burn CPU for S seconds in a few call paths, the load for
 * benchmarks. Usage: busy N seconds
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 5;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void burn_a(void)
{
	for (int i = 0; i < 20000; i++)
		sink = sink * 31 + i;
}

__attribute__((noinline)) static void burn_b(void)
{
	for (int i = 0; i < 20000; i++)
		sink = sink * 37 + i;
}

__attribute__((noinline)) static void work(unsigned long id)
{
	if (id % 2)
		burn_a();
	else
		burn_b();
}

static void *thread_main(void *arg)
{
	double end = now() + seconds;

	while (now() < end)
		work((unsigned long)arg);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2;
	pthread_t *t;

	if (argc > 2)
		seconds = atof(argv[2]);
	if (n < 1)
		n = 1;
	t = calloc(n, sizeof(*t));
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, thread_main, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}
