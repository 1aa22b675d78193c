/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --wall where kernel.perf_event_paranoid (2) withholds the samples taken in
 * the kernel: the cpu-clock timer still fires there, but the kernel drops
 * the sample (exclude_kernel), so the on-CPU time a thread spends in system
 * calls and page faults would be missing from its wall-clock total, with no
 * record of the loss. The switch records (PERF_RECORD_SWITCH, which the
 * off-CPU side has anyway) say when each thread was on a CPU; what of that
 * the user-mode samples do not cover was spent in the kernel. It is counted
 * as the samples the kernel withheld, under a placeholder stack.
 */
#ifndef PERFRING_WITHHELD_H
#define PERFRING_WITHHELD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/agg/pipeline.h"

struct withheld_time;

/* period_ns: what one cpu-clock sample stands for. */
struct withheld_time *withheld_time__new(struct pipeline *p, uint64_t period_ns);
void withheld_time__free(struct withheld_time *w);

/*
 * When the events were enabled (record clock), for threads already running
 * then (-p, -L); a launched command's start is its exec instead.
 */
void withheld_time__set_start(struct withheld_time *w, uint64_t time);
/* A switch record of a profiled thread. */
int withheld_time__switch(struct withheld_time *w, pid_t pid, pid_t tid, uint64_t time, bool out);
/* An exec (its thread is on a CPU from then) or an exit (it leaves the CPU for good). */
int withheld_time__task(struct withheld_time *w, bool exit, pid_t pid, pid_t tid, uint64_t time);
/* A user-mode sample of the thread, counted by the pipeline. */
int withheld_time__sample(struct withheld_time *w, pid_t pid, pid_t tid);
/*
 * Once, at the end (record clock): each thread's on-CPU time not covered by
 * its samples goes to the pipeline as withheld samples.
 */
int withheld_time__finish(struct withheld_time *w, uint64_t end);
/* The on-CPU nanoseconds counted so (after finish). */
uint64_t withheld_time__ns(const struct withheld_time *w);

#endif
