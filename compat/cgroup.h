/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Cgroup directories named by --cgroup: opened once, without blocking on
 * whatever the path turns out to be, and classified by the filesystem that
 * holds them. The open directory is what both filters take: the perf
 * backend passes it as perf_event_open's pid (PERF_FLAG_PID_CGROUP), the
 * bpf backend stores it in a BPF_MAP_TYPE_CGROUP_ARRAY.
 */
#ifndef COMPAT_CGROUP_H
#define COMPAT_CGROUP_H

#include <stddef.h>
#include <stdint.h>

/* At most this many --cgroup directories (the BPF filter checks each, unrolled). */
#define CGROUP_MAX 16

enum cgroup_version {
	CGROUP_V1 = 1,		/* a v1 hierarchy: perf's filter needs its perf_event one */
	CGROUP_V2 = 2,		/* the unified hierarchy: both backends' filters */
};

struct cgroup_dir {
	const char *path;	/* as given */
	int fd;			/* O_RDONLY | O_DIRECTORY, close-on-exec */
	enum cgroup_version version;
	uint64_t id;		/* inode number: the cgroup id of a v2 cgroup on Linux 5.5+ */
};

/*
 * Open path as a cgroup directory. Returns 0, or -errno with a one-line
 * reason in why (missing, not a directory, not in a cgroup filesystem).
 */
int cgroup_dir__open(const char *path, struct cgroup_dir *cg, char *why, size_t len);
void cgroup_dir__close(struct cgroup_dir *cg);

/*
 * Why perf_event_open found no perf_event state for cg (ENOENT or EBADF
 * with PERF_FLAG_PID_CGROUP), from the text of /proc/cgroups, the kernel's
 * version and the v2 root's path and cgroup.subtree_control (NULL if unknown): a
 * one-line reason in why. Perf events on a v2 cgroup need Linux 4.11,
 * perf_event not bound to a v1 hierarchy (as on hybrid systemd hosts), and
 * (seen on 4.19 and 5.4) a root cgroup.subtree_control written at least
 * once: the implicit perf_event state is set up then. On v1, the directory
 * must be in perf_event's hierarchy.
 */
void cgroup_dir__perf_reason(const struct cgroup_dir *cg, const char *proc_cgroups, int major,
			     int minor, const char *root, const char *root_subtree_control,
			     char *why, size_t len);
/* The same on this system. */
void cgroup_dir__perf_why(const struct cgroup_dir *cg, char *why, size_t len);

#endif
