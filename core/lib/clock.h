/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The two clocks the profiler reads: CLOCK_MONOTONIC (intervals, and the
 * side-band records' times where perf events use it) and CLOCK_REALTIME
 * (when files changed, when the run began).
 */
#ifndef CORE_LIB_CLOCK_H
#define CORE_LIB_CLOCK_H

#include <stdint.h>
#include <time.h>

static inline int64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static inline int64_t mono_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

static inline int64_t mono_ms(void)
{
	return mono_ns() / 1000000;
}

static inline int64_t wall_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

/* What to add to a CLOCK_MONOTONIC time for the wall clock at that moment (changes with settimeofday). */
static inline int64_t mono_to_wall_ns(void)
{
	struct timespec mono, wall;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	return ((int64_t)wall.tv_sec - mono.tv_sec) * 1000000000LL + (wall.tv_nsec - mono.tv_nsec);
}

#endif
