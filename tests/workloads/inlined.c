// SPDX-License-Identifier: GPL-2.0
/*
 * Built with -O2 -g: the loop's work is done by always_inline helpers, so
 * their code lives inside inl_outer and only DWARF tells where each one is.
 * The tests find the lines marked INL_* in this file and expect them in
 * inline chains (inl_leaf inlined into inl_mid inlined into inl_outer).
 * Usage: inlined [SECONDS]          (default 2)
 *        inlined malloc SECONDS   malloc and free in a loop: libc's own inlined helpers
 *                                 (tcache_get, checked_request2size, ...) at the leaf
 * SECONDS are of CPU time: on a loaded machine a run takes longer and still
 * gives the tests the samples they count on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;

static inline __attribute__((always_inline)) unsigned long inl_leaf(unsigned long x)
{
	for (int i = 0; i < 64; i++)			   /* INL_LEAF_LOOP */
		x = x * 6364136223846793005UL + (x >> 29); /* INL_LEAF_BODY */
	return x;
}

static inline __attribute__((always_inline)) unsigned long inl_mid(unsigned long x)
{
	return inl_leaf(x ^ 0x9e3779b97f4a7c15UL) + 1; /* INL_MID_CALL */
}

__attribute__((noinline)) unsigned long inl_outer(unsigned long n)
{
	unsigned long acc = 0;

	for (unsigned long i = 0; i < n; i++)
		acc += inl_mid(acc + i); /* INL_OUTER_CALL */
	return acc;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Through a volatile pointer: clang may drop a malloc/free pair it sees whole. */
static char *volatile kept;

static void malloc_loop(double end)
{
	while (now() < end)
		for (int i = 0; i < 1000; i++) {
			kept = malloc(16 + (sink & 31));
			free(kept);
		}
}

int main(int argc, char **argv)
{
	double end;

	if (argc > 2 && !strcmp(argv[1], "malloc")) {
		malloc_loop(now() + atof(argv[2]));
		return 0;
	}
	end = now() + (argc > 1 ? atof(argv[1]) : 2);

	/* The argument reads sink: a call clang sees as pure must not leave the loop. */
	while (now() < end) /* INL_NOW_LOOP */
		sink += inl_outer(20000 + (sink & 1));
	printf("%lu\n", (unsigned long)sink);
	return 0;
}
