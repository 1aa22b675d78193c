// SPDX-License-Identifier: GPL-2.0
/*
 * A process with N executable mappings of long-named files, then, with
 * FORKS, that many children that sleep: the set-up and memory load of a
 * process a user may craft (issue 20). Each mapping is one page of one of
 * a few files, with a gap after it so that the kernel cannot merge them.
 * Prints "ready" when mapped, then sleeps for SECONDS.
 * Usage: manymaps N SECONDS [FORKS] [DIR]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_FILES 8

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, page = sysconf(_SC_PAGESIZE);
	double seconds = argc > 2 ? atof(argv[2]) : 10;
	int forks = argc > 3 ? atoi(argv[3]) : 0, fds[NR_FILES];
	const char *dir = argc > 4 ? argv[4] : "/tmp";
	char path[4096], *base;

	for (int i = 0; i < NR_FILES; i++) {
		/* Long names: what each mapping costs a tracker that copies them. */
		snprintf(path, sizeof(path), "%s/manymaps-%d-%0200d", dir, (int)getpid(), i);
		fds[i] = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fds[i] < 0 || ftruncate(fds[i], page * 64)) {
			perror(path);
			return 1;
		}
		unlink(path);
	}
	base = mmap(NULL, (size_t)(2 * n + 2) * page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (long i = 0; i < n; i++)
		if (mmap(base + (2 * i + 1) * page, page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
			 fds[i % NR_FILES], (i % 64) * page) == MAP_FAILED) {
			fprintf(stderr, "manymaps: %ld mappings: %s\n", i, strerror(errno));
			break;
		}
	for (int i = 0; i < forks; i++)
		if (fork() == 0) {
			usleep((useconds_t)(seconds * 1e6));
			_exit(0);
		}
	printf("ready\n");
	fflush(stdout);
	usleep((useconds_t)(seconds * 1e6));
	while (wait(NULL) > 0)
		;
	return 0;
}
