// SPDX-License-Identifier: GPL-2.0
#include "core/run/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An existing file at path may be replaced: ours and regular, or written in place: a device. */
static int check_existing(const char *path, bool *in_place, struct errmsg *err)
{
	struct stat st;

	*in_place = false;
	if (lstat(path, &st)) {
		if (errno == ENOENT)
			return 0;
		errmsg__set(err, "argument --output: cannot create %s: %s", path, strerror(errno));
		return -errno;
	}
	if (S_ISLNK(st.st_mode)) {
		errmsg__set(err, "argument --output: cannot create %s: it is a symbolic link", path);
		return -ELOOP;
	}
	if (S_ISCHR(st.st_mode)) {
		*in_place = true;
		return 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid()) {
		errmsg__set(err, "argument --output: %s exists and is %s; not replacing it", path,
			    !S_ISREG(st.st_mode) ? "not a regular file" : "another user's file");
		return -EEXIST;
	}
	return 0;
}

static int open_in_place(struct outfile *o, struct errmsg *err)
{
	/* O_NONBLOCK: a device that would block opening is not waited for. */
	int fd = open(o->path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) || !S_ISCHR(st.st_mode)) {
		int e = fd < 0 ? errno : EEXIST;

		if (fd >= 0)
			close(fd);
		errmsg__set(err, "argument --output: cannot open %s: %s", o->path, strerror(e));
		return -e;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	o->f = fdopen(fd, "w");
	if (!o->f) {
		close(fd);
		return -errno;
	}
	return 0;
}

/* A new file in the same directory, so that the rename at the end is atomic. */
static int open_temporary(struct outfile *o, struct errmsg *err)
{
	char *copy = strdup(o->path), *dir, *base;
	int fd;

	if (!copy)
		return -ENOMEM;
	base = strdup(basename(copy));
	strcpy(copy, o->path);
	dir = dirname(copy);
	if (!base || asprintf(&o->tmp_path, "%s/.%s.XXXXXX", dir, base) < 0) {
		o->tmp_path = NULL;
		free(base);
		free(copy);
		return -ENOMEM;
	}
	free(base);
	free(copy);
	fd = mkostemp(o->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		int e = errno;

		errmsg__set(err, "argument --output: cannot create a file beside %s: %s", o->path,
			    strerror(e));
		free(o->tmp_path);
		o->tmp_path = NULL;
		return -e;
	}
	/* mkstemp makes it 0600; a report is as readable as any file created with the umask. */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;

		close(fd);
		unlink(o->tmp_path);
		return -e;
	}
	return 0;
}

int outfile__open(struct outfile *o, const char *path, struct errmsg *err)
{
	bool in_place;
	int ret;

	memset(o, 0, sizeof(*o));
	if (!path) {
		o->f = stdout;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	ret = check_existing(path, &in_place, err);
	if (!ret)
		ret = in_place ? open_in_place(o, err) : open_temporary(o, err);
	if (ret) {
		free(o->path);
		o->path = NULL;
	}
	return ret;
}

int outfile__commit(struct outfile *o, struct errmsg *err)
{
	int ret = 0;

	if (!o->f)
		return 0;
	if (fflush(o->f) == EOF || ferror(o->f))
		ret = -(errno ? errno : EIO);
	if (o->f != stdout && fclose(o->f) && !ret)
		ret = -(errno ? errno : EIO);
	o->f = NULL;
	if (!ret && o->tmp_path && rename(o->tmp_path, o->path))
		ret = -errno;
	if (ret) {
		errmsg__set(err, "writing %s: %s", o->path ? o->path : "the report",
			    strerror(-ret));
		if (o->tmp_path)
			unlink(o->tmp_path);
	}
	free(o->tmp_path);
	free(o->path);
	o->tmp_path = o->path = NULL;
	return ret;
}

void outfile__discard(struct outfile *o)
{
	if (o->f && o->f != stdout)
		fclose(o->f);
	if (o->tmp_path)
		unlink(o->tmp_path);
	free(o->tmp_path);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
