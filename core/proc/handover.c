// SPDX-License-Identifier: GPL-2.0
/*
 * Whether what was opened through /proc/PID belongs to the image meant.
 * A pid names another process once its own has gone, and one that takes
 * it can do so within a millisecond of the exit (issue 46, rows 1 and 7):
 * /proc's start time, in clock ticks, cannot tell the two apart. The
 * side-band can: the kernel writes the main thread's exit record before
 * its pid is free for another. So a handle opened at time T (read right
 * after the open, on the records' clock) is the image's process unless its
 * main thread exited between the image's start and T. The tracker knows
 * the records it applied; the watcher set here (the backend's) those
 * written since and not applied yet.
 */
#include "core/proc/proctrack_internal.h"

#include "core/lib/clock.h"

void proctrack__set_handover(struct proctrack *pt, proctrack_handover_fn fn, void *ctx)
{
	pt->handover = fn;
	pt->handover_ctx = ctx;
}

uint64_t proctrack__records_now(const struct proctrack *pt)
{
	/* Comparable only where the records are on CLOCK_MONOTONIC (clock_to_wall_ns set). */
	return pt->clock_to_wall_ns ? (uint64_t)mono_ns() : 0;
}

bool proctrack__exact_handover(const struct proctrack *pt)
{
	return pt->handover && pt->clock_to_wall_ns;
}

bool proctrack__held_by(struct proctrack *pt, const struct addr_space *as, uint64_t opened)
{
	if (as->leader_exited || (as->end_time && (!opened || as->end_time <= opened))) {
		pt->counts.handovers_refused++;
		return false;
	}
	if (!opened || !pt->handover)
		return true;	/* no watcher: the records applied and /proc's start time say */
	if (pt->handover(pt->handover_ctx, as->pid, as->start_time, opened)) {
		pt->counts.handovers_refused++;
		return false;
	}
	return true;
}
