// SPDX-License-Identifier: GPL-2.0
/*
 * Maps N files once each, one over the other at one address, each under
 * its own path of about 3.8 KB (hard links to one page in a deep directory
 * below DIR, made and removed one by one): a profiler that keeps every
 * path it was told of holds N of them after this process is gone (issue 32:
 * the path pool was never pruned). SHORT: 16-byte names in DIR instead, the
 * same work with no weight. Prints "mapped N" and exits.
 * Usage: manypaths N DIR [short]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEVELS 14	/* directories of 250 bytes: 3.5 KB, and a file name of 250 */
#define NAME_LEN 250

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, page = sysconf(_SC_PAGESIZE), done = 0;
	const char *dir = argc > 2 ? argv[2] : "/tmp";
	int levels = argc > 3 ? 0 : LEVELS, len = argc > 3 ? 16 : NAME_LEN;
	char name[NAME_LEN + 1];
	void *at;
	int dfd, fd;

	dfd = open(dir, O_RDONLY | O_DIRECTORY);
	for (int i = 0; i < levels && dfd >= 0; i++) {
		int next;

		memset(name, 'd', NAME_LEN);
		name[NAME_LEN] = '\0';
		if (mkdirat(dfd, name, 0755) && errno != EEXIST)
			break;
		next = openat(dfd, name, O_RDONLY | O_DIRECTORY);
		close(dfd);
		dfd = next;
	}
	fd = dfd >= 0 ? openat(dfd, "page", O_RDWR | O_CREAT | O_TRUNC, 0600) : -1;
	if (fd < 0 || ftruncate(fd, page)) {
		perror("manypaths: set-up");
		return 1;
	}
	close(fd);
	at = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (at == MAP_FAILED)
		return 1;
	for (long i = 0; i < n; i++) {
		/* The number first: names differ early, as the pool hashes them whole. */
		snprintf(name, sizeof(name), "%010ld", i);
		memset(name + 10, 'f', (size_t)len - 10);
		name[len] = '\0';
		if (linkat(dfd, "page", dfd, name, 0))
			break;
		fd = openat(dfd, name, O_RDONLY);
		if (fd >= 0 && mmap(at, (size_t)page, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED,
				    fd, 0) != MAP_FAILED)
			done++;
		if (fd >= 0)
			close(fd);
		unlinkat(dfd, name, 0);
	}
	unlinkat(dfd, "page", 0);
	printf("mapped %ld\n", done);
	return done == n ? 0 : 1;
}
