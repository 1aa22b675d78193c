/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A set of perf events, one per CPU, each with an mmap ring, drained in time
 * order. Side-band records (MMAP2, COMM, FORK, LOST) update the core's
 * process tracker here; samples go to on_sample. The perf backend samples
 * through it; the bpf backend uses it with dummy events for side-band only.
 */
#ifndef PERFRING_RINGSET_H
#define PERFRING_RINGSET_H

#include <linux/perf_event.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend-perfring/ring.h"
#include "compat/perf_event.h"
#include "core/core.h"

struct ring_event {
	int fd;			/* owns the ring */
	int cpu;
	struct perf_ring ring;
	int *more_fds;		/* more events on this CPU writing into the same ring */
	int nr_more;
};

struct batch_rec;

struct batch {
	unsigned char *bytes;
	size_t len, cap;
	struct batch_rec *recs;
	size_t nr, cap_recs;
	uint64_t seq;
};

struct ring_set;
typedef int (*ring_sample_fn)(struct ring_set *rs, const struct perf_event_header *hdr);

struct ring_set {
	const char *what;		/* "perf" or "side-band", for messages */
	struct profile_core *core;
	struct ring_event *events;
	int nr_events;
	struct pollfd *pfds;		/* one per event, plus a wake fd */
	uint64_t sample_type;
	uint64_t regs_user;		/* sample_regs_user, for decoding */
	bool sample_id_all;
	bool comm_exec;
	unsigned int data_pages;	/* per ring, after any shrinking */
	struct perf_attr_ladder ladder;
	struct batch batch;
	ring_sample_fn on_sample;
	uint64_t lost;			/* from PERF_RECORD_LOST */
	uint64_t bad_records;
};

/*
 * Open one event per CPU and task from attr, tasks being -1 (all), the
 * launched command, or the threads of -p/-L when system-wide sampling is
 * not allowed; the events of one CPU share one ring of data_pages (shrunk
 * when locked-memory limits refuse it). Prints why on failure. Returns 0
 * or -errno.
 */
int ring_set__open(struct ring_set *rs, const char *what, struct profile_core *core,
		   struct perf_event_attr *attr, const pid_t *tasks, int nr_tasks,
		   unsigned int data_pages);

/* The threads of the -p processes, or the -L threads. Returns count or -errno. */
int ring_set__task_list(const struct profile_opts *opts, pid_t **tids);
int ring_set__enable(struct ring_set *rs);
void ring_set__disable(struct ring_set *rs);
int ring_set__wait(struct ring_set *rs, int wake_fd, int timeout_ms);
/* Read every ring, order the records by time, handle them. */
int ring_set__drain(struct ring_set *rs);
/* Malformed records seen, including the rings' own count. */
uint64_t ring_set__bad_records(const struct ring_set *rs);
void ring_set__close(struct ring_set *rs);

/* The CPUs to open events on: -C's one, or all online. Returns count or -errno. */
int ring_set__cpus(const struct profile_opts *opts, int **cpus);

/*
 * The cpu-clock event of -F/-c, disabled; for a launched command inherited
 * and enabled at its exec, as perf record does.
 */
void ring_set__cpu_clock_attr(struct perf_event_attr *attr, const struct profile_opts *o,
			      bool launch);
/* Ask for the side-band records that keep the process tracker current. */
void ring_set__track_tasks(struct perf_event_attr *attr);

/* A one-line reason for a perf_event_open failure. */
void perf_open_error(int err, bool system_wide, char *why, size_t len);

#endif
