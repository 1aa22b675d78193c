// SPDX-License-Identifier: GPL-2.0
#include "core/lib/userfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool userfile__dir_shared(mode_t mode, uid_t owner)
{
	return (mode & (S_IWGRP | S_IWOTH)) || (owner != 0 && owner != geteuid());
}

/*
 * O_NONBLOCK: opening a FIFO without a writer would wait forever, and so
 * would some devices. It is cleared once the file is known to be regular.
 */
static int check_regular(int fd, uint64_t max_size, uint64_t *size)
{
	struct stat st;
	int flags;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > max_size)
		return -EFBIG;
	flags = fcntl(fd, F_GETFL);
	if (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK))
		return -errno;
	*size = st.st_size;
	return 0;
}

static int open_checked(int dirfd, const char *path, bool nofollow, uint64_t max_size,
			uint64_t *size)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | (nofollow ? O_NOFOLLOW : 0);
	int fd = openat(dirfd, path, flags);
	int err;

	if (fd < 0)
		return -errno;
	err = check_regular(fd, max_size, size);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int userfile__open(const char *path, bool nofollow, uint64_t max_size, uint64_t *size)
{
	return open_checked(AT_FDCWD, path, nofollow, max_size, size);
}

/*
 * Whether a file (st) in a directory (dir) is the doing of root, of us, or
 * of owner alone: owned by one of them and writable by no one else, in a
 * directory whose entries no one else can replace (sticky: others may add
 * their own, which they then own).
 */
static bool controlled_by(const struct stat *dir, const struct stat *st, uid_t owner)
{
	bool dir_ours = dir->st_uid == 0 || dir->st_uid == geteuid() || dir->st_uid == owner;
	bool file_ours = st->st_uid == 0 || st->st_uid == geteuid() || st->st_uid == owner;

	return dir_ours && file_ours && !(st->st_mode & (S_IWGRP | S_IWOTH)) &&
	       (!(dir->st_mode & (S_IWGRP | S_IWOTH)) || (dir->st_mode & S_ISVTX));
}

/* The mount an fd's file is on, from /proc/self/fdinfo (Linux 3.15); -1 if not known. */
static int mount_id(int fd)
{
	char path[64], line[128];
	int id = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "mnt_id: %d", &id) == 1)
			break;
	fclose(f);
	return id;
}

/* statx's "the root of a mount" (Linux 5.8), for older headers. */
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

/*
 * Whether the file open as fd was mounted at its name (a bind mount of a
 * file from elsewhere, /proc included) rather than made in its directory
 * dfd: statx says so (5.8), else the two are on different mounts (3.15),
 * else on different devices.
 */
static bool mounted_there(int dfd, int fd)
{
	struct stat a, b;
	int x, y;
#ifdef STATX_TYPE	/* glibc 2.28 */
	struct statx stx;

	if (!statx(fd, "", AT_EMPTY_PATH, 0, &stx) &&
	    (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT))
		return stx.stx_attributes & STATX_ATTR_MOUNT_ROOT;
#endif
	x = mount_id(fd);
	y = mount_id(dfd);
	if (x >= 0 && y >= 0)
		return x != y;
	return fstat(fd, &a) || fstat(dfd, &b) || a.st_dev != b.st_dev;
}

/*
 * name under the directory open as dfd (taken), opened as userfile__open_in
 * does, and by rules: -EPERM for a file they refuse.
 */
static int open_at(int dfd, const char *name, const struct userfile_rules *rules,
		   uint64_t max_size, uint64_t *size)
{
	char comp[256];
	int fd, err;

	/* One component at a time: a symlink is followed only where nobody else could put it. */
	for (;;) {
		size_t len = strcspn(name, "/");
		struct stat st, fst;
		bool shared;

		if (!len || len >= sizeof(comp)) {
			err = len ? -ENAMETOOLONG : -EINVAL;
			goto err_out;
		}
		if (fstat(dfd, &st)) {
			err = -errno;
			goto err_out;
		}
		memcpy(comp, name, len);
		comp[len] = '\0';
		shared = userfile__dir_shared(st.st_mode, st.st_uid);
		if (!name[len]) {
			fd = open_checked(dfd, comp, shared, max_size, size);
			if (fd >= 0 && rules &&
			    ((rules->owner &&
			      (fstat(fd, &fst) || !controlled_by(&st, &fst, *rules->owner))) ||
			     (rules->no_mounts && mounted_there(dfd, fd)))) {
				close(fd);
				fd = -EPERM;
			}
			close(dfd);
			return fd;
		}
		fd = openat(dfd, comp,
			    O_PATH | O_DIRECTORY | O_CLOEXEC | (shared ? O_NOFOLLOW : 0));
		if (fd < 0) {
			err = -errno;
			goto err_out;
		}
		close(dfd);
		dfd = fd;
		name += len + 1;
	}

err_out:
	close(dfd);
	return err;
}

static int open_in(const char *dir, const char *name, const struct userfile_rules *rules,
		   uint64_t max_size, uint64_t *size)
{
	int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);

	if (dfd < 0)
		return -errno;
	return open_at(dfd, name, rules, max_size, size);
}

int userfile__open_in(const char *dir, const char *name, uint64_t max_size, uint64_t *size)
{
	return open_in(dir, name, NULL, max_size, size);
}

int userfile__open_owned(const char *dir, const char *name, uid_t owner, uint64_t max_size,
			 uint64_t *size)
{
	return open_in(dir, name, &(struct userfile_rules){ .owner = &owner }, max_size, size);
}

int userfile__open_at(int dirfd, const char *name, const struct userfile_rules *rules,
		      uint64_t max_size, uint64_t *size)
{
	int dfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);

	if (dfd < 0)
		return -errno;
	return open_at(dfd, name, rules, max_size, size);
}

int64_t userfile__read(int fd, uint64_t len, void (*fn)(const void *buf, size_t n, void *ctx),
		      void *ctx)
{
	unsigned char buf[65536];
	uint64_t done = 0;

	while (done < len) {
		size_t want = len - done < sizeof(buf) ? len - done : sizeof(buf);
		ssize_t n = pread(fd, buf, want, done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		fn(buf, n, ctx);
		done += n;
	}
	return done;
}

int userfile__read_all(int fd, size_t max, char **buf, size_t *len, bool *truncated)
{
	size_t cap = max < 65536 ? max : 65536;
	char *p = malloc(cap + 1);

	*buf = NULL;
	*len = 0;
	*truncated = false;
	if (!p)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			size_t ncap = cap * 2 < max ? cap * 2 : max;
			char *tmp;

			if (cap >= max) {
				char c;

				/* One byte more says whether the file went on. */
				*truncated = read(fd, &c, 1) > 0;
				break;
			}
			tmp = realloc(p, ncap + 1);
			if (!tmp) {
				free(p);
				return -ENOMEM;
			}
			p = tmp;
			cap = ncap;
		}
		n = read(fd, p + *len, cap - *len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			n = -errno;
			free(p);
			return n;
		}
		if (n == 0)
			break;
		*len += n;
	}
	p[*len] = '\0';
	*buf = p;
	return 0;
}
