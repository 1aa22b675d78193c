// SPDX-License-Identifier: GPL-2.0
/*
 * Loads a library with dlopen after start (so no /proc maps read at start
 * can know it) and runs its libspin_hot for N seconds. Before that it
 * sleeps 0.3 s, or with BEFORE spins that long in its own code (sampled:
 * the process is read before the library is mapped).
 * Usage: dlopener LIBRARY.so [seconds [BEFORE]]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static volatile unsigned long sink;

__attribute__((noinline)) static void spin_before(double seconds)
{
	double end = now() + seconds;

	while (now() < end)
		sink++;
}

int main(int argc, char **argv)
{
	void (*hot)(void);
	double end;
	void *lib;

	if (argc < 2)
		return 2;
	if (argc > 3)
		spin_before(atof(argv[3]));
	else
		usleep(300000);
	lib = dlopen(argv[1], RTLD_NOW);
	if (!lib) {
		fprintf(stderr, "dlopener: %s\n", dlerror());
		return 1;
	}
	hot = (void (*)(void))dlsym(lib, "libspin_hot");
	end = now() + (argc > 2 ? atof(argv[2]) : 2);
	while (now() < end)
		hot();
	return 0;
}
