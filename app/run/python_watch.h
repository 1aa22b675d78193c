/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Processes that have just mapped an interpreter's file (the side-band's
 * mmap records): looked at every tick until they are found to run Python
 * or their time is up. Found at their exec, not at their first drained
 * sample: the bpf backend's off-CPU sums are drained once a second, and a
 * child of the command that lived less (a script run by a shell or
 * timeout) had its waits without Python frames.
 */
#ifndef APP_RUN_PYTHON_WATCH_H
#define APP_RUN_PYTHON_WATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* At most this many at once; a process past it is found at its samples, as before. */
#define PYTHON_WATCH_MAX 256
/* How long after its mapping a process is looked at: its interpreter's start, slow host. */
#define PYTHON_WATCH_MS 3000

struct python_watch {
	struct {
		pid_t pid;
		int64_t until_ms;
	} items[PYTHON_WATCH_MAX];
	size_t nr;
	uint64_t dropped;	/* not watched: the list was full */
};

/* pid mapped an interpreter's file at now_ms (again: its time starts over). */
void python_watch__add(struct python_watch *w, pid_t pid, int64_t now_ms);

/*
 * done(ctx, pid) for each process watched: those it says are done with
 * (found, or ended), and those whose time is up, leave the list.
 */
void python_watch__sweep(struct python_watch *w, int64_t now_ms,
			 bool (*done)(void *ctx, pid_t pid), void *ctx);

static inline bool python_watch__busy(const struct python_watch *w)
{
	return w->nr > 0;
}

#endif
