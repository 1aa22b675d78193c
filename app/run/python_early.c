// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend's samples come to the main thread in drains, up to
 * 100 ms after they were taken; a Python stack read then is the one the
 * program runs at the drain, not at the sample (on a workload that runs
 * three functions in turn, 53% of samples got another function's frames).
 * Its reader thread, woken by each sample while Python threads are known,
 * copies the record out of the ring tens of microseconds after it: it
 * reads the frames there, through this.
 *
 * The main thread owns the registry (interp/python/registry.h), which is
 * not shared: what the reader needs of it, each thread's process, layout
 * and state, is copied into a table under a lock at each change. A walk
 * holds the lock for its reads (tens of microseconds): the snapshot it
 * reads through is the table's, and a publish waits for it.
 */
#include "app/run/python_early.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "interp/python/registry.h"

struct early_thread {
	pid_t tid;
	pid_t pid;
	int fd;				/* its process's /proc/PID/mem (the table's copy) */
	const struct py_layout *layout;	/* static tables of interp/python */
	uint64_t tstate, check;
};

/* A process of the table: its pid, and its handle (dup'ed from the registry's: closed here). */
struct pid_fd {
	pid_t pid;
	int fd;
};

/* Walks of a thread read again where it left its leaf frame meanwhile, at most. */
#define MAX_REWALKS 2
/* Threads of known processes asked about: each again only after ASK_AGAIN_NS. */
#define NR_ASKED 8
#define ASK_AGAIN_NS (50 * 1000000LL)

struct python_early {
	struct interp_reader reader;
	pthread_mutex_t lock;
	struct early_thread *threads;	/* sorted by tid */
	size_t nr;
	struct pid_fd *procs;		/* their processes, sorted by pid */
	size_t nr_procs;
	struct {
		pid_t tid;
		int64_t ns;
	} asked[NR_ASKED];
	unsigned int next_ask;
	struct py_snap snap;		/* the walk's, under the lock */
	struct py_proc_mem mem;
	uint64_t reads, frames, rewalks;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct early_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int cmp_pid_fd(const void *a, const void *b)
{
	const struct pid_fd *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/*
 * A thread of a known process that the table lacks: started since the
 * threads were last read (a request's worker). Its samples are read at the
 * drain, and the main thread, which owns the registry, learns of it then;
 * the caller is asked to bring that drain soon, at most once in
 * ASK_AGAIN_NS a thread (one that runs no Python code is never found, and
 * would ask at each of its samples).
 */
static bool ask_about(struct python_early *e, pid_t pid, pid_t tid)
{
	struct pid_fd key = { .pid = pid };
	int64_t now;

	if (!e->nr_procs || !bsearch(&key, e->procs, e->nr_procs, sizeof(key), cmp_pid_fd))
		return false;
	now = mono_ns();
	for (unsigned int i = 0; i < NR_ASKED; i++)
		if (e->asked[i].tid == tid && now - e->asked[i].ns < ASK_AGAIN_NS)
			return false;
	e->asked[e->next_ask].tid = tid;
	e->asked[e->next_ask].ns = now;
	e->next_ask = (e->next_ask + 1) % NR_ASKED;
	return true;
}

/*
 * Whether the thread still runs the leaf frame a walk began with (its code
 * object, read again from the process, not the walk's pages): the walk
 * reads frame after frame while the thread runs on, on another CPU; where
 * the leaf returned meanwhile, the callers read after it may be other
 * calls' (2.7 reuses a function's frame object for its next call: a
 * request's compress_block under the next request's handle_request, at
 * the line of its parse).
 */
static bool same_leaf(struct python_early *e, const struct early_thread *t,
		      const struct interp_frame *walked)
{
	struct py_frame leaf;
	uint64_t addr;

	if (py_walk_leaf(t->layout, &e->mem.mem, t->tstate, &leaf, &addr))
		return true;	/* unreadable now: nothing says otherwise */
	return leaf.code == walked->code && leaf.ident == walked->ident;
}

static unsigned int early_read(void *ctx, pid_t pid, pid_t tid, struct interp_frame *out,
			       unsigned int max, uint32_t *status)
{
	struct python_early *e = ctx;
	struct early_thread key = { .tid = tid }, *t;
	unsigned int n = 0;

	*status = INTERP_NONE;
	pthread_mutex_lock(&e->lock);
	t = e->nr ? bsearch(&key, e->threads, e->nr, sizeof(*t), cmp_tid) : NULL;
	/* A thread's frames from its own process only. */
	if (t && t->pid == pid) {
		/*
		 * Through the handle of the process the registry found, never by
		 * the pid: one that took the pid since is not read for it (its
		 * samples get no frames until it is found itself).
		 */
		py_proc_mem__use_fd(&e->mem, pid, t->fd);
		for (unsigned int tries = 0;; tries++) {
			py_snap__init(&e->snap, &e->mem.mem);
			n = py_thread__walk(t->layout, &e->snap, t->tstate, t->check, out, max,
					    status);
			if (!n || tries == MAX_REWALKS || same_leaf(e, t, out))
				break;
			e->rewalks++;
		}
		e->reads++;
		e->frames += n > 0;
	} else if (!t && ask_about(e, pid, tid)) {
		*status = INTERP_NO_THREAD;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

static bool early_any(void *ctx)
{
	struct python_early *e = ctx;

	return __atomic_load_n(&e->nr, __ATOMIC_RELAXED) != 0;
}

static size_t early_tids(void *ctx, pid_t *out, size_t max)
{
	struct python_early *e = ctx;
	size_t nr;

	pthread_mutex_lock(&e->lock);
	nr = e->nr;
	for (size_t i = 0; i < nr && i < max; i++)
		out[i] = e->threads[i].tid;
	pthread_mutex_unlock(&e->lock);
	return nr;
}

static size_t early_threads(void *ctx, struct interp_tid *out, size_t max)
{
	struct python_early *e = ctx;
	size_t nr;

	pthread_mutex_lock(&e->lock);
	nr = e->nr;
	for (size_t i = 0; i < nr && i < max; i++)
		out[i] = (struct interp_tid){ .pid = e->threads[i].pid, .tid = e->threads[i].tid };
	pthread_mutex_unlock(&e->lock);
	return nr;
}

struct python_early *python_early__new(void)
{
	struct python_early *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (pthread_mutex_init(&e->lock, NULL)) {
		free(e);
		return NULL;
	}
	e->reader = (struct interp_reader){ .ctx = e, .read = early_read, .any = early_any,
					    .tids = early_tids, .threads = early_threads };
	return e;
}

static void close_all(struct pid_fd *procs, size_t nr)
{
	for (size_t i = 0; procs && i < nr; i++)
		close(procs[i].fd);
	free(procs);
}

void python_early__free(struct python_early *e)
{
	if (!e)
		return;
	pthread_mutex_destroy(&e->lock);
	free(e->threads);
	close_all(e->procs, e->nr_procs);
	free(e);
}



int python_early__publish(struct python_early *e, const struct py_registry *reg)
{
	size_t nr = 0, n = 0, nr_procs = 0, old_nr_procs, count = py_registry__count(reg);
	struct early_thread *threads, *old;
	struct pid_fd *procs, *old_procs;

	for (size_t i = 0; i < count; i++)
		nr += py_registry__get(reg, i)->nr_threads;
	threads = calloc(nr ? nr : 1, sizeof(*threads));
	procs = calloc(count ? count : 1, sizeof(*procs));
	if (!threads || !procs) {
		free(threads);
		free(procs);
		return -ENOMEM;
	}
	for (size_t i = 0; i < count; i++) {
		const struct py_process *p = py_registry__get(reg, i);
		/* Its own copy: the registry closes its handle when the process ends. */
		int fd = p->gone || p->mem.fd < 0 ? -1 : fcntl(p->mem.fd, F_DUPFD_CLOEXEC, 0);

		if (fd < 0)
			continue;	/* gone, or no descriptor left: read at the drain */
		procs[nr_procs++] = (struct pid_fd){ p->pid, fd };
		for (size_t k = 0; k < p->nr_threads; k++)
			threads[n++] = (struct early_thread){ p->threads[k].tid, p->pid, fd,
							      p->interp.layout,
							      p->threads[k].tstate,
							      p->threads[k].check };
	}
	qsort(threads, n, sizeof(*threads), cmp_tid);
	qsort(procs, nr_procs, sizeof(*procs), cmp_pid_fd);
	pthread_mutex_lock(&e->lock);
	old = e->threads;
	old_procs = e->procs;
	old_nr_procs = e->nr_procs;
	e->threads = threads;
	e->procs = procs;
	e->nr_procs = nr_procs;
	__atomic_store_n(&e->nr, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&e->lock);
	/* No walk reads through the old handles now: they were used under the lock only. */
	free(old);
	close_all(old_procs, old_nr_procs);
	return 0;
}

const struct interp_reader *python_early__reader(struct python_early *e)
{
	return &e->reader;
}

void python_early__counts(struct python_early *e, uint64_t *reads, uint64_t *frames,
			  uint64_t *rewalks)
{
	pthread_mutex_lock(&e->lock);
	*reads = e->reads;
	*frames = e->frames;
	*rewalks = e->rewalks;
	pthread_mutex_unlock(&e->lock);
}
