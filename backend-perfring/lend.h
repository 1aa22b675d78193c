/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The reader thread's real-time priority lent to the thread that drains
 * (unwinds, tracks processes, counts) while stack copies pile up: on a
 * host whose tasks take the CPUs, that thread may otherwise not run for
 * seconds, and the copies it has not taken would grow with the backlog.
 * Lent by the reader when what it holds reaches half its budget, given back
 * by the drainer once a drain leaves it under a quarter (reader.c).
 * Several ring sets may lend at once: the drainer keeps the priority until
 * the last gives it back.
 */
#ifndef PERFRING_LEND_H
#define PERFRING_LEND_H

#include <pthread.h>
#include <stdbool.h>

struct prio_lend {
	pthread_t drainer;	/* the thread that opened the set, and drains it */
	int policy;		/* its own scheduling, restored when given back */
	int priority;
	bool lent;		/* this set has lent its priority (lend.c's lock) */
	unsigned long long times;	/* how often lent */
};

/* The drainer is the calling thread; its scheduling now is what is restored. */
void prio_lend__init(struct prio_lend *l);
/* From the reader: the drainer at SCHED_FIFO priority, unless lent already. */
void prio_lend__raise(struct prio_lend *l, int priority);
/* From the drainer: its own scheduling back, when this set was the last to lend. */
void prio_lend__release(struct prio_lend *l);

#endif
