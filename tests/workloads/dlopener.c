// SPDX-License-Identifier: GPL-2.0
/*
 * Loads a library with dlopen after start (so no /proc maps read at start
 * can know it) and runs its libspin_hot for N seconds.
 * Usage: dlopener LIBRARY.so [seconds]
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

int main(int argc, char **argv)
{
	void (*hot)(void);
	double end;
	void *lib;

	if (argc < 2)
		return 2;
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
