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
#include "core/run/python_early.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "interp/python/registry.h"

struct early_thread {
	pid_t tid;
	pid_t pid;
	const struct py_layout *layout;	/* static tables of interp/python */
	uint64_t tstate, check;
};

struct python_early {
	struct interp_reader reader;
	pthread_mutex_t lock;
	struct early_thread *threads;	/* sorted by tid */
	size_t nr;
	struct py_snap snap;		/* the walk's, under the lock */
	struct py_proc_mem mem;
	uint64_t reads, frames;
};

static int cmp_tid(const void *a, const void *b)
{
	const struct early_thread *x = a, *y = b;

	return (x->tid > y->tid) - (x->tid < y->tid);
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
		py_proc_mem__init(&e->mem, pid);
		py_snap__init(&e->snap, &e->mem.mem);
		n = py_thread__walk(t->layout, &e->snap, t->tstate, t->check, out, max, status);
		e->reads++;
		e->frames += n > 0;
	}
	pthread_mutex_unlock(&e->lock);
	return n;
}

static bool early_any(void *ctx)
{
	struct python_early *e = ctx;

	return __atomic_load_n(&e->nr, __ATOMIC_RELAXED) != 0;
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
	e->reader = (struct interp_reader){ e, early_read, early_any };
	return e;
}

void python_early__free(struct python_early *e)
{
	if (!e)
		return;
	pthread_mutex_destroy(&e->lock);
	free(e->threads);
	free(e);
}

int python_early__publish(struct python_early *e, const struct py_registry *reg)
{
	size_t nr = 0, n = 0, count = py_registry__count(reg);
	struct early_thread *threads, *old;

	for (size_t i = 0; i < count; i++)
		nr += py_registry__get(reg, i)->nr_threads;
	threads = calloc(nr ? nr : 1, sizeof(*threads));
	if (!threads)
		return -ENOMEM;
	for (size_t i = 0; i < count; i++) {
		const struct py_process *p = py_registry__get(reg, i);

		for (size_t k = 0; !p->gone && k < p->nr_threads; k++)
			threads[n++] = (struct early_thread){ p->threads[k].tid, p->pid,
							      p->interp.layout,
							      p->threads[k].tstate,
							      p->threads[k].check };
	}
	qsort(threads, n, sizeof(*threads), cmp_tid);
	pthread_mutex_lock(&e->lock);
	old = e->threads;
	e->threads = threads;
	__atomic_store_n(&e->nr, n, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&e->lock);
	free(old);
	return 0;
}

const struct interp_reader *python_early__reader(struct python_early *e)
{
	return &e->reader;
}

void python_early__counts(struct python_early *e, uint64_t *reads, uint64_t *frames)
{
	pthread_mutex_lock(&e->lock);
	*reads = e->reads;
	*frames = e->frames;
	pthread_mutex_unlock(&e->lock);
}
