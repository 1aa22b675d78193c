// SPDX-License-Identifier: GPL-2.0
/*
 * The run's Python processes, one per process image: found by looking at
 * an image's executable mappings of files named like an interpreter,
 * through the tracker's checked descriptors; their threads read from their
 * memory and named by our pid namespace's tids; their code objects named
 * through a cache bound to the process.
 */
#include "interp/python/registry.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "core/lib/log.h"
#include "core/lib/userfile.h"
#include "core/sym/debugfile.h"
#include "interp/python/elfscan.h"

/* What the registry knows of an image: looked at (when), and its process if Python. */
struct seen {
	unsigned int generation;	/* of the image's maps when looked at */
	unsigned int tries;		/* looks whose memory was not ready */
	unsigned int idle_looks;	/* looks that found no interpreter running (yet) */
	int64_t retry_ms;		/* then, when to look again (monotonic) */
	struct py_process *p;
};

/*
 * An interpreter mapped a moment ago may not be relocated yet (its type
 * objects' pointers still the file's): its memory is read again a little
 * later, a few times, before the image counts as not Python.
 */
#define RETRY_MS 20
#define MAX_TRIES 50
/*
 * A process that maps an interpreter but runs none (a program that dlopens
 * libpython and has not called Py_Initialize) is no Python process: any
 * user can make a thousand of them. It is looked at again as one whose
 * memory is not ready, then this long after, at its samples, for as long
 * as it lives: Py_Initialize may come late.
 */
#define IDLE_RETRY_MS 1000

struct py_registry {
	struct hashmap images;		/* as->id + 1 -> struct seen * */
	struct py_process **live;	/* the processes held, in the order found */
	size_t nr_live, cap_live;
	struct hashmap refused;		/* interpreter paths named in -v as refused (bounded) */
	struct py_registry_stats stats;
	struct proctrack *pt;		/* whose images these are: who held a pid when (or NULL) */
};

#define MAX_REFUSED_NAMED 64

static uint64_t id_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

static bool id_equal(const void *a, const void *b)
{
	return a == b;
}

#define IMAGE_KEY(as) ((void *)(uintptr_t)((as)->id + 1ULL))

struct py_registry *py_registry__new(void)
{
	struct py_registry *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	hashmap__init(&r->images, id_hash, id_equal);
	hashmap__init(&r->refused, hashmap_str_hash, hashmap_str_equal);
	return r;
}

void py_registry__set_tracker(struct py_registry *r, struct proctrack *pt)
{
	r->pt = pt;
}

static void process_free(struct py_process *p)
{
	if (!p)
		return;
	py_proc_mem__close(&p->mem);
	py_codes__free(p->codes);
	free(p->snap);
	free(p->threads);
	free(p->interp_path);
	free(p);
}

void py_registry__free(struct py_registry *r)
{
	struct hashmap_entry *e;
	size_t bkt;

	if (!r)
		return;
	hashmap__for_each(&r->images, bkt, e) {
		struct seen *s = e->value;

		process_free(s->p);
		free(s);
	}
	hashmap__clear(&r->images);
	hashmap__for_each(&r->refused, bkt, e)
		free((void *)e->key);
	hashmap__clear(&r->refused);
	free(r->live);
	free(r);
}

/* Field 22 of /proc/PID/stat: when the process started, in clock ticks since boot. */
static uint64_t start_ticks(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long v = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* The comm is in parentheses and may hold anything: fields count from its last ')'. */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	/* ") S ppid ..." : state is field 3, starttime field 22. */
	if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			  "%*d %*d %llu", &v) != 1)
		return 0;
	return v;
}

static int add_live(struct py_registry *r, struct py_process *p)
{
	if (r->nr_live == r->cap_live) {
		size_t cap = r->cap_live ? 2 * r->cap_live : 16;
		struct py_process **live = realloc(r->live, cap * sizeof(*live));

		if (!live)
			return -ENOMEM;
		r->live = live;
		r->cap_live = cap;
	}
	r->live[r->nr_live++] = p;
	return 0;
}

static void remove_live(struct py_registry *r, struct py_process *p)
{
	for (size_t i = 0; i < r->nr_live; i++)
		if (r->live[i] == p) {
			memmove(&r->live[i], &r->live[i + 1], (r->nr_live - i - 1) * sizeof(*r->live));
			r->nr_live--;
			return;
		}
}

bool py_registry__interpreter_name(const char *path)
{
	const char *base = strrchr(path, '/');

	base = base ? base + 1 : path;
	return !strncmp(base, "libpython", 9) || !strncmp(base, "python", 6);
}

static void name_refusal(struct py_registry *r, const char *path, pid_t pid, const char *why)
{
	char *copy;

	r->stats.refused++;
	if (hashmap__find(&r->refused, path) || r->refused.size >= MAX_REFUSED_NAMED)
		return;
	copy = strdup(path);
	if (!copy || hashmap__add(&r->refused, copy, copy)) {
		free(copy);
		return;
	}
	pr_info("python: %s (pid %d): %s; its samples keep their native frames\n", path, (int)pid,
		why);
}

/*
 * Whether the executable mapping m of as is a CPython interpreter: 1 with
 * p->interp filled (bias from m), 0, or -ENOTSUP (named in -v).
 */
static int detect_mapping(struct py_registry *r, const struct addr_space *as,
			  const struct mapping *m, struct py_process *p)
{
	struct errmsg why = { 0 };
	struct elf_file h;
	bool owned = false;
	uint64_t bias;
	int fd, own, err;

	fd = file_table__open(as->files, m, &owned);
	if (fd < 0) {
		pr_debug("python: %s of pid %d: not the file that was mapped\n", m->path,
			 (int)as->pid);
		return 0;
	}
	own = elf_file__ready() ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	err = own < 0 || elf_file__open_fd(own, &h) ? -ENOENT : 0;
	if (!err) {
		err = py_elf__load_bias(h.elf, m->start, m->pgoff, &bias);
		elf_file__close(&h);
	}
	if (!err)
		err = py_detect(fd, m->path, bias, &p->interp, &why);
	if (owned)
		close(fd);
	if (err < 0 && err != -ENOTSUP)
		pr_debug("python: %s of pid %d: %s\n", m->path, (int)as->pid, strerror(-err));
	if (err == -ENOTSUP)
		name_refusal(r, m->path, as->pid, why.text[0] ? why.text : "not readable here");
	return err;
}

/*
 * Where the glibc that as maps keeps a thread's tid in its struct pthread
 * (what pthread_t leads to, for 3.10 and before), else glibc x86-64's.
 */
static uint32_t glibc_tid_offset(const struct addr_space *as)
{
	uint32_t off = PY_GLIBC_TID_OFFSET;

	for (size_t i = 0; i < as->nr_maps; i++) {
		const struct mapping *m = &as->maps[i];
		const char *base;
		bool owned = false;
		int fd;

		if (!m->exec || !mapping__is_file(m))
			continue;
		base = strrchr(m->path, '/');
		base = base ? base + 1 : m->path;
		if (strncmp(base, "libc.so", 7) && strncmp(base, "libc-2.", 7) &&
		    strncmp(base, "libpthread", 10))
			continue;
		fd = file_table__open(as->files, m, &owned);
		if (fd < 0)
			continue;
		if (!py_glibc_tid_offset(fd, &off))
			i = as->nr_maps;
		if (owned)
			close(fd);
	}
	return off;
}

/*
 * p's memory, through a handle of as's process: one that took the pid
 * since, even within a tick of its exit, is never read for it (issue 46,
 * row 1). The tracker dates the handle against the side-band's exits and
 * forks. False when it is not as's (as ended), or cannot be opened.
 */
static bool open_memory(struct py_registry *r, const struct addr_space *as, struct py_process *p)
{
	int err = py_proc_mem__open(&p->mem, as->pid);

	if (err) {
		r->stats.no_handle++;
		return false;
	}
	if (r->pt && !proctrack__held_by(r->pt, as, proctrack__records_now(r->pt))) {
		r->stats.handed_over++;
		return false;
	}
	return true;
}

/*
 * The process found in as, checked against its memory; NULL when as runs
 * no readable CPython, *not_ready when its memory did not agree yet, *idle
 * when it agrees but no interpreter runs there yet.
 */
static struct py_process *find_interpreter(struct py_registry *r, const struct addr_space *as,
					   bool last_try, bool chosen, bool *not_ready, bool *idle)
{
	struct py_process *p = calloc(1, sizeof(*p));
	struct errmsg why = { 0 };

	if (!p)
		return NULL;
	py_proc_mem__init(&p->mem, as->pid);
	for (size_t i = 0; i < as->nr_maps; i++) {
		const struct mapping *m = &as->maps[i];

		if (!m->exec || !mapping__is_file(m) || !py_registry__interpreter_name(m->path))
			continue;
		if (detect_mapping(r, as, m, p) != 1)
			continue;
		p->pid = as->pid;
		p->as_id = as->id;
		p->uid = as->uid;
		p->start_ticks = start_ticks(as->pid);
		if (!open_memory(r, as, p))
			break;
		if (py_interp__validate(&p->interp, &p->mem.mem, &why)) {
			*not_ready = !last_try;
			if (last_try && why.text[0])
				name_refusal(r, m->path, as->pid, why.text);
			break;
		}
		if (!chosen && py_interp__running(&p->interp, &p->mem.mem) != 1) {
			*idle = true;
			r->stats.idle++;
			break;
		}
		p->interp_path = strdup(m->path);
		p->snap = malloc(sizeof(*p->snap));
		if (!p->interp_path || !p->snap)
			break;
		/* Names are read through the walk's snapshot: a page read once serves many. */
		py_snap__init(p->snap, &p->mem.mem);
		p->codes = py_codes__new(&p->interp, &p->snap->mem);
		if (!p->codes || add_live(r, p))
			break;
		if (p->interp.major == 3 && p->interp.minor <= 10)
			p->tid_offset = glibc_tid_offset(as);
		r->stats.processes++;
		return p;
	}
	process_free(p);
	return NULL;
}

struct py_process *py_registry__look(struct py_registry *r, const struct addr_space *as,
				     bool chosen, bool *fresh)
{
	struct seen *s = hashmap__find(&r->images, IMAGE_KEY(as));
	bool not_ready = false, idle = false;
	int64_t now;

	*fresh = false;
	if (s && (s->p || as->end_time))
		return s->p && !s->p->gone ? s->p : NULL;
	now = mono_ms();
	if (s && s->generation == as->generation && (!s->retry_ms || now < s->retry_ms))
		return NULL;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || hashmap__add(&r->images, IMAGE_KEY(as), s)) {
			free(s);
			return NULL;
		}
	}
	s->generation = as->generation;
	s->p = find_interpreter(r, as, s->tries + 1 >= MAX_TRIES, chosen, &not_ready, &idle);
	s->retry_ms = 0;
	if (not_ready) {
		s->tries++;
		s->retry_ms = now + RETRY_MS;
	} else if (idle) {
		/* Often while it may be starting its interpreter, then once a second. */
		s->idle_looks += s->idle_looks < MAX_TRIES;
		s->retry_ms = now + (s->idle_looks < MAX_TRIES ? RETRY_MS : IDLE_RETRY_MS);
	}
	*fresh = s->p != NULL;
	return s->p;
}

struct py_process *py_registry__find(const struct py_registry *r, const struct addr_space *as)
{
	struct seen *s = as ? hashmap__find(&r->images, IMAGE_KEY(as)) : NULL;

	return s ? s->p : NULL;
}

/* Whether p's pid is still the process p was found in (its start time unchanged). */
static bool still_there(struct py_process *p)
{
	if (!p->gone && (!p->start_ticks || start_ticks(p->pid) != p->start_ticks))
		p->gone = true;
	return !p->gone;
}

static int tid_cmp(const void *a, const void *b)
{
	const struct py_thread_entry *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* ns tid -> our tid, from the process's NSpid lines; 0 when not found. */
static pid_t host_tid(const struct py_nstid *map, int nr, uint32_t ns_tid)
{
	for (int i = 0; i < nr; i++)
		if (map[i].ns_tid == ns_tid)
			return (pid_t)map[i].host_tid;
	return 0;
}

int py_process__scan_threads(struct py_process *p)
{
	struct py_tstate *ts;
	struct py_nstid *ns = NULL;
	struct py_thread_entry *out;
	unsigned int flags = 0;
	int n, nr_ns = 0, kept = 0;

	if (!still_there(p))
		return -ESRCH;
	ts = calloc(PY_MAX_THREADS, sizeof(*ts));
	if (!ts)
		return -ENOMEM;
	n = py_threads__read(&p->interp, &p->mem.mem, p->tid_offset ? p->tid_offset : PY_GLIBC_TID_OFFSET, ts, PY_MAX_THREADS,
			     &flags);
	if (n < 0) {
		free(ts);
		if (n == -ESRCH)
			p->gone = true;
		return n;
	}
	out = calloc((size_t)n + 1, sizeof(*out));
	ns = calloc(PY_MAX_THREADS, sizeof(*ns));
	if (!out || !ns) {
		free(ts);
		free(out);
		free(ns);
		return -ENOMEM;
	}
	/* Thread ids in the process's own pid namespace (a container's): ours from NSpid. */
	nr_ns = py_nstids(p->pid, ns, PY_MAX_THREADS);
	for (int i = 0; i < n; i++) {
		pid_t tid = nr_ns > 0 ? host_tid(ns, nr_ns, ts[i].tid) : (pid_t)ts[i].tid;

		if (!tid)
			continue;
		out[kept++] = (struct py_thread_entry){ tid, ts[i].tstate, ts[i].check };

	}
	qsort(out, (size_t)kept, sizeof(*out), tid_cmp);
	free(p->threads);
	p->threads = out;
	p->nr_threads = (size_t)kept;
	free(ts);
	free(ns);
	return kept;
}

const struct py_thread_entry *py_process__thread(const struct py_process *p, pid_t tid)
{
	struct py_thread_entry key = { .tid = tid };

	if (!p->threads)
		return NULL;
	return bsearch(&key, p->threads, p->nr_threads, sizeof(key), tid_cmp);
}

unsigned int py_thread__walk(const struct py_layout *l, struct py_snap *snap, uint64_t tstate,
			     uint64_t check, struct interp_frame *out, unsigned int max,
			     uint32_t *status)
{
	int32_t off = l->tstate_native_tid >= 0 ? l->tstate_native_tid : l->tstate_thread_id;
	struct py_stack *st;
	uint64_t now;
	unsigned int n;

	*status = INTERP_UNREADABLE;
	/* One instant's pages: the frames of 3.11+ sit together in the thread's chunk. */
	py_snap__reset(snap);
	if (py_mem__read(&snap->mem, tstate + (uint64_t)off, &now, sizeof(now)))
		return 0;
	if (now != check) {
		*status = INTERP_BAD_THREAD;
		return 0;
	}
	st = malloc(sizeof(*st));
	if (!st || py_walk(l, &snap->mem, tstate, st)) {
		free(st);
		return 0;
	}
	n = st->nr_frames < max ? st->nr_frames : max;
	for (unsigned int i = 0; i < n; i++) {
		out[i].code = st->frames[i].code;
		out[i].lasti = st->frames[i].lasti;
		out[i].ident = st->frames[i].ident;
	}
	*status = n ? INTERP_FRAMES : (st->status & PY_WALK_FAULT) ? INTERP_UNREADABLE : INTERP_IDLE;
	if (n && (st->status & PY_WALK_TRUNCATED || st->nr_frames > max))
		*status |= INTERP_TRUNCATED;
	if (n && (st->status & PY_WALK_FAULT))
		*status |= INTERP_FAULT;
	free(st);
	return n;
}

unsigned int py_process__walk(struct py_process *p, pid_t tid, struct interp_frame *out,
			      unsigned int max, uint32_t *status)
{
	const struct py_thread_entry *t = py_process__thread(p, tid);

	*status = INTERP_NO_THREAD;
	if (!t)
		return 0;
	return py_thread__walk(p->interp.layout, p->snap, t->tstate, t->check, out, max, status);
}

/* Says once, in -v, that p made its cache refuse names or line tables: who took the budget. */
static void note_budget(struct py_process *p)
{
	struct py_codes_held h;

	py_codes__held(p->codes, &h);
	if (!h.names_refused && !h.tables_refused)
		return;
	p->over_budget = true;
	pr_info("python: pid %d (uid %d) made us hold %zu KiB of names and line tables, all "
		"that one process may: frames of its code objects named from now on have no "
		"line, or no name, where theirs do not fit\n", (int)p->pid,
		p->uid == (uid_t)-1 ? -1 : (int)p->uid, (h.name_bytes + h.table_bytes) >> 10);
}

int py_process__name(struct py_process *p, const struct interp_frame *f,
		     struct py_code_info *out)
{
	int err = py_codes__lookup(p->codes, f->code & ~PY_FRAME_ENTRY, f->ident, f->lasti, out);

	if (!p->over_budget)
		note_budget(p);
	return err;
}

bool py_process__named(const struct py_process *p, const struct interp_frame *f)
{
	return f->ident && py_codes__has(p->codes, f->code & ~PY_FRAME_ENTRY, f->ident);
}

bool py_process__is_shim(const struct py_process *p, const struct interp_frame *f)
{
	return p->interp.layout->entry_kind == PY_ENTRY_OWNER && (f->code & PY_FRAME_ENTRY);
}

bool py_process__run_end(const struct py_process *p, const struct interp_frame *frames,
			 unsigned int i, unsigned int n)
{
	switch (p->interp.layout->entry_kind) {
	case PY_ENTRY_IS_ENTRY:
		return (frames[i].code & PY_FRAME_ENTRY) || i + 1 == n;
	case PY_ENTRY_OWNER:
		return i + 1 == n || (frames[i + 1].code & PY_FRAME_ENTRY);
	default:
		return true;
	}
}

bool py_process__in_eval(const struct py_process *p, uint64_t ip)
{
	return py_interp__in_eval(&p->interp, ip);
}

bool py_process__in_interpreter(const struct py_process *p, const struct addr_space *as,
				uint64_t ip)
{
	const struct mapping *m = addr_space__find(as, ip);

	return m && m->path && p->interp_path && !strcmp(m->path, p->interp_path);
}

void py_registry__ended(struct py_registry *r, const struct addr_space *as)
{
	struct py_process *p = py_registry__find(r, as);

	if (p) {
		p->gone = true;
		/* Its address space is gone: the handle reads nothing more, and costs a descriptor. */
		py_proc_mem__close(&p->mem);
	}
}

/* What p's cache refused, added to out. */
static void add_held(struct py_registry_stats *out, const struct py_process *p)
{
	struct py_codes_held h;

	if (!p->codes)
		return;
	py_codes__held(p->codes, &h);
	out->over_budget += p->over_budget;
	out->names_refused += h.names_refused;
	out->tables_refused += h.tables_refused;
	out->table_bytes_refused += h.table_bytes_refused;
}

void py_registry__forget(struct py_registry *r, const struct addr_space *as)
{
	struct seen *s = hashmap__remove(&r->images, IMAGE_KEY(as));

	if (!s)
		return;
	if (s->p) {
		add_held(&r->stats, s->p);
		remove_live(r, s->p);
	}
	process_free(s->p);
	free(s);
}

void py_registry__stats(const struct py_registry *r, struct py_registry_stats *out)
{
	*out = r->stats;
	out->live = r->nr_live;
	out->threads = 0;
	for (size_t i = 0; i < r->nr_live; i++) {
		out->threads += r->live[i]->nr_threads;
		add_held(out, r->live[i]);
	}
}

size_t py_registry__count(const struct py_registry *r)
{
	return r->nr_live;
}

struct py_process *py_registry__get(const struct py_registry *r, size_t i)
{
	return i < r->nr_live ? r->live[i] : NULL;
}
