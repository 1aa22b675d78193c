// SPDX-License-Identifier: GPL-2.0
#include "core/sym/perfmap.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/log.h"
#include "core/lib/pidstart.h"
#include "core/lib/userfile.h"

/*
 * What is kept of one map, and of all maps at once: a long-running JVM
 * writes a few hundred thousand entries, and tens of MB; a longer line is
 * no name any JIT writes. A map that has more is cut with a warning (its
 * first entries kept), so that a user's 256 MiB of tiny lines costs what a
 * real map does, not gigabytes.
 */
#define PERFMAP_MAX_SIZE (256UL << 20)	/* bytes of the file read */
#define PERFMAP_MAX_LINE 16384
#define PERFMAP_MAX_ENTRIES (1UL << 20)
#define PERFMAP_MAX_NAMES (64UL << 20)	/* bytes of names kept */
#define PERFMAP_MAX_TOTAL (256UL << 20)	/* entries and names of all maps loaded */

struct perfmap_sym {
	uint64_t start;
	uint64_t size;
	uint32_t line;		/* later lines describe newer code at the same place */
	uint32_t name;		/* offset in names */
};

struct perfmap {
	struct perfmap_sym *syms;	/* sorted by start */
	size_t nr, cap;
	char *names;		/* NUL-terminated, one after the other */
	size_t names_len, names_cap;
	size_t bytes;		/* counted against the total */
	/* The file, for sharing between processes that name one (hard links). */
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
	unsigned int refs;
	struct perfmap *next;
};

/* Maps loaded from /proc and /tmp, shared by inode; their bytes in all. */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct perfmap *cache;
static size_t total_bytes;

static int cmp_sym(const void *a, const void *b)
{
	const struct perfmap_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A hex number with or without 0x, then one space; no sign, no blanks, no overflow. */
static const char *parse_hex(const char *p, uint64_t *val)
{
	const char *start;
	int d;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	start = p;
	*val = 0;
	while ((d = hex_digit(*p)) >= 0) {
		if (*val >> 60)
			return NULL;
		*val = *val << 4 | d;
		p++;
	}
	return p > start && *p == ' ' ? p + 1 : NULL;
}

/* "START SIZE name": the name in *name, or false for anything else. */
static bool parse_line(const char *line, struct perfmap_sym *s, const char **name)
{
	const char *p = parse_hex(line, &s->start);

	if (!p || !(p = parse_hex(p, &s->size)))
		return false;
	if (!s->size || s->start + s->size < s->start || !*p)
		return false;
	*name = p;
	return true;
}

/* Why a map was cut, for the warning. */
enum cut_reason { CUT_NONE, CUT_SIZE, CUT_ENTRIES, CUT_NAMES, CUT_TOTAL, CUT_MEMORY };

struct reader {
	struct perfmap *pm;
	size_t nr_lines;
	size_t budget;		/* bytes this map may still take of the total */
	enum cut_reason cut;
};

static bool grow(void **buf, size_t *cap, size_t need, size_t elem, size_t first)
{
	size_t ncap;
	void *tmp;

	if (need <= *cap)
		return true;
	ncap = *cap ? *cap : first;
	while (ncap < need)
		ncap *= 2;
	tmp = realloc(*buf, ncap * elem);
	if (!tmp)
		return false;
	*buf = tmp;
	*cap = ncap;
	return true;
}

/* One line (NUL-terminated); false once the map is full. */
static bool add_line(struct reader *r, const char *line)
{
	struct perfmap *pm = r->pm;
	struct perfmap_sym s;
	const char *name;
	size_t len, cost;

	r->nr_lines++;
	if (!parse_line(line, &s, &name))
		return true;
	len = strlen(name) + 1;
	cost = sizeof(s) + len;
	if (pm->nr == PERFMAP_MAX_ENTRIES)
		r->cut = CUT_ENTRIES;
	else if (pm->names_len + len > PERFMAP_MAX_NAMES)
		r->cut = CUT_NAMES;
	else if (cost > r->budget)
		r->cut = CUT_TOTAL;
	else if (!grow((void **)&pm->syms, &pm->cap, pm->nr + 1, sizeof(s), 256) ||
		 !grow((void **)&pm->names, &pm->names_cap, pm->names_len + len, 1, 4096))
		r->cut = CUT_MEMORY;
	if (r->cut)
		return false;
	memcpy(pm->names + pm->names_len, name, len);
	s.name = (uint32_t)pm->names_len;
	s.line = (uint32_t)r->nr_lines;
	pm->names_len += len;
	pm->syms[pm->nr++] = s;
	pm->bytes += cost;
	r->budget -= cost;
	return true;
}

/*
 * Reads the map's lines as they come, at most PERFMAP_MAX_SIZE bytes: a
 * line longer than PERFMAP_MAX_LINE is skipped, and the last line of a
 * file read only in part (still being written) is dropped.
 */
static void read_lines(int fd, struct reader *r)
{
	enum { CHUNK = 1 << 16 };
	char *buf = malloc(CHUNK + PERFMAP_MAX_LINE + 1);
	size_t have = 0, done = 0;
	bool skipping = false, eof = false;

	if (!buf) {
		r->cut = CUT_MEMORY;
		return;
	}
	while (!eof && !r->cut) {
		size_t want = CHUNK, off = 0;
		ssize_t n;

		if (done + want > PERFMAP_MAX_SIZE)
			want = PERFMAP_MAX_SIZE - done;
		n = want ? read(fd, buf + have, want) : 0;
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			eof = true;
			if (!want) {
				char c;

				/* More in the file than is read: its last line here is cut. */
				if (read(fd, &c, 1) == 1) {
					r->cut = CUT_SIZE;
					break;
				}
			}
		} else {
			have += (size_t)n;
			done += (size_t)n;
		}
		for (;;) {
			char *nl = memchr(buf + off, '\n', have - off);

			if (!nl) {
				if (eof && have > off && !skipping && have - off <= PERFMAP_MAX_LINE) {
					buf[have] = '\0';
					add_line(r, buf + off);
				}
				break;
			}
			*nl = '\0';
			if (!skipping && nl - (buf + off) <= PERFMAP_MAX_LINE && !add_line(r, buf + off))
				break;
			if (skipping) {
				skipping = false;
				r->nr_lines++;
			}
			off = (size_t)(nl - buf) + 1;
		}
		/* The rest is the start of a line: kept, unless too long to be one. */
		memmove(buf, buf + off, have - off);
		have -= off;
		if (have > PERFMAP_MAX_LINE) {
			skipping = true;
			have = 0;
		}
	}
	free(buf);
}

static const char *const cut_why[] = {
	[CUT_SIZE] = "larger than 256 MiB",
	[CUT_ENTRIES] = "more than 1048576 entries",
	[CUT_NAMES] = "more than 64 MiB of names",
	[CUT_TOTAL] = "the 256 MiB for all perf maps used up",
	[CUT_MEMORY] = "out of memory",
};

/* The map in fd, its first entries as far as the budgets allow (path for the warning). */
static struct perfmap *read_map(int fd, const char *path, size_t budget)
{
	struct perfmap *pm = calloc(1, sizeof(*pm));
	struct reader r = { pm, 0, budget, CUT_NONE };

	if (!pm)
		return NULL;
	read_lines(fd, &r);
	if (r.cut)
		pr_warn("warning: %s: %zu entries of its first %zu lines read, the rest ignored "
			"(%s)\n", path, pm->nr, r.nr_lines, cut_why[r.cut]);
	/* Sorted by start, then line: the lookup takes the last, newest entry at a start. */
	if (pm->nr)
		qsort(pm->syms, pm->nr, sizeof(*pm->syms), cmp_sym);
	pm->refs = 1;
	return pm;
}

struct perfmap *perfmap__load_file(const char *path)
{
	struct perfmap *pm;
	uint64_t size;
	int fd = userfile__open(path, false, UINT64_MAX, &size);

	if (fd < 0)
		return NULL;
	pm = read_map(fd, path, PERFMAP_MAX_TOTAL);
	close(fd);
	return pm;
}

/*
 * The map of the file open as fd (st its attributes): the one loaded
 * already when another process names the same file (a hard link), else
 * read within what is left of the total.
 */
static struct perfmap *load_shared(int fd, const struct stat *st, const char *path)
{
	struct perfmap *pm;

	pthread_mutex_lock(&cache_lock);
	for (pm = cache; pm; pm = pm->next)
		if (pm->dev == st->st_dev && pm->ino == st->st_ino && pm->size == st->st_size &&
		    pm->mtime.tv_sec == st->st_mtim.tv_sec &&
		    pm->mtime.tv_nsec == st->st_mtim.tv_nsec) {
			pm->refs++;
			pthread_mutex_unlock(&cache_lock);
			return pm;
		}
	/* Read under the lock: the budget is what no other map holds. */
	pm = read_map(fd, path, PERFMAP_MAX_TOTAL - total_bytes);
	if (pm) {
		pm->dev = st->st_dev;
		pm->ino = st->st_ino;
		pm->size = st->st_size;
		pm->mtime = st->st_mtim;
		pm->next = cache;
		cache = pm;
		total_bytes += pm->bytes;
	}
	pthread_mutex_unlock(&cache_lock);
	return pm;
}

/* When the file was made: its birth time where the file system keeps one, else its ctime. */
static int64_t file_birth_ns(int fd, const struct stat *st)
{
#ifdef STATX_BTIME
	struct statx stx;

	if (!statx(fd, "", AT_EMPTY_PATH, STATX_BTIME, &stx) && (stx.stx_mask & STATX_BTIME))
		return (int64_t)stx.stx_btime.tv_sec * 1000000000 + stx.stx_btime.tv_nsec;
#endif
	return (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
}

/* The pid the process of /proc/PID (dirfd) sees itself as (the last NStgid), for its map's name. */
static pid_t ns_pid(int dirfd, pid_t pid)
{
	char line[256];
	pid_t nspid = pid;
	int fd = openat(dirfd, "status", O_RDONLY | O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return pid;
	}
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "NStgid:", 7))
			continue;
		for (char *tok = strtok(line + 7, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
			nspid = (pid_t)atoi(tok);
		break;
	}
	fclose(f);
	return nspid;
}

struct perfmap *perfmap__load(pid_t pid, const char **warning, char *path, size_t path_len)
{
	return perfmap__load_checked(pid, PERFMAP_ANY_OWNER, 0, 0, warning, path, path_len);
}

/*
 * The directory to read pid's map under: the root of the process (its
 * /proc/PID/root: a process in a container writes its map there) if it is
 * the one meant, which began by began_ns; else ours (it is gone, or
 * another process took its pid). *st: the process's /proc/PID, or st_uid
 * (uid_t)-1 when gone. name and path get the map's name there.
 */
static int map_root(pid_t pid, int64_t began_ns, const struct perfmap_holder *holder,
		    struct stat *st, char *name, size_t name_len, char *path, size_t path_len)
{
	char proc_path[64];
	int pfd, root = -1;

	st->st_uid = (uid_t)-1;
	snprintf(proc_path, sizeof(proc_path), "/proc/%d", (int)pid);
	/* Every read below goes through this directory: of this process, or none. */
	pfd = open(proc_path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (pfd >= 0 && began_ns >= 0 && !fstat(pfd, st) && pidstart__began_by(pfd, began_ns) &&
	    (!holder || holder->held(holder->ctx)))
		root = openat(pfd, "root", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root >= 0) {
		snprintf(name, name_len, "tmp/perf-%d.map", (int)ns_pid(pfd, pid));
		snprintf(path, path_len, "%s/root/%s", proc_path, name);
	} else {
		st->st_uid = (uid_t)-1;
		root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
		snprintf(name, name_len, "tmp/perf-%d.map", (int)pid);
		snprintf(path, path_len, "/%s", name);
	}
	if (pfd >= 0)
		close(pfd);
	return root;
}

struct perfmap *perfmap__load_checked(pid_t pid, uid_t owner, int64_t not_before_ns,
				      int64_t began_ns, const char **warning, char *path,
				      size_t path_len)
{
	return perfmap__load_held(pid, owner, not_before_ns, began_ns, NULL, warning, path,
				  path_len);
}

struct perfmap *perfmap__load_held(pid_t pid, uid_t owner, int64_t not_before_ns,
				   int64_t began_ns, const struct perfmap_holder *holder,
				   const char **warning, char *path, size_t path_len)
{
	/*
	 * Anyone can create files in /tmp: no symlink followed there, nothing
	 * but a regular file (a FIFO would block the report), and nothing
	 * mounted over the name (a root-owned /proc file, new, whose contents
	 * its user wrote, bind-mounted in a namespace of theirs: issue 32).
	 */
	static const struct userfile_rules rules = { .no_mounts = true };
	struct stat proc_st, st;
	char name[64];
	struct perfmap *pm;
	uint64_t size;
	int root, fd;

	*warning = NULL;
	root = map_root(pid, began_ns, holder, &proc_st, name, sizeof(name), path, path_len);
	if (root < 0)
		return NULL;
	fd = userfile__open_at(root, name, &rules, UINT64_MAX, &size);
	close(root);
	if (fd == -EINVAL || fd == -ELOOP || fd == -EPERM) {
		*warning = fd == -ELOOP ? "a symlink in a directory others can write to" :
			   fd == -EPERM ? "a file mounted there, not made there" :
					  "not a regular file";
		return NULL;
	}
	if (fd < 0)
		return NULL;
	if (owner == PERFMAP_ANY_OWNER)
		owner = proc_st.st_uid != (uid_t)-1 ? proc_st.st_uid : geteuid();
	/* As perf does: a map not written by the process's user (or root) is not trusted. */
	if (fstat(fd, &st) || (st.st_uid != 0 && st.st_uid != owner)) {
		*warning = "not owned by the process's user or root";
		close(fd);
		return NULL;
	}
	/* A map made before the process started was written for another one of that pid. */
	if (not_before_ns && file_birth_ns(fd, &st) < not_before_ns) {
		*warning = "older than the process";
		close(fd);
		return NULL;
	}
	pm = load_shared(fd, &st, path);
	close(fd);
	return pm;
}

void perfmap__free(struct perfmap *pm)
{
	if (!pm)
		return;
	pthread_mutex_lock(&cache_lock);
	if (--pm->refs) {
		pthread_mutex_unlock(&cache_lock);
		return;
	}
	for (struct perfmap **link = &cache; *link; link = &(*link)->next)
		if (*link == pm) {
			*link = pm->next;
			total_bytes -= pm->bytes;
			break;
		}
	pthread_mutex_unlock(&cache_lock);
	free(pm->syms);
	free(pm->names);
	free(pm);
}

const char *perfmap__lookup(const struct perfmap *pm, uint64_t addr, uint64_t *offset)
{
	size_t lo = 0, hi = pm->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pm->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr - pm->syms[lo - 1].start >= pm->syms[lo - 1].size)
		return NULL;
	*offset = addr - pm->syms[lo - 1].start;
	return pm->names + pm->syms[lo - 1].name;
}
