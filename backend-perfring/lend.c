// SPDX-License-Identifier: GPL-2.0
/*
 * The reader's priority lent to the drainer (lend.h says when and why).
 * pthread_setschedparam on another thread of the process needs what the
 * reader's own SCHED_FIFO needed (root, CAP_SYS_NICE or ulimit -r): the
 * reader lends only when it has it.
 */
#include "backend-perfring/lend.h"

#include <sched.h>

#include "core/lib/log.h"

/* Sets whose priority the drainer holds now: it gives it back at zero. */
static int nr_lent;
static pthread_mutex_t lend_lock = PTHREAD_MUTEX_INITIALIZER;

void prio_lend__init(struct prio_lend *l)
{
	struct sched_param sp = { 0 };

	l->drainer = pthread_self();
	l->lent = false;
	l->times = 0;
	if (pthread_getschedparam(l->drainer, &l->policy, &sp)) {
		l->policy = SCHED_OTHER;
		sp.sched_priority = 0;
	}
	l->priority = sp.sched_priority;
}

void prio_lend__raise(struct prio_lend *l, int priority)
{
	struct sched_param sp = { .sched_priority = priority };

	/* A drainer at real-time priority of its own (chrt) needs no loan. */
	if (l->policy != SCHED_OTHER && l->policy != SCHED_BATCH && l->policy != SCHED_IDLE)
		return;
	pthread_mutex_lock(&lend_lock);
	if (!l->lent) {
		l->lent = true;
		l->times++;
		if (nr_lent++ == 0 && pthread_setschedparam(l->drainer, SCHED_FIFO, &sp))
			pr_debug("ring reader: could not lend its priority to the drainer\n");
	}
	pthread_mutex_unlock(&lend_lock);
}

void prio_lend__release(struct prio_lend *l)
{
	struct sched_param sp = { .sched_priority = l->priority };

	pthread_mutex_lock(&lend_lock);
	if (l->lent) {
		l->lent = false;
		if (--nr_lent == 0)
			pthread_setschedparam(l->drainer, l->policy, &sp);
	}
	pthread_mutex_unlock(&lend_lock);
}
