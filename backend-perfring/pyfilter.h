/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Which Python threads the kernel's sched_switch filter of the Python
 * waits (pywaits.h) holds when there are more than fit in it. By tid, as
 * it was, whoever started many threads first (another user's idle pool of
 * 200) took every place, and a root service's naps were read at the
 * drain, over by then: 0-1% of its blocked time under nap() (issue 46).
 * Threads that switched out lately come first, since only their waits
 * need a read; then each process's threads in turn, so that no process
 * fills the filter with threads that never wait, whatever their tids.
 * The run's filters (-p, a launched command's tree) already keep other
 * processes out of the candidates: there, the profiled processes are all.
 */
#ifndef PERFRING_PYFILTER_H
#define PERFRING_PYFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A candidate: its latest switch-out (ns, the records' clock), 0 for none seen. */
struct pyfilter_thread {
	pid_t pid, tid;
	uint64_t last;
	/* pyfilter__choose's own: switched out lately; place among its process's threads */
	bool busy;
	unsigned int rank;
};

/* Who a choice left out: the process that lost the most threads. */
struct pyfilter_left {
	size_t threads;			/* left out in all */
	size_t busy;			/* of them, threads that switched out lately */
	pid_t pid;			/* the process with the most of them, 0 for none */
	size_t pid_threads;
};

/*
 * Up to max tids of t (nr of them, any order; reordered) into out, sorted
 * by tid: threads whose last switch-out is within busy_ns of now first,
 * then a thread of each process in turn (threads that switched out lately
 * before the others of their process, then by tid). Returns how many;
 * *left says what did not fit.
 */
size_t pyfilter__choose(struct pyfilter_thread *t, size_t nr, uint64_t now, uint64_t busy_ns,
			pid_t *out, size_t max, struct pyfilter_left *left);

#endif
