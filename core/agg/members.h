/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who is profiled, as lifetimes: the processes of -p, the threads of -L, a
 * launched command's tree. A pid (or tid) is a member from its start (its
 * fork, or before the run) to its end (the exit of its last thread); the
 * process that takes the number after that is another one, and a sample
 * of it is not the member's, whatever its pid.
 */
#ifndef CORE_AGG_MEMBERS_H
#define CORE_AGG_MEMBERS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/lib/hashmap.h"

/* Side-band clock: the records' times (CLOCK_MONOTONIC where perf events use it). */
#define MEMBER_LIVE UINT64_MAX	/* end of one not known to have ended */

struct member {
	pid_t id;
	uint64_t start;		/* its fork's time; 0: began before the run */
	uint64_t end;		/* its last thread's exit, or another process's taking the id */
	int threads;		/* live threads known (a -p process's, a tree process's) */
	bool leader_gone;	/* its main thread exited: the last thread's exit ends it */
};

struct members {
	struct hashmap map;	/* id -> struct member */
	uint64_t newest;	/* the newest record time noted, for forgetting ended members */
	uint64_t ended;		/* members ended so far */
};

void members__init(struct members *ms);
void members__fini(struct members *ms);

/* id begins at start (replacing an ended member of that id) with threads. 0 or -ENOMEM. */
int members__begin(struct members *ms, pid_t id, uint64_t start, int threads);
struct member *members__find(const struct members *ms, pid_t id);

/* A thread of member m was born at time (a fork record with pid == ppid). */
void member__thread_born(struct members *ms, struct member *m, uint64_t time);
/* A thread of m exited at time; leader: its main one. The last one's exit ends m. */
void member__thread_exited(struct members *ms, struct member *m, bool leader, uint64_t time);
/* m is over at time: its id was taken by another process or thread. */
void member__end(struct members *ms, struct member *m, uint64_t time);

/*
 * Whether a sample of [t0, t1] (one time, or the interval counts were
 * summed over) may be m's: m had begun by t1 and not ended before t0. A
 * sample without a time (t0 UINT64_MAX) may be.
 */
bool member__covers(const struct member *m, uint64_t t0, uint64_t t1);

/* Forget members that ended more than grace before the newest record. Returns how many. */
size_t members__forget_ended(struct members *ms, uint64_t grace);

#endif
