// SPDX-License-Identifier: GPL-2.0
/*
 * The native store's processes: their executable mappings read from
 * /proc/PID/maps, each mapped file's table found, and native_pages written
 * before native_procs[tgid], so that the program never walks half a
 * process. Whatever a read changes is undone when it cannot finish.
 */
#include "backend-bpf/native_internal.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "core/lib/log.h"

/* Executable mappings a process may have: each is a page entry at least (-E2BIG past it). */
#define MAX_MAPPINGS NATIVE_MAX_PROC_PAGES
unsigned int native_store__test_reread_ms;

/* Entries of polled (processes not tracked, read lately) before the old ones go. */
#define MAX_POLLED 1024

struct polled {
	pid_t tgid;		/* the key */
	int64_t next_ms;	/* a poll reads it again from then on */
};

static void release_maps(struct addr_space *as)
{
	for (size_t i = 0; i < as->nr_maps; i++)
		free(as->maps[i].path);
	free(as->maps);
	as->maps = NULL;
	as->nr_maps = as->cap_maps = 0;
}

/* A file seen in this read: its other mappings take its table without another open. */
struct seen_file {
	uint64_t dev, ino;	/* the key */
	struct ntable *t;	/* NULL: refused */
};

static uint64_t seen_hash(const void *key)
{
	const struct seen_file *f = key;

	return hash_u64(f->dev * 31 + f->ino);
}

static bool seen_equal(const void *a, const void *b)
{
	const struct seen_file *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

/* What one read of a process found. */
struct reading {
	struct native_page_entry *entries;
	size_t nr_entries;
	struct ntable **tables;
	size_t nr_tables;
};

static void reading__drop(struct native_store *s, struct reading *r)
{
	for (size_t i = 0; i < r->nr_tables; i++)
		ntable__put(s, r->tables[i]);
	free(r->tables);
	free(r->entries);
	memset(r, 0, sizeof(*r));
}

/* The span of mapping m with table t (NULL: refused): its kind, table and bias. */
static void span_of(const struct mapping *m, const struct ntable *t, struct native_span *sp)
{
	struct unwind_image img = { .nr_loads = t ? t->nr_loads : 0 };
	uint64_t bias;

	memset(sp, 0, sizeof(*sp));
	sp->start = m->start;
	sp->end = m->end;
	sp->val.kind = NATIVE_PAGE_NO_TABLE;
	if (!t || t->way == NATIVE_WAY_NONE)
		return;
	memcpy(img.loads, t->loads, sizeof(img.loads));
	/* The vdso is mapped from its start: offset 0 of its image. */
	if (unwind_image__bias(&img, m->start, t->key.vdso ? 0 : m->pgoff, &bias))
		return;
	sp->val.bias = bias;		/* no executable segment there: its file says otherwise */
	sp->val.table = t->id;
	sp->val.kind = t->way == NATIVE_WAY_TABLE ? NATIVE_PAGE_TABLE : NATIVE_PAGE_FP;
}

/* Read the mappings of the process behind dirfd, find their tables, cut them into pages. */
static int read_process(struct native_store *s, pid_t tgid, int dirfd, struct reading *r)
{
	struct addr_space fresh = { .pid = tgid };
	const struct addr_space *as = NULL;
	struct native_span *spans = NULL;
	struct seen_file *seen = NULL;
	size_t nr_spans = 0, nr_seen = 0;
	struct hashmap files;
	char path[64];
	int err;

	memset(r, 0, sizeof(*r));
	hashmap__init(&files, seen_hash, seen_equal);
	/* The tracker opens each binary at first sight, under its rules. */
	if (s->pt)
		as = proctrack__addr_space(s->pt, tgid);
	snprintf(path, sizeof(path), "/proc/self/fd/%d/maps", dirfd);
	err = addr_space__load_maps_file(&fresh, path);
	if (err) {
		release_maps(&fresh);
		return err == -ENOMEM ? err : -ESRCH;
	}
	if (fresh.nr_maps > MAX_MAPPINGS) {
		err = -E2BIG;
		goto out;
	}
	spans = malloc((fresh.nr_maps ? fresh.nr_maps : 1) * sizeof(*spans));
	r->tables = malloc((fresh.nr_maps ? fresh.nr_maps : 1) * sizeof(*r->tables));
	if (!spans || !r->tables) {
		err = -ENOMEM;
		goto out;
	}
	seen = malloc((fresh.nr_maps ? fresh.nr_maps : 1) * sizeof(*seen));
	if (!seen) {
		err = -ENOMEM;
		goto out;
	}
	s->mark++;
	for (size_t i = 0; i < fresh.nr_maps && !err; i++) {
		const struct mapping *m = &fresh.maps[i];
		struct seen_file key = { .dev = m->dev, .ino = m->ino }, *f;
		struct ntable *t = NULL;

		/* Each binary may take long to compile: a stop ends the reading (no change). */
		if (interrupt__pending()) {
			err = -EINTR;
		} else if (m->path && !strcmp(m->path, "[vdso]")) {
			err = ntable__get_vdso(s, &t);
		} else if (!mapping__is_file(m)) {
			continue;	/* anonymous code (JIT): the program finds no page */
		} else if ((f = hashmap__find(&files, &key))) {
			t = f->t;
			if (t)
				t->refs++;
		} else {
			err = ntable__get(s, dirfd, as, m, &t);
			f = &seen[nr_seen++];
			*f = key;
			f->t = t;
			if (!err && hashmap__add(&files, f, f))
				err = -ENOMEM;
			if (err && t)
				ntable__put(s, t);
		}
		if (err)
			break;
		span_of(m, t, &spans[nr_spans++]);
		if (!t)
			continue;
		if (t->mark == s->mark) {
			ntable__put(s, t);	/* one reference a process */
		} else {
			t->mark = s->mark;
			r->tables[r->nr_tables++] = t;
		}
	}
	if (!err)
		err = native_pages__split((uint32_t)tgid, spans, nr_spans, NATIVE_MAX_PROC_PAGES,
					  &r->entries, &r->nr_entries);
out:
	hashmap__clear(&files);
	free(seen);
	free(spans);
	release_maps(&fresh);
	if (err)
		reading__drop(s, r);
	return err;
}

static int cmp_key(const struct native_page_key *x, const struct native_page_key *y)
{
	if (x->small != y->small)
		return x->small < y->small ? -1 : 1;
	return x->page < y->page ? -1 : x->page > y->page;
}

/*
 * The program's cached rules (native_cache) of every process stand no
 * more: called after native_pages entries changed or went, never before
 * (a walk that read the old epoch may cache what it found before the
 * change, under the old epoch).
 */
static void bump_epoch(struct native_store *s)
{
	__u32 zero = 0;

	s->epoch++;
	if (s->fds.epoch >= 0)
		bpf_map_update_elem(s->fds.epoch, &zero, &s->epoch, BPF_ANY);
}

/*
 * Make native_pages hold r's entries where it held old's (both sorted):
 * new and changed ones written, then the gone ones deleted, and the
 * epoch bumped where one changed or went. On a failed write, what was
 * written is put back as it was: -errno.
 */
static int write_pages(struct native_store *s, const struct native_page_entry *old, size_t nr_old,
		       const struct native_page_entry *new, size_t nr_new)
{
	size_t i = 0, j = 0, done;
	bool changed = false;
	int err = 0;

	for (j = 0; j < nr_new; j++) {
		while (i < nr_old && cmp_key(&old[i].key, &new[j].key) < 0)
			i++;
		if (i < nr_old && !cmp_key(&old[i].key, &new[j].key)) {
			if (!memcmp(&old[i].val, &new[j].val, sizeof(new[j].val)))
				continue;
			changed = true;
		}
		if (bpf_map_update_elem(s->fds.pages, &new[j].key, &new[j].val, BPF_ANY)) {
			err = -errno;
			break;
		}
	}
	if (err) {
		/* Undo: old's values back, and what old did not have deleted. */
		done = j;
		for (i = 0, j = 0; j < done; j++) {
			while (i < nr_old && cmp_key(&old[i].key, &new[j].key) < 0)
				i++;
			if (i < nr_old && !cmp_key(&old[i].key, &new[j].key))
				bpf_map_update_elem(s->fds.pages, &old[i].key, &old[i].val, BPF_ANY);
			else
				bpf_map_delete_elem(s->fds.pages, &new[j].key);
		}
		if (changed)
			bump_epoch(s);
		return err;
	}
	for (i = 0, j = 0; i < nr_old; i++) {
		while (j < nr_new && cmp_key(&new[j].key, &old[i].key) < 0)
			j++;
		if (j == nr_new || cmp_key(&new[j].key, &old[i].key)) {
			bpf_map_delete_elem(s->fds.pages, &old[i].key);
			changed = true;
		}
	}
	if (changed)
		bump_epoch(s);
	return 0;
}

/*
 * What tells a process from the next one under its pid (its start, in
 * ticks since boot) and from its own image before an exec (its
 * executable's device and inode). dirfd is /proc/PID. 0 or -ESRCH.
 */
static int proc_ident(int dirfd, uint64_t *start, dev_t *dev, ino_t *ino)
{
	char buf[1024];
	const char *after;
	struct stat st;
	ssize_t n;
	int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	/* The comm may hold spaces and parentheses: the fields start after the last ')'. */
	after = strrchr(buf, ')');
	if (!after || sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u "
			     "%*d %*d %*d %*d %*d %*d %" SCNu64, start) != 1)
		return -ESRCH;
	/* A kernel thread, or an executable gone: no identity to compare but the start. */
	if (fstatat(dirfd, "exe", &st, 0)) {
		st.st_dev = 0;
		st.st_ino = 0;
	}
	*dev = st.st_dev;
	*ino = st.st_ino;
	return 0;
}

/* proc_ident of pid, by its /proc directory: 0 or -ESRCH. */
static int proc_ident_of(pid_t pid, uint64_t *start, dev_t *dev, ino_t *ino)
{
	char path[32];
	int dirfd, err;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return -ESRCH;
	err = proc_ident(dirfd, start, dev, ino);
	close(dirfd);
	return err;
}

static struct nproc *find_proc(const struct native_store *s, pid_t tgid)
{
	return hashmap__find(&s->procs, &tgid);
}

/* Forget np: its native_procs entry first (the program stops walking it), then its pages. */
static void drop_proc(struct native_store *s, struct nproc *np)
{
	__u32 key = (__u32)np->tgid;

	bpf_map_delete_elem(s->fds.procs, &key);
	if (np->copies_only)
		s->nr_copies_only--;
	write_pages(s, np->entries, np->nr_entries, NULL, 0);
	s->pages_used -= np->nr_entries;
	for (size_t i = 0; i < np->nr_tables; i++)
		ntable__put(s, np->tables[i]);
	hashmap__remove(&s->procs, &np->tgid);
	free(np->tables);
	free(np->entries);
	free(np);
}

/* Read tgid (new, or np's again) and put it in the maps whole, or change nothing. */
static int read_in(struct native_store *s, pid_t tgid, struct nproc *np)
{
	struct native_proc val = { 0 };
	struct reading r;
	__u32 key = (__u32)tgid;
	char path[32];
	bool fresh = !np;
	int dirfd, err;

	if (tgid <= 0)
		return -EINVAL;
	snprintf(path, sizeof(path), "/proc/%d", (int)tgid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	s->reading = np;	/* its copies held while its new tables compile */
	err = read_process(s, tgid, dirfd, &r);
	s->reading = NULL;
	if (err)
		goto out;
	if (s->pages_used - (np ? np->nr_entries : 0) + r.nr_entries > s->sizes.pages) {
		reading__drop(s, &r);
		err = -ENOSPC;
		goto out;
	}
	if (fresh) {
		np = calloc(1, sizeof(*np));
		if (!np || (np->tgid = tgid, hashmap__add(&s->procs, &np->tgid, np))) {
			free(np);
			reading__drop(s, &r);
			err = -ENOMEM;
			goto out;
		}
	}
	/* Pages it did not have (a library mapped since): their samples' copies go on a while. */
	val.copies_until_ns = np->copies_until_ns;
	if (fresh || r.nr_entries != np->nr_entries ||
	    memcmp(r.entries, np->entries, r.nr_entries * sizeof(*r.entries)))
		val.copies_until_ns = (uint64_t)mono_ns() + NATIVE_LEAF_COPIES_NS;
	err = write_pages(s, np->entries, np->nr_entries, r.entries, r.nr_entries);
	if (!err) {
		val.gen = np->gen + 1;
		val.nr_pages = (__u32)r.nr_entries;
		/* A process gone meanwhile (its pid maybe another's by now) gets nothing. */
		if (fstatat(dirfd, "stat", &(struct stat){ 0 }, 0))
			err = -ESRCH;
		else if (bpf_map_update_elem(s->fds.procs, &key, &val, BPF_ANY))
			err = -errno;
		if (err)
			write_pages(s, r.entries, r.nr_entries, np->entries, np->nr_entries);
	}
	if (err) {
		reading__drop(s, &r);
		if (fresh) {
			hashmap__remove(&s->procs, &np->tgid);
			free(np);
		}
		goto out;
	}
	s->pages_used = s->pages_used - np->nr_entries + r.nr_entries;
	/* The old tables go only now that no page names them. */
	for (size_t i = 0; i < np->nr_tables; i++)
		ntable__put(s, np->tables[i]);
	free(np->tables);
	free(np->entries);
	np->tables = r.tables;
	np->nr_tables = r.nr_tables;
	np->entries = r.entries;
	np->nr_entries = r.nr_entries;
	np->gen = val.gen;
	np->copies_until_ns = val.copies_until_ns;
	np->next_ms = mono_ms() + NATIVE_REREAD_MS;
	if (proc_ident(dirfd, &np->start_ticks, &np->exe_dev, &np->exe_ino))
		np->start_ticks = 0;	/* gone meanwhile: the next sweep drops it */
out:
	close(dirfd);
	/* Left out: never silently (its exit is no loss). */
	if (err == -E2BIG)
		s->st.too_big++;
	else if (err == -ENOSPC)
		s->st.no_room++;
	else if (err && err != -ESRCH && err != -EINTR)
		s->st.failed++;
	return err;
}

/* Most processes left to copies: each an entry of native_procs, of its 1024 at least. */
#define MAX_COPIES_ONLY 256

/*
 * Whether tgid is left to stack copies (native_store__copies_only): then
 * not read, its tables dropped if it had some (it ran exec into such a
 * program), and tracked as copies_only: an entry of native_procs that says
 * so, by which the program sends each of its samples as a copy (and notes
 * it no more: before, each of its samples noted it again, with a record
 * that woke the run, 562 times in 3 s of node at 999 Hz).
 */
static bool left_to_copies(struct native_store *s, pid_t tgid, struct nproc **np)
{
	struct native_proc val = { .copies_only = 1 };
	struct nproc *cp;
	__u32 key = (__u32)tgid;

	if (!s->copies_only || !s->copies_only(s->copies_only_ctx, tgid)) {
		if (*np && (*np)->copies_only) {	/* runs Node no more: loaded afresh */
			drop_proc(s, *np);
			*np = NULL;
		}
		return false;
	}
	if (*np && (*np)->copies_only)
		return true;
	if (*np)
		drop_proc(s, *np);
	*np = NULL;
	s->st.copies_only++;
	if (s->nr_copies_only >= MAX_COPIES_ONLY)
		return true;	/* noted again at its next samples, as a process not loaded */
	cp = calloc(1, sizeof(*cp));
	if (!cp)
		return true;
	cp->tgid = tgid;
	cp->copies_only = true;
	if (proc_ident_of(tgid, &cp->start_ticks, &cp->exe_dev, &cp->exe_ino) ||
	    hashmap__add(&s->procs, &cp->tgid, cp)) {
		free(cp);
		return true;
	}
	if (bpf_map_update_elem(s->fds.procs, &key, &val, BPF_ANY)) {
		hashmap__remove(&s->procs, &cp->tgid);
		free(cp);
		return true;
	}
	s->nr_copies_only++;
	*np = cp;
	return true;
}

int native_store__add_process(struct native_store *s, pid_t tgid)
{
	struct nproc *np = find_proc(s, tgid);

	if (left_to_copies(s, tgid, &np))
		return 0;
	return read_in(s, tgid, np);
}

int native_store__refresh_process(struct native_store *s, pid_t tgid)
{
	struct nproc *np = find_proc(s, tgid);
	int err;

	if (left_to_copies(s, tgid, &np))
		return 0;
	err = read_in(s, tgid, np);

	/* Gone: what it had goes too. */
	if (err == -ESRCH && (np = find_proc(s, tgid)))
		drop_proc(s, np);
	return err;
}

void native_store__remove_process(struct native_store *s, pid_t tgid)
{
	struct nproc *np = find_proc(s, tgid);
	struct polled *p = hashmap__remove(&s->polled, &tgid);

	free(p);
	if (np)
		drop_proc(s, np);
}

void nproc__free_all(struct native_store *s)
{
	const struct hashmap_entry *ent;
	size_t bkt;

	while (s->procs.size) {
		hashmap__for_each(&s->procs, bkt, ent) {
			drop_proc(s, ent->value);
			break;
		}
	}
	hashmap__for_each(&s->polled, bkt, ent)
		free(ent->value);
	hashmap__clear(&s->polled);
	hashmap__clear(&s->procs);
}

/* Forget the untracked processes a poll may read again. */
static void prune_polled(struct native_store *s, int64_t now)
{
	const struct hashmap_entry *ent;
	pid_t gone[64];
	size_t bkt, n = 0;

	do {
		n = 0;
		hashmap__for_each(&s->polled, bkt, ent) {
			const struct polled *p = ent->value;

			if (now >= p->next_ms && n < 64)
				gone[n++] = p->tgid;
		}
		for (size_t i = 0; i < n; i++)
			free(hashmap__remove(&s->polled, &gone[i]));
	} while (n == 64);
}

/* Whether a poll may read tgid now (see NATIVE_REREAD_COST). */
static bool may_read(struct native_store *s, pid_t tgid, int64_t now)
{
	struct nproc *np = find_proc(s, tgid);
	struct polled *p;

	if (np)
		return now >= np->next_ms;
	p = hashmap__find(&s->polled, &tgid);
	if (p)
		return now >= p->next_ms;
	if (s->polled.size >= MAX_POLLED)
		prune_polled(s, now);
	/* A storm of new pids: the rest next time. */
	return s->polled.size < MAX_POLLED;
}

/*
 * tgid was read (or refused) at a cost of cost_ns, compiling aside: not
 * again before NATIVE_REREAD_MS, nor before NATIVE_REREAD_COST times that;
 * a process in its first NATIVE_REREAD_EARLY reads, NATIVE_REREAD_EARLY_MS.
 */
static void read_later(struct native_store *s, pid_t tgid, int64_t cost_ns)
{
	int64_t wait = cost_ns / 1000000 * NATIVE_REREAD_COST, next;
	struct nproc *np = find_proc(s, tgid);
	struct polled *p;

	/*
	 * A process just started maps its libraries, and its interpreter's
	 * modules, in its first moments, each a walk that ends at code in no
	 * known mapping: the cost's wait, a second and more on a loaded host,
	 * would leave them all to frame pointers, and so would the floor's
	 * 100 ms a good part of a short process (python3.11 importing _json).
	 */
	if (native_store__test_reread_ms)
		next = mono_ms() + native_store__test_reread_ms;
	else if (np && np->gen < NATIVE_REREAD_EARLY)
		next = mono_ms() + NATIVE_REREAD_EARLY_MS;
	else
		next = mono_ms() + (wait > NATIVE_REREAD_MS ? wait : NATIVE_REREAD_MS);
	if (np) {
		np->next_ms = next;
		return;
	}
	p = hashmap__find(&s->polled, &tgid);
	if (!p) {
		p = malloc(sizeof(*p));
		if (!p)
			return;
		p->tgid = tgid;
		if (hashmap__add(&s->polled, &p->tgid, p)) {
			free(p);
			return;
		}
	}
	p->next_ms = next;
}

bool native_store__deferred(const struct native_store *s)
{
	return s->pending;
}

bool native_store__pending(const struct native_store *s)
{
	return s->pending && mono_ms() >= s->next_poll_ms;
}

int native_store__poll_unknown(struct native_store *s)
{
	unsigned int max = s->sizes.unknown, n = 0, done = 0, i;
	__u32 key = UINT32_MAX, next, *got;	/* no tgid: the walk starts (4.9 has no NULL) */
	int64_t now = mono_ms(), start = mono_ns(), spent = 0;

	if (s->pending && now < s->next_poll_ms)
		return 0;
	got = malloc(max * sizeof(*got));
	if (!got)
		return -ENOMEM;
	while (n < max && !bpf_map_get_next_key(s->fds.unknown, &key, &next)) {
		got[n++] = next;
		key = next;
	}
	for (i = 0; i < n; i++) {
		pid_t tgid = (pid_t)got[i];
		uint64_t compiled = s->st.compile_ns;
		int64_t t0;

		/* Over the budget, or stopped: the rest stay noted, for a later poll. */
		spent = mono_ns() - start;
		if (spent >= (int64_t)NATIVE_POLL_BUDGET_MS * 1000000 || interrupt__pending())
			break;
		bpf_map_delete_elem(s->fds.unknown, &got[i]);
		if (tgid <= 0)
			continue;
		if (!may_read(s, tgid, now)) {
			s->st.rate_limited++;
			continue;
		}
		t0 = mono_ns();
		if (find_proc(s, tgid))
			native_store__refresh_process(s, tgid);
		else if (native_store__add_process(s, tgid))
			pr_debug("native: pid %d: not read\n", (int)tgid);
		read_later(s, tgid, mono_ns() - t0 - (int64_t)(s->st.compile_ns - compiled));
		done++;
	}
	s->pending = i < n;
	if (s->pending) {
		s->st.deferred += n - i;
		s->next_poll_ms = mono_ms() + spent / 1000000 * NATIVE_POLL_GAP;
	}
	free(got);
	return (int)done;
}

/*
 * Every tracked process checked against /proc: one whose pid is gone or
 * another process's now (a different start) is dropped, so that its pages
 * never describe the next owner of its pid and its tables can go; one that
 * ran exec (another executable) is read again; tables no process has mapped
 * for their grace go. Returns how many processes changed.
 */
int native_store__sweep(struct native_store *s)
{
	const struct hashmap_entry *ent;
	pid_t *pids;
	size_t bkt, n = 0;
	int changed = 0;

	ntable__drop_idle(s);
	if (!s->procs.size)
		return 0;
	pids = malloc(s->procs.size * sizeof(*pids));
	if (!pids)
		return -ENOMEM;
	hashmap__for_each(&s->procs, bkt, ent)
		pids[n++] = ((const struct nproc *)ent->value)->tgid;
	for (size_t i = 0; i < n; i++) {
		struct nproc *np = find_proc(s, pids[i]);
		uint64_t start = 0;
		dev_t dev = 0;
		ino_t ino = 0;

		if (!np)
			continue;
		if (proc_ident_of(pids[i], &start, &dev, &ino) || start != np->start_ticks) {
			drop_proc(s, np);
			s->st.swept++;
			changed++;
		} else if (dev != np->exe_dev || ino != np->exe_ino) {
			if (native_store__refresh_process(s, pids[i]) == 0)
				s->st.execs++;
			changed++;
		}
	}
	free(pids);
	return changed;
}

void native_store__copies_only(struct native_store *s, bool (*fn)(void *ctx, pid_t tgid),
			       void *ctx)
{
	s->copies_only = fn;
	s->copies_only_ctx = ctx;
}
