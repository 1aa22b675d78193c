// SPDX-License-Identifier: GPL-2.0
#include "core/proc/proctrack.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/userfile.h"
#include "core/proc/buildid.h"
#include "core/proc/retire.h"

struct proc {
	pid_t pid;
	struct addr_space *as;
};

struct thread_comm {
	pid_t tid;
	char comm[TASK_COMM_LEN];
	uint64_t seq;		/* the tracker's comm counter when set: dates it against an exit */
};

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

struct file_table {
	struct hashmap files;	/* open_file -> open_file */
	unsigned int nr_open;
	unsigned int max_open;
	/*
	 * The paths of the tracker's mappings, each kept once (string ->
	 * itself): a mapping costs its 56 bytes, not its path again, and
	 * address spaces can share their arrays.
	 */
	struct hashmap paths;
	struct hashmap by_build_id;	/* bid_entry -> itself */
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
 * written stands for a path: owned by root and writable by no one else.
 */
struct bid_entry {
	const char *path;	/* the tracker's pooled copy: compared as a pointer */
	struct build_id bid;
	struct open_file *f;
};

struct proctrack {
	struct file_table files;
	struct hashmap procs;		/* pid -> struct proc */
	struct hashmap comms;		/* tid -> struct thread_comm */
	struct hashmap kinds;		/* pid -> KIND_USER or KIND_KERNEL (pid is the key) */
	struct addr_space *all;		/* every space ever made, for freeing */
	/* Images that ended and still hold their mappings: settled, then released. */
	struct addr_space **ended;
	size_t nr_ended, cap_ended;
	/* Released images, to be freed (proctrack__free_released). */
	struct addr_space **released;
	size_t nr_released, cap_released;
	/* What a pid whose image was freed points at: released, mapping nothing. */
	struct addr_space *gone;
	uint64_t newest_time;		/* of the execs, forks and exits applied */
	/*
	 * Threads that exited and pids whose image was freed: their entries
	 * (comm, kind, the pid's) go a grace later (proctrack__settle).
	 */
	struct retire_queue retiring;
	uint64_t comm_seq;		/* counts comms set, to tell a reused tid's from the old one's */
	/*
	 * The latest time a forgotten pid's process may have run: a sample
	 * dated before it and before every image its pid has now may be a
	 * forgotten process's, so it is late, not the current one's.
	 */
	uint64_t forgot_until;
	struct proctrack_counts counts;
	int64_t record_wall_ns;		/* of the record being applied; 0: now */
	unsigned int next_id;
};

static uint64_t pid_hash(const void *key)
{
	return hash_u64(*(const pid_t *)key);
}

/* Keys that are small integers stored in the pointer itself. */
static uint64_t value_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool value_equal(const void *a, const void *b)
{
	return a == b;
}

static bool pid_equal(const void *a, const void *b)
{
	return *(const pid_t *)a == *(const pid_t *)b;
}

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

/* Half of what the process may open; raise the soft limit to the hard one first. */
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
	return rl.rlim_cur > 1 << 20 ? 1 << 19 : (unsigned int)(rl.rlim_cur / 2);
}

struct proctrack *proctrack__new(void)
{
	struct proctrack *pt = calloc(1, sizeof(*pt));

	if (!pt)
		return NULL;
	hashmap__init(&pt->files.files, file_hash, file_equal);
	hashmap__init(&pt->files.paths, hashmap_str_hash, hashmap_str_equal);
	hashmap__init(&pt->files.by_build_id, bid_hash, bid_equal);
	pt->files.max_open = fd_budget();
	hashmap__init(&pt->procs, pid_hash, pid_equal);
	hashmap__init(&pt->comms, pid_hash, pid_equal);
	hashmap__init(&pt->kinds, value_hash, value_equal);
	return pt;
}

/* Paths of a tracker's spaces are in its pool; a space made elsewhere owns them. */
static void mapping_free(const struct addr_space *as, struct mapping *m)
{
	if (!as->files)
		free(m->path);
	m->path = NULL;
}

/* Drop as's hold on its array of mappings (shared after a fork until one side changes). */
static void release_maps(struct addr_space *as)
{
	if (as->maps_refs && --*as->maps_refs) {
		as->maps = NULL;	/* another space still reads it */
	} else {
		for (size_t i = 0; i < as->nr_maps; i++)
			mapping_free(as, &as->maps[i]);
		free(as->maps);
		free(as->maps_refs);
	}
	as->maps_refs = NULL;
	as->maps = NULL;
	as->nr_maps = as->cap_maps = 0;
}

/* as's mappings become maps (sorted, disjoint, its own): nr of them in room for cap. */
static void adopt_maps(struct addr_space *as, struct mapping *maps, size_t nr, size_t cap)
{
	release_maps(as);
	as->maps = maps;
	as->nr_maps = nr;
	as->cap_maps = cap;
	as->generation++;
}

static void addr_space_free(struct addr_space *as)
{
	release_maps(as);
	free(as);
}

void proctrack__free(struct proctrack *pt)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!pt)
		return;
	hashmap__for_each(&pt->procs, bkt, ent)
		free(ent->value);
	hashmap__for_each(&pt->comms, bkt, ent)
		free(ent->value);
	hashmap__for_each(&pt->files.files, bkt, ent) {
		struct open_file *f = ent->value;

		if (f->fd >= 0)
			close(f->fd);
		free(f);
	}
	hashmap__clear(&pt->files.files);
	hashmap__for_each(&pt->files.by_build_id, bkt, ent)
		free(ent->value);
	hashmap__clear(&pt->files.by_build_id);
	while (pt->all) {
		struct addr_space *next = pt->all->next_all;

		addr_space_free(pt->all);
		pt->all = next;
	}
	hashmap__for_each(&pt->files.paths, bkt, ent)
		free(ent->value);
	hashmap__clear(&pt->files.paths);
	hashmap__clear(&pt->procs);
	hashmap__clear(&pt->comms);
	hashmap__clear(&pt->kinds);
	free(pt->ended);
	free(pt->released);
	retire_queue__free(&pt->retiring);
	free(pt);
}

static struct addr_space *new_space(struct proctrack *pt, pid_t pid)
{
	struct addr_space *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	as->files = &pt->files;
	as->pid = pid;
	as->uid = (uid_t)-1;
	as->id = pt->next_id++;
	as->next_all = pt->all;
	if (pt->all)
		pt->all->prev_all = as;
	pt->all = as;
	return as;
}

/* path in ft's pool (added if new), or NULL when out of memory. */
static char *pool_path(struct file_table *ft, const char *path)
{
	char *copy = hashmap__find(&ft->paths, path);

	if (copy)
		return copy;
	copy = strdup(path);
	if (copy && hashmap__add(&ft->paths, copy, copy)) {
		free(copy);
		copy = NULL;
	}
	return copy;
}

/* path as the tracker keeps it (its pool), or a copy a space made elsewhere owns. */
static char *keep_path(const struct addr_space *as, const char *path)
{
	if (!path)
		path = "";
	return as->files ? pool_path(as->files, path) : strdup(path);
}

static int copy_mapping(const struct addr_space *as, struct mapping *dst,
			const struct mapping *src)
{
	*dst = *src;
	dst->path = keep_path(as, src->path);
	return dst->path ? 0 : -ENOMEM;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Room for more mappings in an array as alone writes (copied first if shared). */
static int own_maps(struct addr_space *as, size_t more)
{
	bool shared = as->maps_refs && *as->maps_refs > 1;
	size_t need = as->nr_maps + more, cap = as->cap_maps;
	struct mapping *maps;

	if (!shared && need <= cap)
		return 0;
	if (need > cap)
		cap = need < 16 ? 16 : need + need / 2;
	if (shared) {
		/* Paths are the pool's: copying the array copies the mappings. */
		maps = malloc(cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		memcpy(maps, as->maps, as->nr_maps * sizeof(*maps));
		--*as->maps_refs;
		as->maps_refs = NULL;
	} else {
		maps = realloc(as->maps, cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
	}
	as->maps = maps;
	as->cap_maps = cap;
	return 0;
}

/* The first mapping that ends after addr (binary search). */
static size_t first_ending_after(const struct addr_space *as, uint64_t addr)
{
	size_t lo = 0, hi = as->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (as->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int addr_space__insert(struct addr_space *as, const struct mapping *m)
{
	struct mapping piece[3];	/* what replaces the overlapped run: head, m, tail */
	size_t lo, hi, n = 0;
	int err;

	if (m->end <= m->start)
		return -EINVAL;
	/* The run [lo, hi) of mappings that m overlaps, found in O(log n). */
	lo = first_ending_after(as, m->start);
	for (hi = lo; hi < as->nr_maps && as->maps[hi].start < m->end; hi++)
		;
	err = own_maps(as, 2);
	if (err)
		return err;
	/* Keep the parts of the run outside [m->start, m->end), as the kernel would. */
	if (lo < hi && as->maps[lo].start < m->start) {
		err = copy_mapping(as, &piece[n], &as->maps[lo]);
		if (err)
			return err;
		piece[n++].end = m->start;
	}
	err = copy_mapping(as, &piece[n++], m);
	if (!err && lo < hi && as->maps[hi - 1].end > m->end) {
		const struct mapping *old = &as->maps[hi - 1];

		err = copy_mapping(as, &piece[n], old);
		if (!err) {
			piece[n].pgoff += m->end - old->start;
			piece[n++].start = m->end;
		}
	}
	if (err) {
		while (n)
			mapping_free(as, &piece[--n]);
		return err;
	}
	for (size_t i = lo; i < hi; i++)
		mapping_free(as, &as->maps[i]);
	memmove(&as->maps[lo + n], &as->maps[hi], (as->nr_maps - hi) * sizeof(*as->maps));
	memcpy(&as->maps[lo], piece, n * sizeof(*piece));
	as->nr_maps = as->nr_maps - (hi - lo) + n;
	as->generation++;
	return 0;
}

const struct mapping *addr_space__find(const struct addr_space *as, uint64_t addr)
{
	size_t i = first_ending_after(as, addr);

	if (i < as->nr_maps && as->maps[i].start <= addr)
		return &as->maps[i];
	return NULL;
}

/*
 * Read maps in /proc/PID/maps format: all lines first, sorted once, then
 * put in place. /proc lists a process's mappings sorted and disjoint, so
 * this is linear but for the sort; a file that lists overlaps (it is
 * another format's) is inserted one mapping at a time.
 */
int addr_space__load_maps_file(struct addr_space *as, const char *path)
{
	FILE *f = fopen(path, "re");
	struct mapping *got = NULL;
	size_t nr = 0, cap = 0;
	char *line = NULL;
	size_t len = 0;
	bool disjoint = true;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0) {
		struct mapping m = { 0 };
		char perms[8], *file;
		unsigned int maj, min;
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, &off) < 7)
			continue;
		if (!strchr(perms, 'x') || m.end <= m.start)
			continue;
		file = line + off;
		file[strcspn(file, "\n")] = '\0';
		m.dev = makedev(maj, min);
		m.exec = true;
		if (nr == cap) {
			struct mapping *tmp = realloc(got, (cap = cap ? 2 * cap : 64) * sizeof(*got));

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			got = tmp;
		}
		err = copy_mapping(as, &got[nr], &(struct mapping){ .start = m.start,
								   .end = m.end,
								   .pgoff = m.pgoff,
								   .dev = m.dev,
								   .ino = m.ino,
								   .exec = true,
								   .path = file });
		if (!err)
			nr++;
	}
	free(line);
	fclose(f);
	if (nr)
		qsort(got, nr, sizeof(*got), cmp_mapping);
	for (size_t i = 1; i < nr; i++)
		disjoint &= got[i - 1].end <= got[i].start;
	if (!err && disjoint && !as->nr_maps) {
		adopt_maps(as, got, nr, nr);
		return 0;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!err)
			err = addr_space__insert(as, &got[i]);
		mapping_free(as, &got[i]);
	}
	free(got);
	return err;
}

static bool read_comm(pid_t pid, pid_t tid, char *buf, size_t len);

/* What /proc/PID/status says of a process; uid (uid_t)-1 and tgid 0 where it is gone. */
struct proc_status {
	uid_t uid;	/* real */
	pid_t tgid;	/* pid itself for a process; another for a thread's id */
	char state;	/* 'Z' for a zombie, 'X' dead */
};

static void read_status(pid_t pid, struct proc_status *st)
{
	char path[64], line[256], state;
	unsigned long uid;
	int tgid;
	FILE *f;

	*st = (struct proc_status){ .uid = (uid_t)-1 };
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* A comm is one line of at most 64 escaped bytes: no other line can be forged by it. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "State: %c", &state) == 1)
			st->state = state;
		else if (sscanf(line, "Tgid: %d", &tgid) == 1)
			st->tgid = tgid;
		else if (sscanf(line, "Uid: %lu", &uid) == 1) {
			st->uid = (uid_t)uid;
			break;	/* after State and Tgid */
		}
	}
	fclose(f);
}

/* The real uid of a running process (/proc/PID/status), or (uid_t)-1. */
static uid_t read_uid(pid_t pid)
{
	struct proc_status st;

	read_status(pid, &st);
	return st.uid;
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
	struct bid_entry key = { .path = hashmap__find(&ft->paths, m->path), .bid = *bid }, *e;

	e = key.path ? hashmap__find(&ft->by_build_id, &key) : NULL;
	if (!e || e->f->fd < 0 || e->f->conflict)
		return false;
	m->dev = e->f->dev;
	m->ino = e->f->ino;
	return true;
}

/*
 * Remember f, kept open (st: its fstat), as the file at path with build-id
 * bid, if it is root's alone (see struct bid_entry).
 */
static void remember_build_id(struct file_table *ft, const char *path,
			      const struct build_id *bid, struct open_file *f,
			      const struct stat *st)
{
	struct bid_entry *e;

	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH)))
		return;		/* each record of it looks again */
	e = calloc(1, sizeof(*e));
	if (!e)
		return;
	e->path = pool_path(ft, path);
	e->bid = *bid;
	e->f = f;
	/* Not remembered when out of memory (or known): the next record looks again. */
	if (!e->path || hashmap__find(&ft->by_build_id, e) || hashmap__add(&ft->by_build_id, e, e))
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
static void open_binary(struct proctrack *pt, pid_t pid, struct mapping *m,
			const struct build_id *rec)
{
	/* A file found by path must be no newer than the mmap (see struct open_file). */
	struct expect bound = { .not_after_ns = pt->record_wall_ns ? pt->record_wall_ns
								   : wall_ns(),
				.bid = rec };
	struct expect very = { .bid = rec };
	struct open_file *f;
	char path[4200];
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
	if (pid > 0) {
		/* The very file the process maps, deleted or not: no check of times needed. */
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 m->start, m->end);
		fd = open_matching(path, m, &very, &st);
		if (fd < 0) {
			snprintf(path, sizeof(path), "/proc/%d/root%s", (int)pid, m->path);
			fd = open_matching(path, m, &bound, &st);
		}
	}
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
				remember_build_id(&pt->files, m->path, rec, f, &st);
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
			remember_build_id(&pt->files, m->path, rec, f, &st);
	} else if (fd >= 0) {
		close(fd);	/* out of fds: fewer names later, never wrong ones */
	}
}

static struct proc *find_proc(struct proctrack *pt, pid_t pid)
{
	return hashmap__find(&pt->procs, &pid);
}

static struct proc *add_proc(struct proctrack *pt, pid_t pid, struct addr_space *as)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->as = as;
	if (hashmap__add(&pt->procs, &p->pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

bool proctrack__knows(struct proctrack *pt, pid_t pid)
{
	return find_proc(pt, pid) != NULL;
}

struct addr_space *proctrack__addr_space(struct proctrack *pt, pid_t pid)
{
	struct proc *p = find_proc(pt, pid);
	struct addr_space *as;
	char path[64];

	if (p)
		return p->as;
	as = new_space(pt, pid);
	if (!as)
		return NULL;
	/*
	 * Found running now: it began after any process of its pid the tracker
	 * forgot, whose late samples stay late (0 at first: covers all time).
	 */
	as->start_time = pt->forgot_until;
	/* pid 0 (idle) has no user space; a vanished process has none left. */
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		addr_space__load_maps_file(as, path);
		read_comm(pid, pid, as->comm, sizeof(as->comm));
		as->uid = read_uid(pid);
		for (size_t i = 0; i < as->nr_maps; i++)
			open_binary(pt, pid, &as->maps[i], NULL);
	}
	p = add_proc(pt, pid, as);
	return p ? p->as : NULL;
}

static int read_image_start(struct proctrack *pt, pid_t pid, uint64_t time);

/*
 * pid's image to add mappings to: its current one, or, if that one was
 * released (its process ended long ago), a new one from the newest record
 * on: another process took the pid, and its fork record was lost.
 */
static struct addr_space *live_space(struct proctrack *pt, pid_t pid)
{
	struct addr_space *as = proctrack__addr_space(pt, pid);

	if (as && as->released) {
		read_image_start(pt, pid, pt->newest_time);
		as = proctrack__addr_space(pt, pid);
		if (as && as->released)
			return NULL;
	}
	return as;
}

void proctrack__set_record_time(struct proctrack *pt, int64_t wall_ns)
{
	pt->record_wall_ns = wall_ns;
}

int proctrack__mmap(struct proctrack *pt, pid_t pid, const struct mapping *m)
{
	return proctrack__mmap_build_id(pt, pid, m, NULL);
}

int proctrack__mmap_build_id(struct proctrack *pt, pid_t pid, const struct mapping *m,
			     const struct build_id *bid)
{
	struct mapping mine = *m;
	struct addr_space *as;

	if (!m->exec)
		return 0;
	as = live_space(pt, pid);
	if (!as)
		return -ENOMEM;
	open_binary(pt, pid, &mine, bid && bid->size ? bid : NULL);
	return addr_space__insert(as, &mine);
}

/* The clock settling goes by: the newest exec, fork or exit applied. */
static void note_time(struct proctrack *pt, uint64_t time)
{
	if (time > pt->newest_time)
		pt->newest_time = time;
}

/* Append as to a growing list of images; 0 or -ENOMEM. */
static int push_image(struct addr_space ***list, size_t *nr, size_t *cap, struct addr_space *as)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct addr_space **l = realloc(*list, ncap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		*list = l;
		*cap = ncap;
	}
	(*list)[(*nr)++] = as;
	return 0;
}

/*
 * as ended at time (side-band clock): listed once for settling. Without a
 * time nothing can be dated against it, and it keeps its mappings.
 */
static int image_ended(struct proctrack *pt, struct addr_space *as, uint64_t time)
{
	if (!time || as->released)
		return 0;
	if (as->end_time) {
		as->end_time = time > as->end_time ? time : as->end_time;
		return 0;	/* listed already */
	}
	as->end_time = time;
	return push_image(&pt->ended, &pt->nr_ended, &pt->cap_ended, as);
}

int proctrack__exec(struct proctrack *pt, pid_t pid, const char *comm, uint64_t time)
{
	struct proc *p = find_proc(pt, pid);
	struct addr_space *as = new_space(pt, pid);

	note_time(pt, time);
	if (!as)
		return -ENOMEM;
	snprintf(as->comm, sizeof(as->comm), "%s", comm ? comm : "");
	as->start_time = time;
	as->start_wall_ns = pt->record_wall_ns ? pt->record_wall_ns : wall_ns();
	/* A set-user-ID program changes it: read it now, while the process runs. */
	as->uid = read_uid(pid);
	if (p) {
		as->older = p->as;
		p->as = as;
		return image_ended(pt, as->older, time);
	}
	return add_proc(pt, pid, as) ? 0 : -ENOMEM;
}

static struct addr_space *gone_space(struct proctrack *pt);

/*
 * The image of a sample of pid dated t1, before every image the tracker
 * has for it: a process it forgot may have run then (late: [unknown] user
 * frames, not another process's names), else the pid's current one.
 */
static struct addr_space *before_known(struct proctrack *pt, pid_t pid, uint64_t t1)
{
	struct addr_space *gone = t1 && t1 < pt->forgot_until ? gone_space(pt) : NULL;

	return gone ? gone : proctrack__addr_space(pt, pid);
}

unsigned int proctrack__images(struct proctrack *pt, pid_t pid, uint64_t t0, uint64_t t1,
			       struct addr_space **out, unsigned int max)
{
	/* An unknown pid is read from /proc only if no forgotten process may have run then. */
	struct proc *p = find_proc(pt, pid);
	struct addr_space *as = p ? p->as : NULL;
	uint64_t end = UINT64_MAX;	/* of the image before, newest first */
	unsigned int n = 0;

	if (!max)
		return 0;
	/* Bounded by the images the records made: one per exec or fork of pid. */
	for (; as && n < max; end = as->start_time, as = as->older) {
		if (as->start_time > t1)
			continue;	/* began after the interval */
		if (end < t0)
			break;		/* ended before it, as did all older ones */
		out[n++] = as;
		if (as->start_time <= t0)
			break;		/* it covers the interval's start: older ones ran before */
	}
	if (!n)
		out[n++] = before_known(pt, pid, t1);
	return out[0] ? n : 0;
}

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

/* Whether cur maps m as m says (same place, file and offset). */
static bool maps_same(const struct addr_space *cur, const struct mapping *m)
{
	const struct mapping *c = addr_space__find(cur, m->start);

	return c && c->start == m->start && c->end == m->end && c->pgoff == m->pgoff &&
	       c->dev == m->dev && c->ino == m->ino;
}

/* Whether m overlaps a mapping of cur that is of another file or offset. */
static bool maps_other(const struct addr_space *cur, const struct mapping *m)
{
	for (size_t i = first_ending_after(cur, m->start);
	     i < cur->nr_maps && cur->maps[i].start < m->end; i++) {
		const struct mapping *c = &cur->maps[i];

		if (c->dev != m->dev || c->ino != m->ino ||
		    c->pgoff - c->start != m->pgoff - m->start)
			return true;
	}
	return false;
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
		release_maps(&fresh);
		return err == -ENOMEM ? err : 0;
	}
	/* A released image's process ended long ago: /proc shows another one. */
	other = cur->released;
	for (size_t i = 0; i < fresh.nr_maps && !other; i++)
		other = maps_other(cur, &fresh.maps[i]);
	/* What the tracker has that is gone from /proc: an unmap, or the old image. */
	for (size_t i = 0; i < cur->nr_maps && !other; i++)
		other = mapping__is_file(&cur->maps[i]) && !maps_same(&fresh, &cur->maps[i]);
	if (other) {
		/* An exec the records did not tell, or unmaps: a new image from now on. */
		err = read_image_start(pt, p->pid, time);
		if (!err) {
			cur = p->as;
			adopt_maps(cur, fresh.maps, fresh.nr_maps, fresh.cap_maps);
			fresh.maps = NULL;
			fresh.nr_maps = 0;
		}
	} else {
		for (size_t i = 0; i < fresh.nr_maps && !err; i++)
			if (!maps_same(cur, &fresh.maps[i]))
				err = addr_space__insert(cur, &fresh.maps[i]);
	}
	for (size_t i = 0; i < cur->nr_maps; i++)
		open_binary(pt, p->pid, &cur->maps[i], NULL);
	release_maps(&fresh);
	return err ? err : 1;
}

/* A new image of pid from time on, named as /proc names the process now. */
static int read_image_start(struct proctrack *pt, pid_t pid, uint64_t time)
{
	char comm[TASK_COMM_LEN] = "";

	read_comm(pid, pid, comm, sizeof(comm));
	return proctrack__exec(pt, pid, comm, time);
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
		p = find_proc(pt, pid);
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

int proctrack__fork(struct proctrack *pt, pid_t pid, pid_t ppid, uint64_t time)
{
	struct addr_space *parent = proctrack__addr_space(pt, ppid);
	struct addr_space *as;
	struct proc *p;

	note_time(pt, time);
	if (!parent)
		return -ENOMEM;
	as = new_space(pt, pid);
	if (!as)
		return -ENOMEM;
	memcpy(as->comm, parent->comm, sizeof(as->comm));
	as->start_time = time;
	as->start_wall_ns = pt->record_wall_ns ? pt->record_wall_ns : wall_ns();
	as->uid = parent->uid;
	if (parent->nr_maps) {
		/* Shared until either side maps or unmaps something: a fork costs no copy. */
		if (!parent->maps_refs) {
			parent->maps_refs = malloc(sizeof(*parent->maps_refs));
			if (!parent->maps_refs)
				return -ENOMEM;
			*parent->maps_refs = 1;
		}
		++*parent->maps_refs;
		as->maps_refs = parent->maps_refs;
		as->maps = parent->maps;
		as->nr_maps = parent->nr_maps;
		as->cap_maps = parent->cap_maps;
	}
	p = find_proc(pt, pid);
	if (p) {
		/* pid reuse within one profile */
		as->older = p->as;
		p->as = as;
		return image_ended(pt, as->older, time);
	}
	return add_proc(pt, pid, as) ? 0 : -ENOMEM;
}

int proctrack__exit(struct proctrack *pt, pid_t pid, pid_t tid, uint64_t time)
{
	struct proc *p = find_proc(pt, pid);
	struct retiree r = { .time = time ? time : pt->newest_time, .comm_seq = pt->comm_seq,
			     .pid = pid, .tid = tid };

	note_time(pt, time);
	/* Its comm (and the main thread's: its process's kind) go a grace later. */
	if (tid > 0)
		retire_queue__push(&pt->retiring, &r);
	if (!p || p->as->released)
		return 0;	/* never sampled nor mapped, or let go already: nothing to let go */
	if (pid == tid)
		p->as->leader_exited = true;
	/* Until then a thread's exit is not the end: the leader's marks it, the last one's dates it. */
	if (!p->as->leader_exited)
		return 0;
	return image_ended(pt, p->as, time);
}

/* Whether pid's current image is as and /proc still shows the process (threads left). */
static bool still_running(struct proctrack *pt, const struct addr_space *as)
{
	struct proc *p = find_proc(pt, as->pid);
	struct proc_status st;

	if (!p || p->as != as)
		return false;	/* a later image began: this one is over */
	/*
	 * Not a zombie waiting for its parent, nor a thread of another
	 * process that took the number (/proc/TID resolves too).
	 */
	read_status(as->pid, &st);
	return st.tgid == as->pid && st.state != 'Z' && st.state != 'X';
}

static struct thread_comm *find_comm(struct proctrack *pt, pid_t tid);

/* A thread that exited a grace ago: its comm, and its process's kind if it was the main one. */
static void retire_thread(struct proctrack *pt, const struct retiree *r)
{
	struct thread_comm *tc = find_comm(pt, r->tid);

	/* One set since the exit is a new thread's that took the tid. */
	if (tc && tc->seq <= r->comm_seq) {
		hashmap__remove(&pt->comms, &r->tid);
		free(tc);
		pt->counts.forgotten_threads++;
	}
	/* Read again if the pid runs anything later. */
	if (r->tid == r->pid)
		hashmap__remove(&pt->kinds, (void *)(uintptr_t)r->pid);
}

/* A pid whose image was freed a grace ago: its entry, unless a new image began since. */
static void retire_pid(struct proctrack *pt, const struct retiree *r)
{
	struct proc *p = find_proc(pt, r->pid);

	if (p && p->as != pt->gone)
		return;
	/* Gone already (the pid ended twice within the grace): the later one's time counts too. */
	if (r->time > pt->forgot_until)
		pt->forgot_until = r->time;
	if (!p)
		return;
	hashmap__remove(&pt->procs, &r->pid);
	free(p);
	pt->counts.forgotten_pids++;
}

size_t proctrack__settle(struct proctrack *pt, uint64_t grace_ns)
{
	struct retiree r;
	size_t n = 0;

	if (pt->newest_time <= grace_ns)
		return 0;
	/* Bounded by the exits and freed images queued. */
	while (retire_queue__pop_before(&pt->retiring, pt->newest_time - grace_ns, &r)) {
		if (r.tid)
			retire_thread(pt, &r);
		else
			retire_pid(pt, &r);
	}
	for (size_t i = 0; i < pt->nr_ended; i++) {
		struct addr_space *as = pt->ended[i];

		if (as->settled || as->end_time >= pt->newest_time - grace_ns)
			continue;
		if (as->leader_exited && still_running(pt, as)) {
			/* Its other threads run on: it ends again with the last one's exit. */
			as->end_time = pt->newest_time;
			continue;
		}
		as->settled = true;
		n++;
	}
	return n;
}

size_t proctrack__release_settled(struct proctrack *pt)
{
	size_t kept = 0, n = 0;

	for (size_t i = 0; i < pt->nr_ended; i++) {
		struct addr_space *as = pt->ended[i];

		if (!as->settled) {
			pt->ended[kept++] = as;
			continue;
		}
		release_maps(as);
		as->generation++;
		as->released = true;
		n++;
		/* Out of memory, it is only not freed before the tracker is. */
		push_image(&pt->released, &pt->nr_released, &pt->cap_released, as);
	}
	pt->nr_ended = kept;
	return n;
}

/* The image pids whose own was freed point at (made once); NULL when out of memory. */
static struct addr_space *gone_space(struct proctrack *pt)
{
	if (!pt->gone) {
		pt->gone = new_space(pt, 0);
		if (pt->gone)
			pt->gone->settled = pt->gone->released = true;
	}
	return pt->gone;
}

/* Take as out of its pid's chain of images; false if it cannot be (out of memory). */
static bool unlink_image(struct proctrack *pt, struct addr_space *as)
{
	struct proc *p = find_proc(pt, as->pid);
	struct addr_space *newer;

	if (!p)
		return true;
	if (p->as == as) {
		struct addr_space *gone = gone_space(pt);
		struct retiree r = { .time = pt->newest_time, .pid = as->pid };

		if (!gone)
			return false;
		p->as = gone;
		/* The pid's entry goes a grace later, unless another process takes it first. */
		retire_queue__push(&pt->retiring, &r);
		return true;
	}
	/* Bounded by the images the records made for this pid. */
	for (newer = p->as; newer && newer->older != as; newer = newer->older)
		;
	if (newer) {
		/*
		 * What ran before the newer image is over: a sample dated then
		 * is late, not the older images' (stretched over as's time) nor
		 * the current one's (if none were left).
		 */
		struct addr_space *gone = gone_space(pt);

		if (!gone)
			return false;
		newer->older = gone;
	}
	return true;
}

size_t proctrack__free_released(struct proctrack *pt,
				void (*forget)(void *ctx, const struct addr_space *as), void *ctx)
{
	size_t n = 0, kept = 0;

	for (size_t i = 0; i < pt->nr_released; i++) {
		struct addr_space *as = pt->released[i];

		if (!unlink_image(pt, as)) {
			pt->released[kept++] = as;
			continue;
		}
		if (forget)
			forget(ctx, as);
		if (as->prev_all)
			as->prev_all->next_all = as->next_all;
		else
			pt->all = as->next_all;
		if (as->next_all)
			as->next_all->prev_all = as->prev_all;
		addr_space_free(as);
		n++;
	}
	pt->nr_released = kept;
	return n;
}

static struct thread_comm *find_comm(struct proctrack *pt, pid_t tid)
{
	return hashmap__find(&pt->comms, &tid);
}

/*
 * Keep tid's comm, dated seq: a record's (a COMM, a FORK) by the tracker's
 * counter, so that one set after the thread's exit is taken for a new
 * thread's; one read from /proc (or a placeholder) by 0, older than any
 * exit: read again if wanted once an exit of the tid is a grace old.
 */
static int store_comm(struct proctrack *pt, pid_t tid, const char *comm, uint64_t seq)
{
	struct thread_comm *tc = find_comm(pt, tid);

	if (!tc) {
		tc = calloc(1, sizeof(*tc));
		if (!tc)
			return -ENOMEM;
		tc->tid = tid;
		if (hashmap__add(&pt->comms, &tc->tid, tc)) {
			free(tc);
			return -ENOMEM;
		}
	}
	snprintf(tc->comm, sizeof(tc->comm), "%s", comm);
	tc->seq = seq;
	return 0;
}

int proctrack__set_comm(struct proctrack *pt, pid_t tid, const char *comm)
{
	return store_comm(pt, tid, comm, ++pt->comm_seq);
}

static bool read_comm(pid_t pid, pid_t tid, char *buf, size_t len)
{
	char path[96];
	FILE *f;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)pid, (int)tid);
	f = fopen(path, "re");
	if (!f)
		return false;
	ok = fgets(buf, len, f) != NULL;
	fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok;
}

/* PF_KTHREAD of include/linux/sched.h, in the flags field of /proc/PID/stat. */
#define PF_KTHREAD 0x00200000
enum { KIND_USER = 1, KIND_KERNEL };

/* Whether pid is a kernel thread, from /proc/PID/stat; a process gone is taken for a user one. */
static int read_kind(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long flags;
	const char *after;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return KIND_USER;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return KIND_USER;
	buf[n] = '\0';
	/* The comm may hold spaces and parentheses: the fields start after the last ')'. */
	after = strrchr(buf, ')');
	if (!after || sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return KIND_USER;
	return flags & PF_KTHREAD ? KIND_KERNEL : KIND_USER;
}

bool proctrack__is_kernel_thread(struct proctrack *pt, pid_t pid)
{
	uintptr_t kind = (uintptr_t)hashmap__find(&pt->kinds, (void *)(uintptr_t)pid);

	if (!kind) {
		kind = (uintptr_t)read_kind(pid);
		/* Not remembered when out of memory: read again next time. */
		hashmap__add(&pt->kinds, (void *)(uintptr_t)pid, (void *)kind);
	}
	return kind == KIND_KERNEL;
}

const char *proctrack__comm(struct proctrack *pt, pid_t pid, pid_t tid)
{
	struct thread_comm *tc = find_comm(pt, tid);
	char buf[TASK_COMM_LEN + 2];

	if (tc)
		return tc->comm;
	if (!read_comm(pid, tid, buf, sizeof(buf)))
		snprintf(buf, sizeof(buf), ":%d", (int)tid);	/* as perf script does */
	if (store_comm(pt, tid, buf, 0))
		return ":?";
	return find_comm(pt, tid)->comm;
}

int proctrack__inherit_comm(struct proctrack *pt, pid_t tid, pid_t ppid, pid_t ptid)
{
	return proctrack__set_comm(pt, tid, proctrack__comm(pt, ppid, ptid));
}

void proctrack__counts(const struct proctrack *pt, struct proctrack_counts *out)
{
	*out = pt->counts;
	out->procs = pt->procs.size;
	out->comms = pt->comms.size;
	out->kinds = pt->kinds.size;
	out->retiring = retire_queue__len(&pt->retiring);
}
