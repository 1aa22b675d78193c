/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Opening files that other users may control (debug files, perf maps, the
 * files behind mappings) for a profiler that usually runs as root: only
 * regular files, without ever blocking in open or read (a FIFO, a device),
 * without following symlinks planted in directories others can write to,
 * and with a size known before the first read.
 */
#ifndef CORE_SYM_USERFILE_H
#define CORE_SYM_USERFILE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* Largest debug file or ELF file read whole (its CRC): more is not a debug file. */
#define USERFILE_MAX_SIZE (4ULL << 30)

/*
 * Open path read-only if it is a regular file of at most max_size bytes.
 * With nofollow, a symlink as the last component is refused (ELOOP).
 * Returns an fd (O_CLOEXEC, blocking again) and sets *size, or -errno:
 * -EINVAL for anything but a regular file, -EFBIG when it is too large.
 */
int userfile__open(const char *path, bool nofollow, uint64_t max_size, uint64_t *size);

/*
 * Open name (a relative path) under the directory dir, following no
 * symlink that sits in a directory writable by others than root and us.
 * The same checks and results as userfile__open.
 */
int userfile__open_in(const char *dir, const char *name, uint64_t max_size, uint64_t *size);

/*
 * The same for a file whose contents are trusted for another's (a debug
 * file for a binary of owner): only one that root, we or owner made and
 * alone can change, in a directory where no one else can put it in its
 * place (a sticky one, as /tmp, lets others add files, owned by them).
 * -EPERM for one in a place others control.
 */
int userfile__open_owned(const char *dir, const char *name, uid_t owner, uint64_t max_size,
			 uint64_t *size);

/* What a file opened by userfile__open_at must also be. */
struct userfile_rules {
	/* Only one that root, we or *owner control (as userfile__open_owned). */
	const uid_t *owner;
	/*
	 * Nothing mounted at the name: a file bind-mounted there from elsewhere
	 * (a user's mount namespace can put a root-owned /proc file anywhere)
	 * is not the directory's file.
	 */
	bool no_mounts;
};

/*
 * userfile__open_in under the directory open as dirfd (not taken), with
 * rules (NULL: none): -EPERM for a file they refuse.
 */
int userfile__open_at(int dirfd, const char *name, const struct userfile_rules *rules,
		      uint64_t max_size, uint64_t *size);

/* Whether a directory with these attributes lets others plant files in it. */
bool userfile__dir_shared(mode_t mode, uid_t owner);

/*
 * Read at most len bytes from offset 0 (fewer if the file shrank) and feed
 * them to fn. Returns the number of bytes read or -errno.
 */
int64_t userfile__read(int fd, uint64_t len, void (*fn)(const void *buf, size_t n, void *ctx),
		      void *ctx);

/*
 * Read the whole file into a NUL-terminated buffer, at most max bytes
 * (procfs files have no size until read). Returns 0 with *truncated telling
 * whether the file had more, or -errno. Free *buf.
 */
int userfile__read_all(int fd, size_t max, char **buf, size_t *len, bool *truncated);

#endif
