/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who had a pid when: every task's exit as the kernel records it, read
 * the moment someone asks, not when the side-band's drain comes to it. A
 * process that takes an exited process's pid within a millisecond (issue
 * 46) is told apart exactly: the kernel writes the main thread's exit
 * record before its pid is free for another. The process tracker asks through proctrack__set_handover
 * before it trusts a handle it opened under /proc/PID.
 */
#ifndef PERFRING_PIDWATCH_H
#define PERFRING_PIDWATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/lib/log.h"

struct pid_watch;

/*
 * One dummy software event per online CPU, recording every task's exit
 * on CLOCK_MONOTONIC (4.1; a CPU-wide event needs CAP_PERFMON,
 * root or kernel.perf_event_paranoid 0 or less). Returns 0 or -errno with
 * a one-line reason in why.
 */
int pid_watch__open(struct pid_watch **out, struct errmsg *why);
void pid_watch__close(struct pid_watch *w);
/* Read what the kernel recorded since the last call; forget what is older than the retention. */
void pid_watch__sync(struct pid_watch *w);
/*
 * After a sync: whether a task with id tid exited in (after, until]
 * (CLOCK_MONOTONIC ns), or records were lost then (it cannot tell).
 * A proctrack_handover_fn, ctx the watch.
 */
bool pid_watch__handover(void *ctx, pid_t tid, uint64_t after, uint64_t until);

struct pid_watch_stats {
	uint64_t records;		/* exits read */
	uint64_t lost;			/* records the kernel could not write (a full ring) */
	uint64_t answers, taken;	/* questions asked, and those answered "another had it" */
	size_t tids, bytes;		/* held now */
};
void pid_watch__stats(const struct pid_watch *w, struct pid_watch_stats *out);

#endif
