/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Starts the command to profile, held before exec until its events are
 * open (as perf record does), so that nothing it runs is missed.
 */
#ifndef APP_RUN_LAUNCH_H
#define APP_RUN_LAUNCH_H

#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;	/* write end: a byte releases the child */
	int err_fd;	/* read end: errno of a failed exec, or EOF */
	int status;	/* wait status once reaped */
	int reaped;
};

/* Fork the command; it waits for launch__go(). Returns 0 or -errno. */
int launch__spawn(struct launch *l, char *const argv[]);
/* Release it to exec. Returns 0, or -errno of a failed exec (already reaped). */
int launch__go(struct launch *l);
/* Release without exec (setup failed): the child exits. */
void launch__abort(struct launch *l);
/* Reap if it exited; returns 1 once reaped, 0 if still running. */
int launch__poll(struct launch *l);
/* Block until it exits. */
void launch__wait(struct launch *l);
/* Shell-style exit code of a reaped child: its status, or 128 + signal. */
int launch__exit_code(const struct launch *l);

#endif
