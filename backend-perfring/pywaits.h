/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The Python frames of off-CPU waits, read at their switch-out: a second
 * set of sched_switch events, filtered in the kernel to the Python threads
 * the run knows, that wakes its reader thread at each of their switch-outs
 * (not at each switch of the host), which reads the thread's frames
 * microseconds after it, while the thread still waits. The off-CPU
 * handler takes them by thread and time; at the drain, when the main
 * events' records are handled (up to 100 ms on), a short wait is over and
 * the thread's frames are where it went on to.
 */
#ifndef PERFRING_PYWAITS_H
#define PERFRING_PYWAITS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/backend/backend.h"
#include "core/lib/log.h"
#include "core/sample/sample.h"

struct py_waits;
struct pipeline;
struct ring_set;

/*
 * Where the tracepoint and the reader's thread list allow, *out is set;
 * its events are opened at the first drain that knows a Python thread (a
 * host without one pays nothing), and where they cannot be, the frames are
 * read at the drain, as -v says. *out NULL: nothing to do. Returns 0, or
 * -ENOMEM.
 */
int py_waits__open(struct py_waits **out, struct pipeline *p, const struct backend_config *cfg);
void py_waits__close(struct py_waits *w);
int py_waits__enable(struct py_waits *w, struct errmsg *err);
void py_waits__disable(struct py_waits *w);
/*
 * Before each drain of the off-CPU events: the events opened or their
 * filter brought up to the threads known now, then what the reader read
 * taken in. 0 or -ENOMEM.
 */
int py_waits__drain(struct py_waits *w);
/*
 * The frames of tid's switch-out at time (ns, the off-CPU event's), read
 * at it, into frames (MAX_INTERP_DEPTH): true with *nr, *status and
 * *read_ns (when, CLOCK_MONOTONIC), false where none was read.
 */
bool py_waits__take(struct py_waits *w, pid_t tid, uint64_t time, struct interp_frame *frames,
		    unsigned int *nr, uint32_t *status, uint64_t *read_ns);
/* A wait whose frames were taken, ended at time (ns): whether it was over before they were read. */
void py_waits__outcome(struct py_waits *w, uint64_t time, bool late);
/* After the off-CPU drain: reads older than up_to (ns) that no switch-out took are let go. */
void py_waits__forget(struct py_waits *w, uint64_t up_to);
/* Its events' set (the run waits on its reader too), or NULL before they open. */
struct ring_set *py_waits__ring_set(const struct py_waits *w);
void py_waits__memory(const struct py_waits *w, struct backend_stats *st);

#endif
