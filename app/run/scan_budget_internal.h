/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to app/run (scripts/check-includes.sh keeps it there): how long
 * the main loop may spend reading interpreter processes, whatever runtime
 * they run, and how often a process's thread list is read again.
 */
#ifndef APP_RUN_SCAN_BUDGET_INTERNAL_H
#define APP_RUN_SCAN_BUDGET_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

/* Threads come and go: each process's list is read again this often. */
#define THREAD_SCAN_MS 1000
/*
 * What any process can make the run read (its interpreter found, its
 * thread states, thousands of them forged) is read in the main loop, which
 * also drains the samples and answers signals: at most this long a tick,
 * the rest at the next ones, and before sampling starts at most
 * SCAN_BUDGET_MS (the processes not looked at by then are looked at in the
 * first ticks).
 */
#define TICK_BUDGET_MS 20
#define SCAN_BUDGET_MS 250
/*
 * A process's thread list costs it this many times its reading's time
 * before it is read again (at least THREAD_SCAN_MS): one whose list took
 * 20 ms to read is read every 4 s, one of a few threads every second.
 */
#define SCAN_COST_SHARE 200

/* When a thread list read at now, at a cost of cost_us, is read again: later the more it cost. */
static inline int64_t scan_again_ms(int64_t now, int64_t cost_us)
{
	int64_t wait_ms = cost_us * SCAN_COST_SHARE / 1000;

	return now + (wait_ms > THREAD_SCAN_MS ? wait_ms : THREAD_SCAN_MS);
}

/*
 * Whether a list due at next_scan_ms may be read again now, before its
 * time, because a sample met a thread the list lacked: 100 ms after the
 * last read of a cheap list, as late as the cost share allows for a costly
 * one.
 */
static inline bool may_scan_early(int64_t next_scan_ms, int64_t now)
{
	return now >= next_scan_ms - THREAD_SCAN_MS + 100;
}

#endif
