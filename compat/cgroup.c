// SPDX-License-Identifier: GPL-2.0
#include "compat/cgroup.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
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

void cgroup_dir__perf_reason(const struct cgroup_dir *cg, const char *proc_cgroups, int major,
			     int minor, const char *root, const char *root_subtree_control,
			     char *why, size_t len)
{
	const char *line = proc_cgroups;
	int hierarchy = -1, enabled = 0;

	/* "#subsys_name hierarchy num_cgroups enabled": hierarchy 0 is the unified one. */
	while (line && *line) {
		if (sscanf(line, "perf_event %d %*d %d", &hierarchy, &enabled) == 2)
			break;
		hierarchy = -1;
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	if (hierarchy < 0)
		snprintf(why, len, "%s: this kernel has no perf_event cgroup controller "
			 "(CONFIG_CGROUP_PERF)", cg->path);
	else if (!enabled)
		snprintf(why, len, "%s: the perf_event cgroup controller is disabled "
			 "(cgroup_disable= on the kernel command line)", cg->path);
	else if (cg->version == CGROUP_V2 && (major < 4 || (major == 4 && minor < 11)))
		snprintf(why, len, "%s is a cgroup v2 directory: perf events follow v2 cgroups "
			 "from Linux 4.11, this is %d.%d (a v1 perf_event hierarchy works)",
			 cg->path, major, minor);
	else if (cg->version == CGROUP_V2 && hierarchy)
		snprintf(why, len, "%s is a cgroup v2 directory, but perf_event is bound to a v1 "
			 "hierarchy (a hybrid host): use the same group in the perf_event "
			 "hierarchy", cg->path);
	else if (cg->version == CGROUP_V2 && root && root_subtree_control &&
		 strspn(root_subtree_control, " \n") == strlen(root_subtree_control))
		snprintf(why, len, "%s: cgroup v2 has no perf_event state here until its root's "
			 "cgroup.subtree_control is first written (e.g. echo +cpu > "
			 "%s/cgroup.subtree_control)", cg->path, root);
	else if (cg->version == CGROUP_V1 && !hierarchy)
		snprintf(why, len, "%s is in a cgroup v1 hierarchy without perf_event, which is on "
			 "the v2 hierarchy here: use the v2 directory", cg->path);
	else
		snprintf(why, len, "%s: the perf_event controller is not in its hierarchy (v1 "
			 "needs the directory under the perf_event hierarchy)", cg->path);
}

/* The root of cg's v2 hierarchy: the topmost directory above it still in cgroup2. */
static int v2_root(const struct cgroup_dir *cg, char *root, size_t len)
{
	char up[PATH_MAX];
	struct statfs sfs;
	char *slash;

	if (!realpath(cg->path, root) || strlen(root) >= len)
		return -1;
	for (;;) {
		snprintf(up, sizeof(up), "%s", root);
		slash = strrchr(up, '/');
		if (!slash || slash == up)
			return 0;
		*slash = '\0';
		if (statfs(up, &sfs) || sfs.f_type != CGROUP2_SUPER_MAGIC)
			return 0;
		snprintf(root, len, "%s", up);
	}
}

/* Up to len - 1 bytes of a small file, NUL-terminated; "" when it cannot be read. */
static void read_small(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

void cgroup_dir__perf_why(const struct cgroup_dir *cg, char *why, size_t len)
{
	char text[4096], root[PATH_MAX], path[PATH_MAX + 32], subtree[256];
	const char *root_subtree = NULL;
	int major = 0, minor = 0;
	struct utsname u;

	read_small("/proc/cgroups", text, sizeof(text));
	if (!uname(&u))
		sscanf(u.release, "%d.%d", &major, &minor);
	if (cg->version == CGROUP_V2 && !v2_root(cg, root, sizeof(root))) {
		snprintf(path, sizeof(path), "%s/cgroup.subtree_control", root);
		read_small(path, subtree, sizeof(subtree));
		if (access(path, R_OK) == 0)
			root_subtree = subtree;
	}
	cgroup_dir__perf_reason(cg, text, major, minor, root_subtree ? root : NULL, root_subtree, why,
				len);
}
