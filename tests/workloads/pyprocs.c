// SPDX-License-Identifier: GPL-2.0
/*
 * A crowd of processes that map libpython, as any user can start them to
 * take a root profiler's room for Python processes (issue 46 row 3):
 * dlopen()s LIB, with "init" also runs an interpreter (Py_Initialize), with
 * "threads" runs one and gives it 4,096 thread states (PyThreadState_New:
 * states of no OS thread, as a forger would link them in, 4 MB that the
 * children share), then forks N children that pause until killed (the
 * parent too).
 *
 * Usage: pyprocs LIB dlopen|init|threads N
 * Prints "ready N" once every child has been forked.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	void *lib;
	long n;

	if (argc != 4 ||
	    (strcmp(argv[2], "dlopen") && strcmp(argv[2], "init") && strcmp(argv[2], "threads"))) {
		fprintf(stderr, "usage: pyprocs LIB dlopen|init|threads N\n");
		return 2;
	}
	n = strtol(argv[3], NULL, 10);
	lib = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
	if (!lib) {
		fprintf(stderr, "pyprocs: %s\n", dlerror());
		return 1;
	}
	if (strcmp(argv[2], "dlopen")) {
		void (*init)(void) = (void (*)(void))dlsym(lib, "Py_Initialize");
		void *(*interp)(void) = (void *(*)(void))dlsym(lib, "PyInterpreterState_Main");
		void *(*state)(void *) = (void *(*)(void *))dlsym(lib, "PyThreadState_New");

		if (!init || !interp || !state) {
			fprintf(stderr, "pyprocs: no Py_Initialize in %s\n", argv[1]);
			return 1;
		}
		init();
		for (int i = 0; !strcmp(argv[2], "threads") && i < 4096; i++)
			if (!state(interp())) {
				fprintf(stderr, "pyprocs: PyThreadState_New failed\n");
				return 1;
			}
	}
	for (long i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0) {
			perror("pyprocs: fork");
			break;
		}
		if (pid == 0) {
			/* Gone with the parent, whoever kills it. */
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() == 1)
				_exit(0);
			for (;;)
				pause();
		}
	}
	printf("ready %ld\n", n);
	fflush(stdout);
	for (;;)
		pause();
}
