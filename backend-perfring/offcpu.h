/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf backend's off-CPU time, summed in user space: a thread's stacks
 * are kept at its switch-out and counted, with the time it was away, at its
 * switch-in. Three sources, the best this host allows:
 *   - sched:sched_switch per CPU (root, CAP_PERFMON with tracefs): every
 *     switch with prev_state, so --state works;
 *   - the context-switch software event per task with attr.context_switch
 *     (4.3): a sample with stacks at each switch-out of one's own tasks,
 *     PERF_RECORD_SWITCH at each switch-in (kernel.perf_event_paranoid <= 1);
 *   - PERF_RECORD_SWITCH alone (paranoid 2, which withholds samples taken
 *     in the kernel, where every switch is): per-thread times, no stacks.
 */
#ifndef PERFRING_OFFCPU_H
#define PERFRING_OFFCPU_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

enum offcpu_source {
	OFFCPU_TRACEPOINT,
	OFFCPU_SWITCH_SAMPLES,
	OFFCPU_SWITCHES_ONLY,
};

struct perf_offcpu;
struct py_waits;

/*
 * Which source can run for cfg (target: a thread to try per-task events on,
 * 0 for the command to be launched). Returns 0 with *source, or -errno
 * with why. A stackless source says so in why too.
 */
int perf_offcpu__probe(const struct backend_config *cfg, pid_t target, enum offcpu_source *source,
		       char *why, size_t len);

/* The event attribute of a source (sample type, callchains, stack copies for dwarf). */
int perf_offcpu__attr(const struct backend_config *cfg, enum offcpu_source source,
		      struct perf_event_attr *attr, char *why, size_t len);

int perf_offcpu__new(struct perf_offcpu **out, const struct backend_config *cfg,
		     struct pipeline *p, enum offcpu_source source, const struct perf_event_attr *attr,
		     char *why, size_t len);
void perf_offcpu__free(struct perf_offcpu *o);

/*
 * A switch-out's interpreted frames as the reader thread read them when it
 * copied the record (microseconds after the switch, while the thread still
 * waits), and when (CLOCK_MONOTONIC ns, 0 if unknown).
 */
struct offcpu_early_interp {
	const struct interp_frame *frames;
	unsigned int nr;
	uint32_t status;
	uint64_t read_ns;
};

/*
 * Where the tracepoint's switch-outs of Python threads find their frames
 * read at them (w may be NULL), and whether record times are
 * CLOCK_MONOTONIC: then frames read after a wait ended are left out.
 */
void perf_offcpu__use_py_waits(struct perf_offcpu *o, struct py_waits *w, bool monotonic);

/*
 * A ring sample of the source's events; -EBADMSG when malformed. early:
 * its frames read by the reader thread, or NULL (read now, where wanted).
 */
int perf_offcpu__sample(struct perf_offcpu *o, const struct perf_event_header *hdr,
			const struct offcpu_early_interp *early);
/* A PERF_RECORD_SWITCH of a task. */
int perf_offcpu__switch(struct perf_offcpu *o, pid_t pid, pid_t tid, uint64_t time, bool out);
/* Whether the events' switch records came (the kernel may lack them: before 4.3). */
void perf_offcpu__use_switch_records(struct perf_offcpu *o, bool yes);
/* Count the threads still switched out up to end (record clock), once. */
int perf_offcpu__finish(struct perf_offcpu *o, uint64_t end);
/* The latest record time seen: the end where record times are not CLOCK_MONOTONIC. */
uint64_t perf_offcpu__last_time(const struct perf_offcpu *o);
void perf_offcpu__stats(const struct perf_offcpu *o, struct backend_stats *st);

#endif
