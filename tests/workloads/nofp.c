// SPDX-License-Identifier: GPL-2.0
/*
 * Built with -O2 -fomit-frame-pointer, like most production code: frame
 * pointer walks lose its callers, .eh_frame does not.
 * Usage: nofp chain SECONDS     main and a thread in nofp_a -> nofp_b -> nofp_c
 *        nofp lib SECONDS LIB   main -> nofp_call_lib -> LIB's libnofp_outer (dlopen'ed)
 *        nofp deep SECONDS [DEPTH]  main -> nofp_recurse x DEPTH (200) -> nofp_c
 *        nofp distinct SECONDS   main -> nofp_d01 -> ... -> nofp_d40 -> nofp_c: 40
 *                                 different functions, each its own return address
 *        nofp sparse SECONDS     a thread in sparse_worker -> nofp_sparse -> nofp_c,
 *                                 nofp_sparse's 12 KiB of locals never filled
 *        nofp block SECONDS [MS] main -> nofp_block_a -> nofp_block_b -> nanosleep,
 *                                 MS (10) at a time: off-CPU time whose callers only
 *                                 .eh_frame finds (libc's nanosleep keeps no frame)
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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

/* Forty functions, each calling the next: a deep stack that is no recursion. */
#define NOFP_STEP(me, next)                                 \
	__attribute__((noinline)) void me(unsigned long n) \
	{                                                  \
		next(n);                                   \
		sink++;                                    \
	}
NOFP_STEP(nofp_d40, nofp_c) NOFP_STEP(nofp_d39, nofp_d40) NOFP_STEP(nofp_d38, nofp_d39)
NOFP_STEP(nofp_d37, nofp_d38) NOFP_STEP(nofp_d36, nofp_d37) NOFP_STEP(nofp_d35, nofp_d36)
NOFP_STEP(nofp_d34, nofp_d35) NOFP_STEP(nofp_d33, nofp_d34) NOFP_STEP(nofp_d32, nofp_d33)
NOFP_STEP(nofp_d31, nofp_d32) NOFP_STEP(nofp_d30, nofp_d31) NOFP_STEP(nofp_d29, nofp_d30)
NOFP_STEP(nofp_d28, nofp_d29) NOFP_STEP(nofp_d27, nofp_d28) NOFP_STEP(nofp_d26, nofp_d27)
NOFP_STEP(nofp_d25, nofp_d26) NOFP_STEP(nofp_d24, nofp_d25) NOFP_STEP(nofp_d23, nofp_d24)
NOFP_STEP(nofp_d22, nofp_d23) NOFP_STEP(nofp_d21, nofp_d22) NOFP_STEP(nofp_d20, nofp_d21)
NOFP_STEP(nofp_d19, nofp_d20) NOFP_STEP(nofp_d18, nofp_d19) NOFP_STEP(nofp_d17, nofp_d18)
NOFP_STEP(nofp_d16, nofp_d17) NOFP_STEP(nofp_d15, nofp_d16) NOFP_STEP(nofp_d14, nofp_d15)
NOFP_STEP(nofp_d13, nofp_d14) NOFP_STEP(nofp_d12, nofp_d13) NOFP_STEP(nofp_d11, nofp_d12)
NOFP_STEP(nofp_d10, nofp_d11) NOFP_STEP(nofp_d09, nofp_d10) NOFP_STEP(nofp_d08, nofp_d09)
NOFP_STEP(nofp_d07, nofp_d08) NOFP_STEP(nofp_d06, nofp_d07) NOFP_STEP(nofp_d05, nofp_d06)
NOFP_STEP(nofp_d04, nofp_d05) NOFP_STEP(nofp_d03, nofp_d04) NOFP_STEP(nofp_d02, nofp_d03)
NOFP_STEP(nofp_d01, nofp_d02)

/*
 * 12 KiB of locals of which only the lowest bytes are written: the pages
 * between them and the return address are never touched, so that a stack
 * copy taken in the interrupt (perf's) ends at the first of them.
 */
static volatile unsigned int sparse_at;	/* 0, but not to the compiler: the buffer stays */

__attribute__((noinline)) void nofp_sparse(unsigned long n)
{
	volatile char buf[12288];

	buf[sparse_at] = 1;
	nofp_c(n);
	sink += buf[sparse_at];
}

static void *sparse_worker(void *arg)
{
	double end = now() + seconds;

	(void)arg;
	while (now() < end)
		nofp_sparse(200000);
	return NULL;
}

/*
 * sparse_worker on a stack of its own that no huge page backs (a huge page
 * would bring every page of the buffer in with the first).
 */
static int run_sparse(void)
{
	size_t size = 256 << 10;
	void *stack = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	pthread_attr_t attr;
	pthread_t t;

	if (stack == MAP_FAILED)
		return 1;
	madvise(stack, size, MADV_NOHUGEPAGE);
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack, size) ||
	    pthread_create(&t, &attr, sparse_worker, NULL))
		return 1;
	pthread_join(t, NULL);
	return 0;
}

static long block_ms = 10;

__attribute__((noinline)) void nofp_block_b(void)
{
	struct timespec ts = { block_ms / 1000, block_ms % 1000 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	sink++;
}

__attribute__((noinline)) void nofp_block_a(void)
{
	nofp_block_b();
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
	} else if (!strcmp(argv[1], "sparse")) {
		return run_sparse();
	} else if (!strcmp(argv[1], "block")) {
		if (argc > 3 && atol(argv[3]) > 0)
			block_ms = atol(argv[3]);
		while (now() < end)
			nofp_block_a();
	} else if (!strcmp(argv[1], "distinct")) {
		while (now() < end)
			nofp_d01(200000);
	} else {
		return 2;
	}
	return 0;
}
