// SPDX-License-Identifier: GPL-2.0
#include "compat/bpfpin.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#ifndef BPF_FS_MAGIC
#define BPF_FS_MAGIC 0xcafe4a11
#endif

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/* BPF_OBJ_GET read-only (file_flags, Linux 4.15), else as older kernels allow. */
static int obj_get(const char *path)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.pathname = (uint64_t)(uintptr_t)path;
	attr.file_flags = BPF_F_RDONLY;
	fd = sys_bpf(BPF_OBJ_GET, &attr);
	if (fd < 0 && errno == EINVAL) {
		attr.file_flags = 0;
		fd = sys_bpf(BPF_OBJ_GET, &attr);
	}
	return fd < 0 ? -errno : (int)fd;
}

/* A pinned program opens too: its anon inode tells the kinds apart. */
static bool is_map(int fd)
{
	char link[64], target[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, target, sizeof(target) - 1);
	if (n < 0)
		return true;	/* no /proc: let the info call decide */
	target[n] = 0;
	return !strcmp(target, "anon_inode:bpf-map");
}

int bpfpin__open_id_set(const char *path, const char *what, char *why, size_t len)
{
	struct bpf_map_info info;
	union bpf_attr attr;
	struct statfs sfs;
	struct stat st;
	int fd, err;

	/* Only what bpffs holds: BPF_OBJ_GET never opens the path, so a FIFO cannot block. */
	if (lstat(path, &st) || statfs(path, &sfs)) {
		err = -errno;
		snprintf(why, len, "argument %s: %s: %s", what, path, strerror(-err));
		return err;
	}
	if (sfs.f_type != BPF_FS_MAGIC || !S_ISREG(st.st_mode)) {
		snprintf(why, len, "argument %s: %s: not a pinned BPF map (a file in a bpf "
			 "filesystem, e.g. under /sys/fs/bpf)", what, path);
		return -EINVAL;
	}
	fd = obj_get(path);
	if (fd < 0) {
		snprintf(why, len, "argument %s: %s: %s", what, path, strerror(-fd));
		return fd;
	}
	/* BPF_OBJ_GET_INFO_BY_FD: Linux 4.13, older than any kernel that can use the map. */
	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (uint64_t)(uintptr_t)&info;
	if (!is_map(fd)) {
		snprintf(why, len, "argument %s: %s: a pinned BPF object that is not a map", what,
			 path);
		close(fd);
		return -EINVAL;
	}
	if (sys_bpf(BPF_OBJ_GET_INFO_BY_FD, &attr)) {
		err = -errno;
		snprintf(why, len, "argument %s: %s: %s", what, path, strerror(-err));
		close(fd);
		return err;
	}
	if ((info.type != BPF_MAP_TYPE_HASH && info.type != BPF_MAP_TYPE_LRU_HASH) ||
	    info.key_size != 8) {
		snprintf(why, len, "argument %s: %s: a map of type %u with %u-byte keys; expected a "
			 "hash map keyed by 8-byte ids, as bcc's", what, path, info.type,
			 info.key_size);
		close(fd);
		return -EINVAL;
	}
	return fd;
}
