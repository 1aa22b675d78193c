// SPDX-License-Identifier: GPL-2.0
#include "compat/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef CGROUP_SUPER_MAGIC
#define CGROUP_SUPER_MAGIC 0x27e0eb
#endif
#ifndef CGROUP2_SUPER_MAGIC
#define CGROUP2_SUPER_MAGIC 0x63677270
#endif

int cgroup_dir__open(const char *path, struct cgroup_dir *cg, char *why, size_t len)
{
	struct statfs sfs;
	struct stat st;
	int fd, err;

	cg->path = path;
	cg->fd = -1;
	/*
	 * O_DIRECTORY is checked before anything is opened: a FIFO or a device
	 * at the path fails with ENOTDIR instead of blocking or reaching a driver.
	 */
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		if (err == -ENOTDIR)
			snprintf(why, len, "%s: not a cgroup directory (not a directory)", path);
		else
			snprintf(why, len, "%s: %s", path, strerror(-err));
		return err;
	}
	if (fstatfs(fd, &sfs) || fstat(fd, &st)) {
		err = -errno;
		snprintf(why, len, "%s: %s", path, strerror(-err));
		close(fd);
		return err;
	}
	if (sfs.f_type == CGROUP2_SUPER_MAGIC) {
		cg->version = CGROUP_V2;
	} else if (sfs.f_type == (typeof(sfs.f_type))CGROUP_SUPER_MAGIC) {
		cg->version = CGROUP_V1;
	} else {
		snprintf(why, len, "%s: not a cgroup directory (its filesystem is not cgroup or "
			 "cgroup2; see /proc/mounts)", path);
		close(fd);
		return -EINVAL;
	}
	cg->fd = fd;
	cg->id = st.st_ino;
	return 0;
}

void cgroup_dir__close(struct cgroup_dir *cg)
{
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
}
