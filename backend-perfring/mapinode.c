// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/mapinode.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* A process's maps can be long (thousands of JIT or library maps); past this, give up. */
#define MAPS_MAX (64u << 20)

void map_inode__init(struct map_inode_cache *c)
{
	memset(c, 0, sizeof(*c));
}

void map_inode__fini(struct map_inode_cache *c)
{
	free(c->text);
	c->text = NULL;
	c->len = c->cap = 0;
}

void map_inode__forget(struct map_inode_cache *c)
{
	c->pid = 0;
	c->len = 0;
}

static bool same_path(const char *line_path, size_t n, const char *path)
{
	size_t plen = strlen(path);
	static const char deleted[] = " (deleted)";

	if (n == plen)
		return !memcmp(line_path, path, n);
	return n == plen + sizeof(deleted) - 1 && !memcmp(line_path, path, plen) &&
	       !memcmp(line_path + plen, deleted, sizeof(deleted) - 1);
}

int map_inode__find(const char *maps, size_t len, uint64_t start, uint64_t pgoff,
		    const char *path, uint64_t *dev, uint64_t *ino)
{
	const char *p = maps, *end = maps + len;

	while (p < end) {
		const char *eol = memchr(p, '\n', end - p);
		char line[512];
		uint64_t s, e, off, i;
		unsigned int maj, min;
		char perms[8];
		size_t n = (eol ? eol : end) - p;
		int at = 0;

		/* The fields are short; only the path can be long, and it is compared in place. */
		memcpy(line, p, n < sizeof(line) - 1 ? n : sizeof(line) - 1);
		line[n < sizeof(line) - 1 ? n : sizeof(line) - 1] = '\0';
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n", &s,
			   &e, perms, &off, &maj, &min, &i, &at) >= 7 &&
		    at > 0 && s == start && off == pgoff && i &&
		    same_path(p + at, n - at, path)) {
			*dev = makedev(maj, min);
			*ino = i;
			return 0;
		}
		p = eol ? eol + 1 : end;
	}
	return -ENOENT;
}

static int read_maps(struct map_inode_cache *c, pid_t pid)
{
	char name[64];
	int fd;

	c->pid = 0;
	c->len = 0;
	snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
	fd = open(name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (;;) {
		ssize_t n;

		if (c->cap - c->len < 4096) {
			size_t ncap = c->cap ? c->cap * 2 : 16384;
			char *t = ncap <= MAPS_MAX ? realloc(c->text, ncap) : NULL;

			if (!t) {
				close(fd);
				return -ENOMEM;
			}
			c->text = t;
			c->cap = ncap;
		}
		n = read(fd, c->text + c->len, c->cap - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		c->len += n;
	}
	close(fd);
	c->pid = pid;
	return 0;
}

int map_inode__lookup(struct map_inode_cache *c, pid_t pid, uint64_t start, uint64_t pgoff,
		      const char *path, uint64_t *dev, uint64_t *ino)
{
	if (c->pid == pid && !map_inode__find(c->text, c->len, start, pgoff, path, dev, ino))
		return 0;
	/* Not read yet, or mapped since the last read. */
	if (!read_maps(c, pid) && !map_inode__find(c->text, c->len, start, pgoff, path, dev, ino))
		return 0;
	/*
	 * Gone (or changed) already. The file now at path may not be the one it
	 * mapped (replaced since, or another mount namespace's): better no
	 * unwinding of its frames, counted, than a wrong one.
	 */
	return -ENOENT;
}
