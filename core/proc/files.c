// SPDX-License-Identifier: GPL-2.0
/*
 * The file table: the binaries mapped, opened once when first seen and
 * checked to be the file mapped (device, inode, ctime, build-id) on every
 * later open; the fd budget; the pool of mapping paths.
 */
#include "core/proc/proctrack_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/pidstart.h"
#include "core/lib/userfile.h"
#include "core/proc/buildid.h"

/*
 * Binaries by (dev, ino), opened once for the whole run. A file the tracker
 * holds open keeps its inode: no other file can take its number, but its
 * owner may still rewrite it in place, so each open of it checks that its
 * build-id (or, without one, its size and modification time) is still the
 * one first seen. One it could not keep (no fds left, or gone when first
 * seen) is looked for again by path, and an inode number is reused once its
 * file is deleted: the file found must also have the inode change time
 * (ctime: set by the kernel on every change, never by users) seen when the
 * mapping was, and the same build-id.
 */
struct open_file {
	uint64_t dev, ino;	/* the key */
	int fd;			/* -1: not kept open */
	int64_t ctime_ns;	/* the file's ctime when first seen; 0 if it could not be read */
	int64_t mtime_ns;	/* and its mtime and size, for a file without a build-id */
	int64_t size;
	int64_t seen_ns;	/* wall clock when first seen: an unread file changed no later */
	struct build_id bid;	/* from the mmap record (5.12+) or the file's note; size 0: none */
	bool bid_known;		/* bid was learnt (else the file could not be read) */
	bool conflict;		/* two files had this (dev, ino) in the run: no names from it */
};

/*
 * What a file opened now must be to stand for a mapping's: the mapping's
 * (dev, ino) where known, and the rest of what was learnt at first sight.
 */
struct expect {
	int64_t ctime_ns;		/* 0: not known */
	int64_t not_after_ns;		/* with ctime not known: changed no later than this; 0: any */
	const struct build_id *bid;	/* NULL: not known; size 0: the file has none */
};

/*
 * An MMAP2 record of 5.12+ names a file by path and build-id only. The
 * file kept open that was found at that path with that build-id stands for
 * every later record naming both, with no system call (opening
 * /proc/PID/map_files again costs some 50 us a record): a build-id names a
 * build's contents. But anyone may write a build-id note into their own
 * file, and the path is the one the mapping process saw: in a mount
 * namespace of their own (unshare -Urm) any user can mount their file over
 * /usr/bin/foo and run it. So only a file that no user but root can have
 * written stands for a path: owned by root and writable by no one else,
 * and the one that path names in the profiler's own mount namespace, on a
 * real filesystem (a user's not-dumpable process has root-owned /proc
 * files of contents the user chose, and their namespace can mount one at
 * any path: issue 32).
 */
struct bid_entry {
	const char *path;	/* the tracker's pooled copy: compared as a pointer */
	struct build_id bid;
	struct open_file *f;
};

/*
 * A path of the pool, with the number of mappings (and build-id entries)
 * that name it: the last one gone frees it, so that the paths of an
 * exited process go with its images (issue 32: 200,000 long paths mapped
 * once each were held for the rest of the run).
 */
struct pooled_path {
	size_t refs;
	char path[];	/* the key */
};

static uint64_t file_hash(const void *key)
{
	const struct open_file *f = key;

	return hash_u64(f->dev * 31 + f->ino);
}

static uint64_t bid_hash(const void *key)
{
	const struct bid_entry *e = key;

	return hash_bytes(e->bid.data, e->bid.size, (uint64_t)(uintptr_t)e->path);
}

static bool bid_equal(const void *a, const void *b)
{
	const struct bid_entry *x = a, *y = b;

	return x->path == y->path && build_id__equal(&x->bid, &y->bid);
}

static bool file_equal(const void *a, const void *b)
{
	const struct open_file *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

/*
 * Half of what the process may open, with FD_RESERVE left at least to the
 * rest (16 files at least); the soft limit raised to the hard one first. A
 * BPF object and each of its variants hold a descriptor of every map they
 * share: the bpf backend held 37 map descriptors, 54 with Python walks
 * loaded, and failed under a limit of 40 where half went to files.
 */
#define FD_RESERVE 160
#define FD_MIN_FILES 16

static unsigned int fd_budget(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 256;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur > 1 << 20)
		return 1 << 19;
	if (rl.rlim_cur >= 2 * FD_RESERVE)
		return (unsigned int)(rl.rlim_cur / 2);
	return rl.rlim_cur > FD_RESERVE + FD_MIN_FILES ? (unsigned int)(rl.rlim_cur - FD_RESERVE)
						       : FD_MIN_FILES;
}

void file_table__init(struct file_table *ft)
{
	hashmap__init(&ft->files, file_hash, file_equal);
	hashmap__init(&ft->paths, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&ft->by_build_id, bid_hash, bid_equal);
	ft->max_open = fd_budget();
}

void file_table__fini(struct file_table *ft)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&ft->files, bkt, ent) {
		struct open_file *f = ent->value;

		if (f->fd >= 0)
			close(f->fd);
		free(f);
	}
	hashmap__clear(&ft->files);
	hashmap__for_each(&ft->by_build_id, bkt, ent)
		free(ent->value);
	hashmap__clear(&ft->by_build_id);
	hashmap__for_each(&ft->paths, bkt, ent)
		free(ent->value);
	hashmap__clear(&ft->paths);
}

char *file_table__pool_path(struct file_table *ft, const char *path)
{
	struct pooled_path *pp = hashmap__find(&ft->paths, path);
	size_t len;

	if (pp) {
		pp->refs++;
		return pp->path;
	}
	len = strlen(path) + 1;
	pp = malloc(sizeof(*pp) + len);
	if (!pp)
		return NULL;
	pp->refs = 1;
	memcpy(pp->path, path, len);
	if (hashmap__add(&ft->paths, pp->path, pp)) {
		free(pp);
		return NULL;
	}
	return pp->path;
}

void file_table__unpool_path(struct file_table *ft, const char *path)
{
	struct pooled_path *pp = path ? hashmap__find(&ft->paths, path) : NULL;

	if (!pp || pp->path != path || --pp->refs)
		return;
	hashmap__remove(&ft->paths, pp->path);
	free(pp);
}

size_t file_table__pooled_paths(const struct file_table *ft)
{
	return ft->paths.size;
}

static struct open_file *find_file(const struct file_table *ft, const struct mapping *m)
{
	struct open_file key = { .dev = m->dev, .ino = m->ino };

	return ft && m->ino ? hashmap__find(&ft->files, &key) : NULL;
}

static int64_t ns_of(const struct timespec *ts)
{
	return (int64_t)ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

/* Whether the file open as fd has build-id bid (size 0: has none). */
static bool build_id_is(int fd, const struct build_id *bid)
{
	struct build_id got;

	return build_id__read_fd(fd, &got) >= 0 && build_id__equal(&got, bid);
}

/*
 * Whether the file open as fd (st: its fstat) may stand for m's: the same
 * (dev, ino) where m names them, and what e expects. A mapping that names
 * neither an inode nor a build-id matches no file.
 */
static bool file_matches(int fd, const struct stat *st, const struct mapping *m,
			 const struct expect *e)
{
	if (m->ino ? (m->dev && st->st_dev != m->dev) || st->st_ino != m->ino : !e->bid)
		return false;
	if (e->ctime_ns && ns_of(&st->st_ctim) != e->ctime_ns)
		return false;
	if (!e->ctime_ns && e->not_after_ns && ns_of(&st->st_ctim) > e->not_after_ns)
		return false;
	return !e->bid || build_id_is(fd, e->bid);
}

/* An fd for path if it is the file m maps (file_matches), or -1; *st is its fstat. */
static int open_matching(const char *path, const struct mapping *m, const struct expect *e,
			 struct stat *st)
{
	/* Paths anyone may swap: a FIFO or a device there must not block us. */
	uint64_t size;
	int fd = userfile__open(path, false, UINT64_MAX, &size);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !file_matches(fd, st, m, e)) {
		close(fd);
		return -1;	/* replaced since: better unknown than wrong */
	}
	return fd;
}

/*
 * The file of m through /proc/PID: the very file the process maps (deleted
 * or not: no check of times needed), else its path under the process's
 * root (containers). Only while the process there is the one that mapped
 * it, begun by the record's time (began_ns, wall clock; 0: now): one that
 * took the pid since, in a mount namespace of its own, can put any file at
 * that path (issue 32), and within a tick of its exit (issue 46: the
 * side-band's exits and forks tell, proctrack__held_by). Each look through one /proc/PID descriptor, so
 * that a process that takes the pid meanwhile is not looked into either.
 */
static int open_in_process(struct proctrack *pt, const struct addr_space *as, int64_t began_ns,
			   const struct mapping *m, const struct expect *very,
			   const struct expect *bound, struct stat *st)
{
	char path[4200];
	uint64_t opened;
	int pfd, fd = -1;

	snprintf(path, sizeof(path), "/proc/%d", (int)as->pid);
	pfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (pfd < 0)
		return -1;
	/* Dated after the open: a process that had the pid by then had its fork recorded before. */
	opened = proctrack__records_now(pt);
	if (pidstart__began_by(pfd, began_ns) && proctrack__held_by(pt, as, opened)) {
		/* The magic link of pfd: lookups below it fail once its process is gone. */
		snprintf(path, sizeof(path), "/proc/self/fd/%d/map_files/%" PRIx64 "-%" PRIx64, pfd,
			 m->start, m->end);
		fd = open_matching(path, m, very, st);
		if (fd < 0) {
			snprintf(path, sizeof(path), "/proc/self/fd/%d/root%s", pfd, m->path);
			fd = open_matching(path, m, bound, st);
		}
	}
	close(pfd);
	return fd;
}

/*
 * Whether the file f holds open still has the contents first seen: its
 * owner may rewrite it in place (cp over it) while the inode stays. The
 * build-id tells; without one, size and modification time. Not the ctime:
 * an upgrade renaming over a running binary changes the old file's link
 * count, and so its ctime, not its contents.
 */
static bool kept_file_unchanged(const struct open_file *f)
{
	struct stat st;

	if (f->bid_known && f->bid.size)
		return build_id_is(f->fd, &f->bid);
	return !fstat(f->fd, &st) && ns_of(&st.st_mtim) == f->mtime_ns && st.st_size == f->size;
}

int file_table__open(const struct file_table *ft, const struct mapping *m, bool *owned)
{
	struct open_file *f = find_file(ft, m);
	struct expect e = { 0 };
	struct stat st;

	*owned = false;
	if (f && f->conflict)
		return -1;
	if (f && f->fd >= 0)
		return kept_file_unchanged(f) ? f->fd : -1;
	*owned = true;
	if (!mapping__is_file(m))
		return -1;
	if (f)
		e = (struct expect){ .ctime_ns = f->ctime_ns,
				     .not_after_ns = f->seen_ns,
				     .bid = f->bid_known ? &f->bid : NULL };
	return open_matching(m->path, m, &e, &st);
}

bool file_table__identity(const struct file_table *ft, const struct mapping *m,
			  struct file_identity *out)
{
	const struct open_file *f = find_file(ft, m);

	memset(out, 0, sizeof(*out));
	if (!f || f->conflict)
		return false;
	out->kept = f->fd >= 0;
	out->ctime_ns = f->ctime_ns;
	out->bid_known = f->bid_known;
	out->bid = f->bid;
	return true;
}

/* The kept file found before at m's path with build-id bid: m takes its device and inode. */
static bool known_by_build_id(struct file_table *ft, struct mapping *m,
			      const struct build_id *bid)
{
	struct pooled_path *pp = hashmap__find(&ft->paths, m->path);
	struct bid_entry key = { .path = pp ? pp->path : NULL, .bid = *bid }, *e;

	e = key.path ? hashmap__find(&ft->by_build_id, &key) : NULL;
	if (!e || e->f->fd < 0 || e->f->conflict)
		return false;
	m->dev = e->f->dev;
	m->ino = e->f->ino;
	return true;
}

/*
 * Whether the file open as fd (st: its fstat) is the one at path here, in
 * the profiler's mount namespace, and a file of a real filesystem: a file
 * found through the mapping process (its namespace, its root) may be one
 * it mounted there, and a root-owned /proc file (a not-dumpable process's
 * cmdline, contents its owner chose) is no binary (issue 32).
 */
static bool is_the_file_at(int fd, const char *path, const struct stat *st)
{
	struct statfs sfs;
	struct stat here;

	if (fstatfs(fd, &sfs) || sfs.f_type == PROC_SUPER_MAGIC || sfs.f_type == SYSFS_MAGIC)
		return false;
	return !stat(path, &here) && here.st_dev == st->st_dev && here.st_ino == st->st_ino;
}

/*
 * Remember f, kept open as fd (st: its fstat), as the file at path with
 * build-id bid, if it is root's alone and that path's here (see struct
 * bid_entry).
 */
static void remember_build_id(struct file_table *ft, const char *path,
			      const struct build_id *bid, struct open_file *f, int fd,
			      const struct stat *st)
{
	struct bid_entry *e;

	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)) ||
	    !is_the_file_at(fd, path, st))
		return;		/* each record of it looks again */
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->path = file_table__pool_path(ft, path);
	e->bid = *bid;
	e->f = f;
	/* Not remembered when out of memory (or known): the next record looks again. */
	if (e->path && !hashmap__find(&ft->by_build_id, e) && !hashmap__add(&ft->by_build_id, e, e))
		return;
	file_table__unpool_path(ft, e->path);
	free(e);
}

/*
 * Open the binary of m now, while pid may still be alive: through
 * /proc/PID/map_files (the very file, deleted or not), else under the
 * process's root (containers), else by its path. Kept open while the fd
 * budget lasts; past it, only what identifies it is kept. rec: the
 * build-id the mmap record carried (5.12+), or NULL. Such a record names
 * no device or inode: m takes those of the file found with its build-id,
 * and keeps none (frames [unknown]) when there is no such file.
 */
void proctrack__open_binary(struct proctrack *pt, const struct addr_space *as, struct mapping *m,
			    const struct build_id *rec)
{
	/* A file found by path must be no newer than the mmap (see struct open_file). */
	struct expect bound = { .not_after_ns = pt->record_wall_ns ? pt->record_wall_ns
								   : wall_ns(),
				.bid = rec };
	struct expect very = { .bid = rec };
	struct open_file *f;
	struct stat st;
	int fd = -1;

	if (!mapping__is_file(m) || (!m->ino && !rec))
		return;
	if (!m->ino && known_by_build_id(&pt->files, m, rec))
		return;
	f = find_file(&pt->files, m);
	if (f && f->fd >= 0) {
		/*
		 * Held open: the one file with this number, but its owner may
		 * have rewritten it in place since. Names already read from it
		 * are keyed by what it was (file_table__identity): no names
		 * from it any more rather than the old ones for the new code.
		 */
		if (!f->conflict && !kept_file_unchanged(f))
			f->conflict = true;
		return;
	}
	if (as->pid > 0)
		fd = open_in_process(pt, as, pt->record_wall_ns, m, &very, &bound, &st);
	if (fd < 0 && !f)
		fd = open_matching(m->path, m, &bound, &st);
	if (!m->ino) {
		if (fd < 0)
			return;
		m->dev = st.st_dev;
		m->ino = st.st_ino;
		f = find_file(&pt->files, m);
		if (f && f->fd >= 0) {
			close(fd);
			/* The kept file, first seen with another build-id: rewritten in place. */
			if (!f->bid_known || !build_id__equal(&f->bid, rec))
				f->conflict = true;
			else
				remember_build_id(&pt->files, m->path, rec, f, f->fd, &st);
			return;
		}
	}
	if (f) {
		/* Seen before and not kept: the same file again, or another with its number? */
		if (fd >= 0 && ((f->ctime_ns && ns_of(&st.st_ctim) != f->ctime_ns) ||
				(f->bid_known && !build_id_is(fd, &f->bid))))
			f->conflict = true;
		if (fd >= 0)
			close(fd);
		return;
	}
	f = calloc(1, sizeof(*f));
	if (!f) {
		if (fd >= 0)
			close(fd);
		return;
	}
	f->dev = m->dev;
	f->ino = m->ino;
	f->fd = -1;
	f->seen_ns = bound.not_after_ns;
	if (fd >= 0) {
		f->ctime_ns = ns_of(&st.st_ctim);
		f->mtime_ns = ns_of(&st.st_mtim);
		f->size = st.st_size;
	}
	/* Learnt once: the kernel's, read from the file as it mapped it, else the file's own. */
	if (rec) {
		f->bid = *rec;
		f->bid_known = true;
	} else if (fd >= 0) {
		f->bid_known = build_id__read_fd(fd, &f->bid) >= 0;
	}
	if (hashmap__add(&pt->files.files, f, f)) {
		if (fd >= 0)
			close(fd);
		free(f);
		return;
	}
	if (fd >= 0 && pt->files.nr_open < pt->files.max_open) {
		f->fd = fd;
		pt->files.nr_open++;
		if (rec)
			remember_build_id(&pt->files, m->path, rec, f, fd, &st);
	} else if (fd >= 0) {
		close(fd);	/* out of fds: fewer names later, never wrong ones */
	}
}

size_t file_table__bytes(const struct file_table *ft)
{
	const struct hashmap_entry *ent;
	size_t bytes = hashmap__bytes(&ft->files, sizeof(struct open_file)) +
		       hashmap__bytes(&ft->paths, 0) +
		       hashmap__bytes(&ft->by_build_id, sizeof(struct bid_entry)), bkt;

	hashmap__for_each(&ft->paths, bkt, ent)
		bytes += strlen(ent->value) + 1;
	return bytes;
}
