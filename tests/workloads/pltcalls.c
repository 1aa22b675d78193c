// SPDX-License-Identifier: GPL-2.0
/*
 * Calls into libc through PLT stubs, where programs spend real time:
 * lazily bound stubs, __cxa_finalize's stub in .plt.got, and an IFUNC of
 * its own called through an IRELATIVE stub. The tests also build it with
 * IBT stubs (.plt.sec). Usage: pltcalls [seconds]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static long add_generic(long a, long b)
{
	return a + b;
}

__attribute__((used)) static long (*resolve_add(void))(long, long)
{
	return add_generic;
}

long plt_add(long a, long b) __attribute__((ifunc("resolve_add")));

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 0.0);
	volatile long sink = 0;
	long values[64];
	char buf[256];

	do {
		memset(buf, 'a', sizeof(buf) - 1);
		buf[sizeof(buf) - 1] = '\0';
		for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++)
			values[i] = (long)(i * 7919 % 64);
		qsort(values, sizeof(values) / sizeof(values[0]), sizeof(values[0]), cmp_long);
		snprintf(buf, sizeof(buf), "%ld", values[3]);
		sink = plt_add(sink, (long)strlen(buf) + getpid() + memcmp(buf, "x", 1));
	} while (now() < end);
	return 0;
}
