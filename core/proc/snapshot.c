// SPDX-License-Identifier: GPL-2.0
/*
 * Every process read from /proc: at the start (snapshot), so that those
 * that exit later still symbolize, and again after side-band records were
 * lost (resync).
 */
#include "core/proc/proctrack_internal.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int proctrack__snapshot(struct proctrack *pt, bool (*wanted)(pid_t pid, void *ctx), void *ctx)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;

	if (!dir)
		return -errno;
	while ((de = readdir(dir))) {
		pid_t pid;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		if (wanted && !wanted(pid, ctx))
			continue;
		if (!proctrack__addr_space(pt, pid)) {
			closedir(dir);
			return -ENOMEM;
		}
	}
	closedir(dir);
	return 0;
}

/* One known process: its mappings from /proc again. Returns 1 if read, 0 if gone, or -errno. */
static int resync_one(struct proctrack *pt, struct proc *p, uint64_t time)
{
	struct addr_space fresh = { .files = &pt->files, .pid = p->pid };
	struct addr_space *cur = p->as;
	bool other = false;
	char path[64];
	int err;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)p->pid);
	err = addr_space__load_maps_file(&fresh, path);
	if (err || !fresh.nr_maps) {
		addr_space__release_maps(&fresh);
		return err == -ENOMEM ? err : 0;
	}
	/* A released image's process ended long ago: /proc shows another one. */
	other = cur->released;
	for (size_t i = 0; i < fresh.nr_maps && !other; i++)
		other = addr_space__maps_other(cur, &fresh.maps[i]);
	/* What the tracker has that is gone from /proc: an unmap, or the old image. */
	for (size_t i = 0; i < cur->nr_maps && !other; i++)
		other = mapping__is_file(&cur->maps[i]) &&
			!addr_space__maps_same(&fresh, &cur->maps[i]);
	if (other) {
		/* An exec the records did not tell, or unmaps: a new image from now on. */
		err = proctrack__read_image_start(pt, p->pid, time);
		if (!err) {
			cur = p->as;
			addr_space__adopt_maps(cur, fresh.maps, fresh.nr_maps, fresh.cap_maps);
			fresh.maps = NULL;
			fresh.nr_maps = 0;
		}
	} else {
		for (size_t i = 0; i < fresh.nr_maps && !err; i++)
			if (!addr_space__maps_same(cur, &fresh.maps[i]))
				err = addr_space__insert(cur, &fresh.maps[i]);
	}
	for (size_t i = 0; i < cur->nr_maps; i++)
		proctrack__open_binary(pt, cur, &cur->maps[i], NULL);
	addr_space__release_maps(&fresh);
	return err ? err : 1;
}

int proctrack__resync(struct proctrack *pt, bool (*wanted)(pid_t pid, void *ctx), void *ctx,
		      uint64_t time)
{
	DIR *dir = opendir("/proc");
	struct dirent *de;
	int n = 0, err = 0;

	if (!dir)
		return -errno;
	while (!err && (de = readdir(dir))) {
		pid_t pid;
		struct proc *p;

		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = (pid_t)atoi(de->d_name);
		p = proctrack__find_proc(pt, pid);
		/* Processes not known yet are read at their first sample, as always. */
		if (!p || pid <= 0 || (wanted && !wanted(pid, ctx)))
			continue;
		err = resync_one(pt, p, time);
		if (err > 0)
			n++, err = 0;
	}
	closedir(dir);
	return err ? err : n;
}
