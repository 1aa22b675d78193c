/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the tracker keeps per thread and per pid (comm, kind, the pid's
 * entry) is dropped a grace after the thread or process ended, so that a
 * host that starts a hundred processes a second does not grow the tracker
 * until pids wrap (pid_max is 4194304 under systemd). This is the queue of
 * what is due: entries in the order they ended, taken out once old enough.
 */
#ifndef CORE_PROC_RETIRE_H
#define CORE_PROC_RETIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct retiree {
	uint64_t time;		/* when it ended, in the side-band records' clock */
	uint64_t comm_seq;	/* the tracker's comm counter then: a comm set later is newer */
	pid_t pid;
	pid_t tid;		/* 0: the pid's own entry (its image was freed) */
};

struct retire_queue {
	struct retiree *items;
	size_t head;		/* the oldest still queued */
	size_t tail;		/* one past the newest */
	size_t cap;
};

/* Queue r behind the others; 0 or -ENOMEM (then it is only kept until the tracker goes). */
int retire_queue__push(struct retire_queue *q, const struct retiree *r);
/*
 * Take out the oldest entry if it ended before cutoff. Entries are taken in
 * the order queued: one dated later than one behind it (records of two
 * CPUs' rings) only holds that one back a while.
 */
bool retire_queue__pop_before(struct retire_queue *q, uint64_t cutoff, struct retiree *out);
size_t retire_queue__len(const struct retire_queue *q);
void retire_queue__free(struct retire_queue *q);

#endif
