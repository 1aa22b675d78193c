// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/cgtrack.h"

#include <bpf/bpf.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-perfring/ringset.h"
#include "compat/cgroup.h"

bool bpf_cgtrack__test_table;

/* The walk's bounds: cgroups below the given ones, and their depth. */
#define MAX_CGROUPS 65536
#define MAX_DEPTH 64

int cgtrack__mode(const struct backend_config *cfg, bool in_pidns, char *why, size_t len)
{
	const struct cgroup_dir *v1 = NULL, *table = NULL;
	char reason[512] = "", first[512] = "";

	if (!cfg->nr_cgroups || !cfg->on_cpu)
		return CGROUP_MODE_NONE;
	for (int i = 0; i < cfg->nr_cgroups; i++) {
		struct backend_config one = *cfg;
		int err;

		one.cgroups = &cfg->cgroups[i];
		one.nr_cgroups = 1;
		err = ring_set__probe_cgroups(&one, reason, sizeof(reason));
		/*
		 * ENOENT, EBADF: css_tryget_online_from_dir() found no perf_event
		 * state for it in its hierarchy, which the table can serve for v2.
		 */
		if (err && (cfg->cgroups[i].version == CGROUP_V1 ||
			    (err != -ENOENT && err != -EBADF))) {
			snprintf(why, len, "%s", reason);
			return err;
		}
		if (cfg->cgroups[i].version == CGROUP_V1)
			v1 = &cfg->cgroups[i];
		else if (!table && (err || bpf_cgtrack__test_table))
			table = &cfg->cgroups[i];
		if (err && !first[0])
			snprintf(first, sizeof(first), "%s", reason);
	}
	if (!table)
		return CGROUP_MODE_EVENTS;
	if (!first[0])
		snprintf(first, sizeof(first), "%s: the thread table, as a test asks", table->path);
	if (v1) {
		snprintf(why, len, "%s; the bpf backend's thread table that serves it takes cgroup "
			 "v2 directories only, and %s is a v1 one: give them all in v2", first,
			 v1->path);
		return -EOPNOTSUPP;
	}
	if (in_pidns) {
		snprintf(why, len, "%s; the bpf backend's thread table that serves it needs thread "
			 "ids outside the pid namespace the profiler runs in, which the cgroups' "
			 "thread lists do not show", first);
		return -EOPNOTSUPP;
	}
	snprintf(why, len, "%s", first);
	return CGROUP_MODE_TABLE;
}

struct fill {
	int members_fd;
	uint64_t added;
	uint64_t *full;
	unsigned int cgroups;
	char *why;
	size_t len;
};

static int add_tid(struct fill *f, unsigned long tid)
{
	__u32 key = (__u32)tid;
	__u8 one = 1;

	if (!tid || tid > UINT32_MAX)
		return 0;
	if (!bpf_map_update_elem(f->members_fd, &key, &one, BPF_NOEXIST)) {
		f->added++;
		return 0;
	}
	if (errno == EEXIST)
		return 0;	/* the programs saw it first */
	if (errno == E2BIG || errno == ENOMEM) {
		(*f->full)++;
		return 0;
	}
	snprintf(f->why, f->len, "bpf: --cgroup's thread table: %s", strerror(errno));
	return -errno;
}

/* Each thread of process pid (cgroup v2 lists only processes before Linux 4.14). */
static int add_process(struct fill *f, unsigned long pid)
{
	struct dirent *de;
	char path[64];
	int err = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%lu/task", pid);
	d = opendir(path);
	if (!d)
		return 0;	/* gone since the list was read */
	while (!err && (de = readdir(d)))
		if (isdigit((unsigned char)de->d_name[0]))
			err = add_tid(f, strtoul(de->d_name, NULL, 10));
	closedir(d);
	return err;
}

/* The threads of the cgroup open at dirfd: cgroup.threads (4.14+), else cgroup.procs. */
static int add_cgroup(struct fill *f, int dirfd, const char *path)
{
	int fd = openat(dirfd, "cgroup.threads", O_RDONLY | O_CLOEXEC), err = 0;
	bool threads = fd >= 0;
	char line[32];
	FILE *list;

	if (fd < 0 && errno == ENOENT)
		fd = openat(dirfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		return 0;	/* removed meanwhile */
	list = fd >= 0 ? fdopen(fd, "r") : NULL;
	if (!list) {
		err = -errno;
		snprintf(f->why, f->len, "bpf: --cgroup: reading the threads of %s: %s", path,
			 strerror(-err));
		if (fd >= 0)
			close(fd);
		return err;
	}
	while (!err && fgets(line, sizeof(line), list)) {
		unsigned long id = strtoul(line, NULL, 10);

		err = threads ? add_tid(f, id) : add_process(f, id);
	}
	fclose(list);
	return err;
}

/* The cgroup open at dirfd and every cgroup below it. */
static int walk(struct fill *f, int dirfd, const char *path, int depth)
{
	struct dirent *de;
	int err, self;
	DIR *d;

	if (++f->cgroups > MAX_CGROUPS || depth > MAX_DEPTH) {
		snprintf(f->why, f->len, "bpf: --cgroup: more than %d cgroups, or deeper than %d, "
			 "below %s", MAX_CGROUPS, MAX_DEPTH, path);
		return -E2BIG;
	}
	err = add_cgroup(f, dirfd, path);
	/* A description of its own: the walk does not move dirfd's offset. */
	self = err ? -1 : openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	d = self >= 0 ? fdopendir(self) : NULL;
	if (!d) {
		if (self >= 0)
			close(self);
		return err;
	}
	while (!err && (de = readdir(d))) {
		int sub;

		if (de->d_type != DT_DIR || !strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		sub = openat(dirfd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;	/* removed meanwhile */
		err = walk(f, sub, path, depth + 1);
		close(sub);
	}
	closedir(d);
	return err;
}

int cgtrack__fill(int members_fd, const struct backend_config *cfg, uint64_t *full, char *why,
		  size_t len)
{
	struct fill f = { .members_fd = members_fd, .full = full, .why = why, .len = len };
	int err = 0;

	*full = 0;
	for (int i = 0; i < cfg->nr_cgroups && !err; i++)
		err = walk(&f, cfg->cgroups[i].fd, cfg->cgroups[i].path, 0);
	return err ? err : (int)(f.added > INT32_MAX ? INT32_MAX : f.added);
}
