// SPDX-License-Identifier: GPL-2.0
/*
 * Built with -O2 -fomit-frame-pointer, as distributions build code, and
 * spending its time under libc's qsort: main -> nofpsort_run -> qsort
 * (libc, no frame pointers on Debian) -> nofpsort_cmp -> nofpsort_key ->
 * nofpsort_mix. A complete stack goes through libc's frames to main and
 * __libc_start_main; a frame-pointer walk cannot.
 * Usage: nofpsort SECONDS (prints pid=PID first)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define N 4096

static volatile unsigned long sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) unsigned long nofpsort_mix(unsigned long v)
{
	for (int i = 0; i < 64; i++)
		v = v * 6364136223846793005ul + 1442695040888963407ul;
	sink += v;
	return v;
}

__attribute__((noinline)) unsigned long nofpsort_key(const unsigned long *p)
{
	return nofpsort_mix(*p) >> 1;
}

__attribute__((noinline)) int nofpsort_cmp(const void *a, const void *b)
{
	unsigned long x = nofpsort_key(a), y = nofpsort_key(b);

	return x < y ? -1 : x > y;
}

__attribute__((noinline)) void nofpsort_run(unsigned long *v, size_t n, unsigned long seed)
{
	for (size_t i = 0; i < n; i++)
		v[i] = seed = seed * 2862933555777941757ul + 3037000493ul;
	qsort(v, n, sizeof(*v), nofpsort_cmp);
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 2);
	unsigned long *v = malloc(N * sizeof(*v)), seed = 1;

	if (!v)
		return 1;
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	while (now() < end)
		nofpsort_run(v, N, seed++);
	free(v);
	return (int)(sink & 0);
}
