/* SPDX-License-Identifier: GPL-2.0 */
/*
 * When a process began, as /proc tells it: a pid names a process only
 * together with its start (a pid that was reused is another process), and
 * what is read under /proc/PID must be of the process meant.
 */
#ifndef CORE_LIB_PIDSTART_H
#define CORE_LIB_PIDSTART_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The wall clock (CLOCK_REALTIME, ns) at which the process of the open
 * /proc/PID directory dirfd began: its stat's start time, in clock ticks
 * of CLOCK_BOOTTIME, rounded down to a tick. 0 if it is gone or unreadable.
 */
int64_t pidstart__wall_ns(int dirfd);

/*
 * Whether the process of dirfd had begun by began_ns (wall clock; its
 * image's start as the side-band records date it, which is never earlier
 * than the process's): false for one that took the pid later, or is gone.
 * began_ns 0 (not known): true while it runs.
 */
bool pidstart__began_by(int dirfd, int64_t began_ns);

/*
 * Whether a process (or thread) that began at start (pidstart__wall_ns)
 * began after when_ns, beyond the rounding of its start: what was read of
 * it is not of what ran at when_ns. False where either is not known (0).
 */
bool pidstart__after(int64_t start, int64_t when_ns);

#endif
