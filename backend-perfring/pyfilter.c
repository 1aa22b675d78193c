// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/pyfilter.h"

#include <stdlib.h>

/* A process's threads together, busy ones first, then by tid: their ranks are counted in it. */
static int by_process(const void *a, const void *b)
{
	const struct pyfilter_thread *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->busy != y->busy)
		return x->busy ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

/* Busy threads first; within each, round by round, a thread of each process. */
static int by_turn(const void *a, const void *b)
{
	const struct pyfilter_thread *x = a, *y = b;

	if (x->busy != y->busy)
		return x->busy ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return (x->tid > y->tid) - (x->tid < y->tid);
}

static int by_tid(const void *a, const void *b)
{
	const pid_t *x = a, *y = b;

	return (*x > *y) - (*x < *y);
}

/* The left-out tail of t, grouped by process: whose and how many. */
static void count_left(struct pyfilter_thread *t, size_t nr, struct pyfilter_left *left)
{
	size_t run = 0;

	qsort(t, nr, sizeof(*t), by_process);
	for (size_t i = 0; i < nr; i++) {
		left->busy += t[i].busy;
		run = i && t[i].pid == t[i - 1].pid ? run + 1 : 1;
		if (run > left->pid_threads) {
			left->pid_threads = run;
			left->pid = t[i].pid;
		}
	}
}

size_t pyfilter__choose(struct pyfilter_thread *t, size_t nr, uint64_t now, uint64_t busy_ns,
			pid_t *out, size_t max, struct pyfilter_left *left)
{
	size_t n = nr < max ? nr : max;

	*left = (struct pyfilter_left){ .threads = nr - n };
	for (size_t i = 0; i < nr; i++)
		t[i].busy = t[i].last && t[i].last + busy_ns >= now;
	if (nr > max) {
		qsort(t, nr, sizeof(*t), by_process);
		for (size_t i = 0; i < nr; i++)
			t[i].rank = i && t[i].pid == t[i - 1].pid ? t[i - 1].rank + 1 : 0;
		qsort(t, nr, sizeof(*t), by_turn);
		count_left(t + n, nr - n, left);
	}
	for (size_t i = 0; i < n; i++)
		out[i] = t[i].tid;
	/* The kernel's filter text and its lookups (a bsearch) are by tid. */
	qsort(out, n, sizeof(*out), by_tid);
	return n;
}
