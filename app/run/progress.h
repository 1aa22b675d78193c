/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Feedback during a timed run on a terminal: one line on stderr, redrawn in
 * place ("profile: 3/10 s, 1234 samples, 0 lost"), erased before anything
 * else is printed there. Never when stderr is not a terminal, when folded
 * stacks go down a pipe, or with --quiet.
 */
#ifndef APP_RUN_PROGRESS_H
#define APP_RUN_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

#include "app/run/opts.h"
#include "core/backend/backend.h"

struct progress {
	bool on;
	bool drawn;		/* a line is on the screen */
	bool off_cpu;		/* count switches, not samples */
	bool on_cpu;
	unsigned int duration;	/* seconds */
	int64_t start_ms;
	int64_t last_ms;	/* last drawn */
};

/* Whether this run shows progress (the terminal test included); start_ms is t = 0. */
void progress__init(struct progress *p, const struct run_opts *o, int64_t start_ms);
/* Redraw, at most a few times a second. */
void progress__update(struct progress *p, const struct backend_stats *st, int64_t now_ms);
/* Erase the line, if drawn. */
void progress__clear(struct progress *p);

#endif
