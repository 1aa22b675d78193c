/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The perf-event layer both backends use: a set of perf events, one per
 * CPU (and task), each CPU with an mmap ring, drained in time order.
 * Side-band records (MMAP2, COMM, FORK, LOST) keep the pipeline's process
 * tracker current here; samples go to the handler the owner sets. The perf
 * backend samples through it; the bpf backend opens dummy events with it
 * for side-band only. This is backend-perfring's one public header; ring.h
 * and decode.h are its own.
 */
#ifndef PERFRING_RINGSET_H
#define PERFRING_RINGSET_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"
#include "core/lib/log.h"

struct ring_set;

/* A PERF_RECORD_SAMPLE, valid during the call. Returns 0 or -errno (stops the drain). */
typedef int (*ring_sample_fn)(void *ctx, const struct perf_event_header *hdr);
/* A PERF_RECORD_SWITCH's task and time (attr.context_switch). Returns 0 or -errno. */
typedef int (*ring_switch_fn)(void *ctx, pid_t pid, pid_t tid, uint64_t time, bool out);
/*
 * The raw data of a sample of sample_type RAW (with TIME and CPU: else 0),
 * as a BPF program's bpf_perf_event_output wrote it; valid during the call
 * and only 4-byte aligned. Returns 0 or -errno (stops the drain).
 */
typedef int (*ring_raw_fn)(void *ctx, int cpu, uint64_t time, const void *data, uint32_t size);
/* A PERF_RECORD_LOST: records of that CPU's ring lost (cpu -1 when it does not say). */
typedef void (*ring_lost_fn)(void *ctx, int cpu, uint64_t lost);
/* An exec (a COMM record that says so) or a PERF_RECORD_EXIT of a wanted task. */
typedef int (*ring_task_fn)(void *ctx, bool exit, pid_t pid, pid_t tid, uint64_t time);

/*
 * Open one event per CPU and task from attr, tasks being -1 (all), the
 * launched command, or the threads of -p/-L when system-wide sampling is
 * not allowed; the events of one CPU share one ring of data_pages (shrunk
 * when locked-memory limits refuse it). `what` names the set in messages.
 * Returns 0 or -errno with a reason in err.
 */
int ring_set__open(struct ring_set **out, const char *what, struct pipeline *p,
		   const struct backend_config *cfg, struct perf_event_attr *attr,
		   const pid_t *tasks, int nr_tasks, unsigned int data_pages, struct errmsg *err);
/*
 * The same with task t's events of alt_attr where alt[t]: fields that do
 * not change a record's layout may differ (a stack copy's size, the user
 * callchain); sample_type and sample_regs_user may not (-EINVAL).
 */
int ring_set__open_mixed(struct ring_set **out, const char *what, struct pipeline *p,
			 const struct backend_config *cfg, struct perf_event_attr *attr,
			 struct perf_event_attr *alt_attr, const bool *alt, const pid_t *tasks,
			 int nr_tasks, unsigned int data_pages, struct errmsg *err);
/*
 * The same with one event per CPU and --cgroup directory of cfg
 * (PERF_FLAG_PID_CGROUP): events that count only while a task of the cgroup,
 * or of one below it, runs; their side-band records are those tasks' too.
 */
int ring_set__open_cgroups(struct ring_set **out, const char *what, struct pipeline *p,
			   const struct backend_config *cfg, struct perf_event_attr *attr,
			   unsigned int data_pages, struct errmsg *errm);
/*
 * Whether events can be opened on each --cgroup directory of cfg: the
 * hierarchy must have the perf_event controller, and the rights to
 * CPU-wide events. Returns 0 or -errno with a one-line reason in why.
 */
int ring_set__probe_cgroups(const struct backend_config *cfg, char *why, size_t len);
void ring_set__on_sample(struct ring_set *rs, ring_sample_fn fn, void *ctx);
/*
 * The reader thread reads each sample's interpreted frames as it copies
 * it (cfg->interp_reader); the sample handler finds them with
 * ring_set__sample_interp: true, and the frames (*nr may be 0, *status
 * says why), when they were read so; *read_ns (if asked) is when, in
 * CLOCK_MONOTONIC ns where the records' times are (else 0).
 */
void ring_set__read_interp_early(struct ring_set *rs);
/*
 * The same, the reader woken at each sample for as long as the run lasts,
 * not only while samples of interpreted threads keep coming: for events
 * the kernel filters to those threads (pywaits.h).
 */
void ring_set__read_interp_at_each_sample(struct ring_set *rs);
/*
 * The tracepoint filter (ftrace's syntax: "prev_pid == 12 || ...") of
 * every event of a tracepoint ring set: ringfilter.c. 0 or -errno (the
 * kernel refused it; earlier events may have it).
 */
int ring_set__set_filter(struct ring_set *rs, const char *filter);
/*
 * The events of attr (a tracepoint's, on every CPU) filtered by filter from
 * now on: new events beside each CPU's first (which keeps its own), writing
 * into its ring, enabled where enable says, in place of those a previous
 * call added. 0 or -errno (the previous ones stay).
 */
int ring_set__refilter(struct ring_set *rs, const struct perf_event_attr *attr,
		       const char *filter, bool enable);
bool ring_set__sample_interp(const struct ring_set *rs, const struct interp_frame **frames,
			     unsigned int *nr, uint32_t *status, uint64_t *read_ns);
void ring_set__on_switch(struct ring_set *rs, ring_switch_fn fn, void *ctx);
/* Samples go to fn decoded, instead of to the on_sample handler (a BPF program's output). */
void ring_set__on_raw(struct ring_set *rs, ring_raw_fn fn, void *ctx);
void ring_set__on_lost(struct ring_set *rs, ring_lost_fn fn, void *ctx);
/*
 * fn(ctx, backlog) from the reader thread after each look at the rings
 * while it has room for what they carry (not while full): the thread that
 * keeps the rings from overflowing is alive, whatever the main thread is
 * busy with; backlog is the bytes it holds for a drain (pending and
 * spilled). For a lease on records (backend-bpf/first_copies.c). Set
 * once, while the reader may run; never called without a reader thread.
 */
typedef void (*ring_alive_fn)(void *ctx, size_t backlog);
void ring_set__on_reader_alive(struct ring_set *rs, ring_alive_fn fn, void *ctx);
/*
 * The reader thread holds at most bytes (not its 1 MiB at least) before it
 * spills to a file: for rings that take a few records at a time, whose
 * backlog while the main thread is busy need not stay in memory.
 */
void ring_set__hold_at_most(struct ring_set *rs, size_t bytes);
/* The set's events, one per CPU: the fd of the i-th (i < ring_set__nr_events) and its CPU. */
int ring_set__nr_events(const struct ring_set *rs);
int ring_set__event_fd(const struct ring_set *rs, int i, int *cpu);
void ring_set__on_task(struct ring_set *rs, ring_task_fn fn, void *ctx);
/* Whether switch records come (attr.context_switch asked and kept, 4.3). */
bool ring_set__switch_records(const struct ring_set *rs);
/* Whether record times are CLOCK_MONOTONIC (attr.use_clockid asked and kept, 4.1). */
bool ring_set__monotonic(const struct ring_set *rs);
int ring_set__enable(struct ring_set *rs, struct errmsg *err);
void ring_set__disable(struct ring_set *rs);
int ring_set__wait(struct ring_set *rs, int wake_fd, int timeout_ms);
/*
 * Wait until any of the sets has records for a drain (its reader's signal,
 * or its rings' watermark where it has no reader), wake_fd is readable or
 * timeout_ms passed. Returns 0 or -errno.
 */
int ring_set__wait_sets(struct ring_set *const *sets, int nr_sets, int wake_fd, int timeout_ms);
/* The same, with nr_fds fds to wake at (wake_fd and others: -1 is none). */
int ring_set__wait_sets_fds(struct ring_set *const *sets, int nr_sets, const int *fds, int nr_fds,
			    int timeout_ms);
/*
 * Read every ring, order the records by time, handle them. With a reader
 * thread, what it has copied: records written since it last read (it reads
 * every 10 ms) may wait for the next drain.
 */
int ring_set__drain(struct ring_set *rs);
/*
 * The same, and every record written before the call, however far the
 * reader thread is behind: for counts summed in the kernel, which carry no
 * records of their own (a fork must be known before the child's counts).
 */
int ring_set__drain_now(struct ring_set *rs);
/* Adds the memory of rs (NULL: none) to st's. */
void ring_set__memory(const struct ring_set *rs, struct backend_stats *st);
/* Samples the kernel dropped (PERF_RECORD_LOST). */
uint64_t ring_set__lost(const struct ring_set *rs);
/*
 * Executable maps of PERF_RECORD_MMAP (no MMAP2 before 3.16) whose inode
 * could not be read from /proc/PID/maps: the process was gone.
 */
uint64_t ring_set__maps_without_inode(const struct ring_set *rs);
/* Malformed records seen, including the rings' own count. */
uint64_t ring_set__bad_records(const struct ring_set *rs);
/* Counts a record the owner's handler could not decode. */
void ring_set__count_bad(struct ring_set *rs);
void ring_set__close(struct ring_set *rs);

/*
 * Data pages for the rings of a set planned alone (ringplan.h): nr_rings
 * rings of records_per_s records of about record_bytes (max_record_bytes
 * at most), within the locked-memory budget less reserved_pages that the
 * run's other rings take. -v prints the choice. Returns the pages, or
 * -ENOMEM with a one-line reason in errm.
 */
int ring_set__plan(const char *what, unsigned int nr_rings, uint64_t records_per_s,
		   uint64_t record_bytes, uint64_t max_record_bytes, uint64_t reserved_pages,
		   struct errmsg *errm);

/* Beyond this many threads of -p/-L, one system-wide event per CPU costs fewer fds. */
#define RING_SET_MAX_TASK_EVENTS 1024
/* The threads of the -p processes, or the -L threads. Returns count or -errno. */
int ring_set__task_list(const struct backend_config *cfg, pid_t **tids);
/* The CPUs to open events on: -C's one, or all online. Returns count or -errno. */
int ring_set__cpus(const struct backend_config *cfg, int **cpus);

/*
 * The cpu-clock event of -F/-c, disabled; for a launched command inherited
 * and enabled at its exec, as perf record does.
 */
void ring_set__cpu_clock_attr(struct perf_event_attr *attr, const struct backend_config *cfg,
			      bool launch);
/* Ask for the side-band records that keep the process tracker current. */
void ring_set__track_tasks(struct perf_event_attr *attr);

#endif
