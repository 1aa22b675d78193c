// SPDX-License-Identifier: GPL-2.0
#include "app/run/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
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

/* The directory and the name of path, each allocated. */
static int split_path(const char *path, char **dir, char **base)
{
	char *copy = strdup(path);

	*dir = *base = NULL;
	if (copy)
		*base = strdup(basename(copy));
	if (copy && *base) {
		strcpy(copy, path);
		*dir = strdup(dirname(copy));
	}
	free(copy);
	if (*dir)
		return 0;
	free(*base);
	*base = NULL;
	return -ENOMEM;
}

/*
 * A file with no name in the directory of path (O_TMPFILE, Linux 3.11, on
 * ext4, xfs, btrfs, tmpfs and most local file systems): killed by SIGKILL,
 * the profiler leaves nothing behind. It gets its name by linkat at the end,
 * which needs /proc/self/fd or CAP_DAC_READ_SEARCH.
 */
static int open_anonymous(struct outfile *o, const char *dir)
{
	int fd;

	if (geteuid() != 0 && access("/proc/self/fd", X_OK))
		return -ENOENT;
	/* The mode with the umask, as any file the user creates. */
	/* Readable too: a report that cannot be put at its name is copied elsewhere. */
	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0666);
	if (fd < 0)
		return -errno;
	o->f = fdopen(fd, "w");
	if (!o->f) {
		int e = errno;

		close(fd);
		return -e;
	}
	o->anonymous = true;
	return 0;
}

/*
 * Otherwise a named file beside path, renamed over it at the end: a
 * SIGKILL leaves it (docs/profile.8, BUGS).
 */
static int open_named(struct outfile *o, const char *dir, const char *base, struct errmsg *err)
{
	int fd;

	if (asprintf(&o->tmp_path, "%s/.%s.XXXXXX", dir, base) < 0) {
		o->tmp_path = NULL;
		return -ENOMEM;
	}
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

/* A new file in the same directory, so that putting it in place at the end is atomic. */
static int open_temporary(struct outfile *o, struct errmsg *err)
{
	char *dir, *base;
	int ret = split_path(o->path, &dir, &base);

	if (ret)
		return ret;
	if (open_anonymous(o, dir))
		ret = open_named(o, dir, base, err);
	free(dir);
	free(base);
	return ret;
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

/* Give the file open at fd the name to (which must not exist). Returns 0 or -errno. */
static int link_fd(int fd, const char *to)
{
	char proc[40];

	if (!linkat(fd, "", AT_FDCWD, to, AT_EMPTY_PATH))
		return 0;
	if (errno == EEXIST)
		return -EEXIST;
	/* Without CAP_DAC_READ_SEARCH: the same through /proc. */
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (!linkat(AT_FDCWD, proc, AT_FDCWD, to, AT_SYMLINK_FOLLOW))
		return 0;
	return -errno;
}

/*
 * The anonymous file at o->path: linked there if nothing is, else linked
 * beside it under a fresh name and renamed over it (a SIGKILL in between,
 * a few microseconds, would leave that name).
 */
static int link_into_place(struct outfile *o, struct errmsg *err)
{
	int fd = fileno(o->f), ret = link_fd(fd, o->path);
	char *dir, *base, *tmp = NULL;
	struct timespec ts;
	bool in_place;

	if (ret != -EEXIST)
		return ret;
	/* Something appeared or was there: replaced only on the terms of --output's check. */
	ret = check_existing(o->path, &in_place, err);
	if (!ret && in_place) {
		errmsg__set(err, "argument --output: %s became a device; not replacing it",
			    o->path);
		ret = -EEXIST;
	}
	if (ret)
		return ret;
	ret = split_path(o->path, &dir, &base);
	if (ret)
		return ret;
	clock_gettime(CLOCK_REALTIME, &ts);
	ret = -EEXIST;
	for (unsigned int i = 0; i < 100 && ret == -EEXIST; i++) {
		free(tmp);
		if (asprintf(&tmp, "%s/.%s.%06lx", dir, base,
			     ((unsigned long)ts.tv_nsec ^ (unsigned long)getpid() << 8) + i * 7919) < 0) {
			tmp = NULL;
			ret = -ENOMEM;
			break;
		}
		ret = link_fd(fd, tmp);
	}
	if (!ret && rename(tmp, o->path)) {
		ret = -errno;
		unlink(tmp);
	}
	free(tmp);
	free(dir);
	free(base);
	return ret;
}

/*
 * The named temporary file at o->path: moved there if nothing is (never over
 * a file that appeared meanwhile, where the kernel can tell), else over our
 * own regular file, on the terms of --output's check.
 */
static int rename_into_place(struct outfile *o, struct errmsg *err)
{
	bool in_place;
	int ret;

#ifdef RENAME_NOREPLACE
	if (!renameat2(AT_FDCWD, o->tmp_path, AT_FDCWD, o->path, RENAME_NOREPLACE))
		return 0;
	if (errno != EEXIST && errno != EINVAL && errno != ENOSYS)
		return -errno;
#endif
	ret = check_existing(o->path, &in_place, err);
	if (!ret && in_place) {
		errmsg__set(err, "argument --output: %s became a device; not replacing it",
			    o->path);
		ret = -EEXIST;
	}
	if (!ret && rename(o->tmp_path, o->path))
		ret = -errno;
	return ret;
}

/* A name beside path that nothing has: "path.XXXXXX" (random), for link() to take. */
static int fresh_name(const char *path, unsigned int attempt, char **out)
{
	unsigned char r[4] = { 0 };

	if (getentropy(r, sizeof(r)))
		r[0] = (unsigned char)attempt;	/* no entropy: the attempts still differ */
	if (asprintf(out, "%s.%02x%02x%02x%02x", path, r[0], r[1], r[2],
		     (r[3] + attempt) & 0xff) < 0) {
		*out = NULL;
		return -ENOMEM;
	}
	return 0;
}

/* The finished report given the name beside o->path that *where gets. */
static int save_beside(struct outfile *o, char **where)
{
	int ret = -EEXIST;

	for (unsigned int i = 0; i < 100 && ret == -EEXIST; i++) {
		char *name;

		ret = fresh_name(o->path, i, &name);
		if (ret)
			break;
		if (o->anonymous)
			ret = link_fd(fileno(o->f), name);
		else
			ret = link(o->tmp_path, name) ? -errno : 0;
		if (ret)
			free(name);
		else
			*where = name;
	}
	return ret;
}

/* The finished report, open at fd, copied to out; 0 or -errno. */
static int copy_report(int fd, int out)
{
	char buf[65536];
	off_t off = 0;

	for (;;) {
		ssize_t n = pread(fd, buf, sizeof(buf), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return 0;
		off += n;
		for (ssize_t done = 0; done < n;) {
			ssize_t w = write(out, buf + done, (size_t)(n - done));

			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0)
				return -errno;
			done += w;
		}
	}
}

/*
 * Where the finished report goes when its name is taken or its directory
 * refuses it: never lost (issue 32; before, a user who made the name in a
 * sticky directory mid-run had root's report thrown away). Beside the name
 * under a fresh one; else standard output, unless a terminal takes it
 * (pprof is binary); else a fresh file in $TMPDIR. *where says which.
 */
static int save_elsewhere(struct outfile *o, char **where)
{
	const char *tmpdir = getenv("TMPDIR");
	char *name = NULL;
	int fd, ret;

	*where = NULL;
	if (!save_beside(o, where))
		return 0;
	if (!isatty(STDOUT_FILENO)) {
		fflush(stdout);
		ret = copy_report(fileno(o->f), STDOUT_FILENO);
		if (!ret)
			*where = strdup("standard output");
		return ret ? ret : *where ? 0 : -ENOMEM;
	}
	if (asprintf(&name, "%s/profile-report.XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp") < 0)
		return -ENOMEM;
	fd = mkostemp(name, O_CLOEXEC);
	ret = fd < 0 ? -errno : copy_report(fileno(o->f), fd);
	if (fd >= 0 && close(fd) && !ret)
		ret = -errno;
	if (ret) {
		if (fd >= 0)
			unlink(name);
		free(name);
		return ret;
	}
	*where = name;
	return 0;
}

int outfile__commit(struct outfile *o, struct errmsg *err)
{
	bool written = false;
	char *where = NULL;
	int ret = 0;

	if (!o->f)
		return 0;
	if (err)
		err->text[0] = '\0';
	if (fflush(o->f) == EOF || ferror(o->f))
		ret = -(errno ? errno : EIO);
	written = !ret;
	if (!ret && o->anonymous)
		ret = link_into_place(o, err);
	else if (!ret && o->tmp_path)
		ret = rename_into_place(o, err);
	if (ret && err && !err->text[0])
		errmsg__set(err, "writing %s: %s", o->path ? o->path : "the report",
			    strerror(-ret));
	/* Whole but not at its name: somewhere else, and the error says where. */
	if (ret && written && o->path && (o->anonymous || o->tmp_path) &&
	    !save_elsewhere(o, &where)) {
		size_t len = err ? strlen(err->text) : 0;

		if (err)
			snprintf(err->text + len, sizeof(err->text) - len,
				 "; the report is %s%s instead", strcmp(where, "standard output") ?
				 "at " : "on ", where);
		free(where);
	}
	if (o->f != stdout && fclose(o->f) && !ret)
		ret = -(errno ? errno : EIO);
	o->f = NULL;
	/* A named temporary file left is removed (linked beside, or copied). */
	if (ret && o->tmp_path)
		unlink(o->tmp_path);
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
