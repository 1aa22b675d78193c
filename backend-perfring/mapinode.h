/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The file behind a PERF_RECORD_MMAP (kernels before 3.16 have no MMAP2 and
 * so no device and inode): the unwinder and the symbolizer open binaries by
 * (dev, inode), so these are taken from /proc/PID/maps while the process
 * lives.
 */
#ifndef PERFRING_MAPINODE_H
#define PERFRING_MAPINODE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* The last /proc/PID/maps read, reused while records of the same pid come. */
struct map_inode_cache {
	pid_t pid;
	char *text;
	size_t len, cap;
};

void map_inode__init(struct map_inode_cache *c);
void map_inode__fini(struct map_inode_cache *c);
/* Forget what was read (the maps of a pid change between drains). */
void map_inode__forget(struct map_inode_cache *c);

/*
 * The dev and inode of the file mapped at start with page offset pgoff
 * (bytes) from path by pid. Returns 0, or -ENOENT when the process's maps do
 * not say it (it is gone, or it unmapped that since).
 */
int map_inode__lookup(struct map_inode_cache *c, pid_t pid, uint64_t start, uint64_t pgoff,
		      const char *path, uint64_t *dev, uint64_t *ino);

/* The same over the text of a maps file (tests). */
int map_inode__find(const char *maps, size_t len, uint64_t start, uint64_t pgoff,
		    const char *path, uint64_t *dev, uint64_t *ino);

#endif
