/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rooms of the ring set share, and no one else: the set itself
 * (ringset.c opens, enables and closes it), its reader thread (reader.c),
 * and the records of a drain in time order (dispatch.c), side-band records
 * applied to the process tracker (sideband.c). The public API is ringset.h.
 */
#ifndef PERFRING_RINGSET_INTERNAL_H
#define PERFRING_RINGSET_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend-perfring/lend.h"
#include "backend-perfring/mapinode.h"
#include "backend-perfring/ring.h"
#include "backend-perfring/spill.h"
#include "backend-perfring/stackfill.h"
#include "backend-perfring/ringset.h"
#include "compat/perf_event.h"

struct ring_event {
	int fd;			/* owns the ring */
	int cpu;
	struct perf_ring ring;
	int *more_fds;		/* more events on this CPU writing into the same ring */
	int nr_more;
};

/* One record copied out of a ring, ordered by time then arrival. */
struct batch_rec {
	uint64_t time;
	uint64_t seq;
	size_t offset;		/* into batch.bytes */
	size_t interp;		/* its interpreted frames (struct early_interp) there, or NO_INTERP */
};

#define NO_INTERP SIZE_MAX

/* A sample's interpreted frames as the reader thread read them, after the record. */
struct early_interp {
	uint32_t nr;
	uint32_t status;	/* enum interp_status, flags */
	uint64_t read_ns;	/* when (CLOCK_MONOTONIC), or 0: records have other times */
	struct interp_frame frames[];
};

/* The records of one drain, from every ring. */
struct batch {
	unsigned char *bytes;
	size_t len, cap;
	struct batch_rec *recs;
	size_t nr, cap_recs;
	uint64_t seq;
};

/*
 * Buckets of the delays from a sample to the read of its interpreted
 * frames: up to 10, 20, 50 ... 50000 us, then longer.
 */
#define READ_DELAY_BUCKETS 14

/* The reader thread (reader.c says why it copies, and how much it holds). */
struct ring_reader {
	pthread_t thread;
	bool on;
	bool realtime;			/* SCHED_FIFO */
	pthread_mutex_t lock;
	struct batch pending;
	int efd;			/* readable: pending has PENDING_WAKE bytes */
	int stop_efd;			/* readable: stop (wakes the thread's poll) */
	int stop;			/* atomic: the thread ends */
	int err;			/* the thread's first error (-ENOMEM) */
	size_t budget;			/* most bytes pending holds (reader.c) */
	size_t peak;			/* most bytes it held */
	struct prio_lend lend;		/* the reader's priority lent to the drainer */
	struct spill spill;		/* records past the budget, oldest first */
	bool spill_turn;		/* the drain's next part comes from the spill file */
	unsigned char *cut_buf;		/* a cut record on its way to the spill file */
	struct stack_fill fill;		/* copies the kernel cut short, completed */
	unsigned char *fill_buf;	/* a completed record, before it is kept */
	bool drain_soon;		/* the interp reader asked for a drain (a new thread) */
	int64_t interp_seen_ns;		/* when a sample of an interpreted thread was last read */
	/* Interpreted frames read: how long after their sample (READ_DELAY_EDGES_US). */
	uint64_t read_delays[READ_DELAY_BUCKETS];
};

struct ring_set {
	const char *what;		/* "perf" or "side-band", for messages */
	struct pipeline *pipeline;
	const struct backend_config *cfg;
	struct ring_event *events;
	int nr_events;
	uint64_t sample_type;
	uint64_t regs_user;		/* sample_regs_user, for decoding */
	bool sample_id_all;
	bool comm_exec;
	unsigned int data_pages;	/* per ring, after any shrinking */
	struct perf_attr_ladder ladder;
	struct batch batch;
	struct batch *fill;		/* where consumed records go: batch, or the reader's pending */
	struct ring_reader reader;
	ring_sample_fn on_sample;
	void *on_sample_ctx;
	bool interp_early;		/* the reader reads interpreted frames at each sample */
	bool wake_each_sample;		/* events wake their ring's pollers at each sample */
	bool wake_always;		/* ...and the reader waits on them whatever it read */
	const struct early_interp *cur_interp;	/* the record being handled's, or NULL */
	ring_switch_fn on_switch;
	void *on_switch_ctx;
	ring_raw_fn on_raw;
	void *on_raw_ctx;
	ring_lost_fn on_lost;
	void *on_lost_ctx;
	ring_alive_fn on_reader_alive;	/* ring_set__on_reader_alive */
	void *on_reader_alive_ctx;
	ring_task_fn on_task;
	void *on_task_ctx;
	bool use_clockid;		/* asked for CLOCK_MONOTONIC times */
	int64_t mono_to_wall_ns;	/* CLOCK_MONOTONIC to wall clock in this drain; 0: not so */
	bool context_switch;		/* asked for switch records */
	bool cgroup_tasks;		/* the tasks are --cgroup directories (their fds) */
	uint64_t lost;			/* from PERF_RECORD_LOST */
	uint64_t bytes_read, bytes_kept;	/* by the reader, stack copies cut (decode.h) */
	/* Side-band recovery after a loss: the lost count it answered, when, how many. */
	bool tracks_tasks;
	uint64_t lost_resynced;
	int64_t last_resync_ms;
	uint64_t resynced;
	uint64_t bad_records;
	struct map_inode_cache maps;	/* inodes for PERF_RECORD_MMAP (before 3.16) */
	uint64_t maps_without_inode;	/* of those, gone before /proc told their inode */
};

/*
 * reader.c: the reader thread started with the set, stopped at its
 * disable, freed at its close; a drain takes what it copied into rs->batch
 * in parts (what it holds, then what it spilled, a budget at a time), with
 * consume the rings' newer records after the last. take returns 1 when
 * another part follows, 0 after the last, or -errno.
 */
void ring_reader__start(struct ring_set *rs);
void ring_reader__stop(struct ring_set *rs);
void ring_reader__free(struct ring_set *rs);
int ring_reader__take(struct ring_set *rs, bool consume);
/* After a drain: the reader's priority given back once what waits is small again. */
void ring_reader__settle(struct ring_set *rs);
/*
 * Before a batch is filled again: the room a burst grew it to given back
 * when its last fill used little of it (a burst of long mmap records, up to
 * PENDING_MAX, held its size for the rest of the run: issue 32).
 */
void batch__trim(struct batch *bt);

/* sideband.c: an MMAP, MMAP2, COMM or FORK record to the tracker. Returns 0 or -errno. */
int sideband__record(struct ring_set *rs, const struct perf_event_header *hdr);
/* A PERF_RECORD_EXIT: the image's end, and the owner's on_task. Returns 0 or -errno. */
int sideband__exit(struct ring_set *rs, const struct perf_event_header *hdr);
/* After records were lost, the running processes read again from /proc. Returns 0 or -errno. */
int sideband__resync(struct ring_set *rs);

#endif
