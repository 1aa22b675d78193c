// SPDX-License-Identifier: GPL-2.0
/*
 * Built with -O2 -fomit-frame-pointer, like most production code: frame
 * pointer walks lose its callers, .eh_frame does not.
 * Usage: nofp chain SECONDS     main and a thread in nofp_a -> nofp_b -> nofp_c
 *        nofp lib SECONDS LIB   main -> nofp_call_lib -> LIB's libnofp_outer (dlopen'ed)
 *        nofp deep SECONDS [DEPTH]  main -> nofp_recurse x DEPTH (200) -> nofp_c
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static double seconds = 2;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void nofp_c(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink = sink * 33 + i;
}

__attribute__((noinline)) void nofp_b(unsigned long n)
{
	nofp_c(n);
	sink++;
}

__attribute__((noinline)) void nofp_a(unsigned long n)
{
	nofp_b(n);
	sink++;
}

static void *worker(void *arg)
{
	double end = now() + seconds;

	(void)arg;
	while (now() < end)
		nofp_a(200000);
	return NULL;
}

__attribute__((noinline)) void nofp_recurse(int depth)
{
	if (depth > 1)
		nofp_recurse(depth - 1);
	else
		nofp_c(200000);
	sink++;
}

__attribute__((noinline)) void nofp_call_lib(void (*fn)(unsigned long))
{
	fn(200000);
	sink++;
}

int main(int argc, char **argv)
{
	double end;

	if (argc < 3)
		return 2;
	seconds = atof(argv[2]);
	end = now() + seconds;
	if (!strcmp(argv[1], "chain")) {
		pthread_t t;

		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
		while (now() < end)
			nofp_a(200000);
		pthread_join(t, NULL);
	} else if (!strcmp(argv[1], "lib") && argc > 3) {
		void *lib = dlopen(argv[3], RTLD_NOW);
		void (*fn)(unsigned long);

		if (!lib) {
			fprintf(stderr, "nofp: %s\n", dlerror());
			return 1;
		}
		fn = (void (*)(unsigned long))dlsym(lib, "libnofp_outer");
		if (!fn)
			return 1;
		while (now() < end)
			nofp_call_lib(fn);
	} else if (!strcmp(argv[1], "deep")) {
		int depth = argc > 3 ? atoi(argv[3]) : 200;

		while (now() < end)
			nofp_recurse(depth > 0 ? depth : 200);
	} else {
		return 2;
	}
	return 0;
}
