/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The sample path every backend feeds, the same whichever backend took the
 * sample: filter (-p, -L, idle), apply the stack rules, unwind user stacks
 * that come as snapshots (with a function the run gives), and count each
 * stack with the process image it belongs to.
 */
#ifndef CORE_AGG_PIPELINE_H
#define CORE_AGG_PIPELINE_H

#include <stdbool.h>

#include "core/agg/agg.h"
#include "core/agg/members.h"
#include "core/proc/proctrack.h"
#include "core/sample/sample.h"

struct pipeline_config {
	const pid_t *pids;	/* -p: only these processes (borrowed) */
	int nr_pids;
	const pid_t *tids;	/* -L: only these threads (borrowed) */
	int nr_tids;
	bool include_idle;	/* -I (never for off-CPU time: idle is what runs when nothing else does) */
	bool skip_user_threads;		/* offcputime -k: kernel threads only */
	bool skip_kernel_threads;	/* offcputime -u: user threads only */
	bool user_stacks;	/* false with -K */
	bool kernel_stacks;	/* false with -U, or where the kernel is off limits */
	bool by_thread;		/* stacks of different threads are kept apart */
	bool launched;		/* the target is a command started by the run */
	/* __schedule's addresses: off-CPU kernel stacks start there (0: not known). */
	uint64_t sched_start, sched_end;
};

/* Unwind a snapshot into ips (leaf first); returns the number of frames. */
typedef unsigned int (*pipeline_unwind_fn)(void *ctx, const struct addr_space *as,
					   const struct user_snapshot *snap, uint64_t *ips,
					   unsigned int max);

/*
 * What the run tells the pipeline of interpreters (interp/ through
 * app/run): each sample's image is shown to saw_image (which finds the
 * processes that run an interpreter), and a sample that asks for it
 * (read_interp) gets its thread's interpreted frames from walk, read now.
 */
struct pipeline_interp {
	void *ctx;
	/* status: the sample's enum interp_status as the backend read it (0: not read). */
	void (*saw_image)(void *ctx, const struct addr_space *as, uint32_t status);
	/*
	 * Read now the frames of s's thread (s->tid). The sample's user stack
	 * is unwound by then (user_ips, nr_user), and its copy (user_snapshot,
	 * or unwound_snapshot where pipeline__unwind_now took it), where it
	 * came with one, is still there: a walker of the stack itself (Node's)
	 * reads it.
	 */
	unsigned int (*walk)(void *ctx, const struct addr_space *as, const struct sample *s,
			     struct interp_frame *out, unsigned int max, uint32_t *status);
	/* Name frames now, for samples of them to come after the process may be gone. */
	void (*name_now)(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
			 unsigned int nr);
	/* pid mapped the executable file path (side-band): an interpreter starting, maybe. */
	void (*mapped)(void *ctx, pid_t pid, const char *path);
};

struct pipeline {
	struct pipeline_config cfg;
	struct pipeline_interp interp;
	struct proctrack *procs;
	struct agg agg;
	pipeline_unwind_fn unwind;
	void *unwind_ctx;
	/*
	 * A launched command's process tree, where events are system-wide
	 * (off-CPU time on sched_switch): its pid and every process forked in
	 * it, each from its fork to its exit. The -p processes and -L threads
	 * likewise: a pid taken by another process since is not theirs.
	 */
	pid_t tree_root;
	struct members tree, pids, tids;
	/* Where samples without a time were taken (pipeline__set_window). */
	uint64_t window_start, window_end;
	uint64_t filtered;	/* samples dropped by the filters */
	/*
	 * Samples whose process had two images in their interval (an exec, a
	 * pid reused) that would name their user frames differently: [unknown].
	 */
	uint64_t ambiguous_images;
	/*
	 * Samples read after their process's image was released (it ended
	 * long before: proctrack__settle): their user frames are [unknown].
	 */
	uint64_t late_images;
	uint64_t not_unwound;	/* snapshots that came without an unwinder */
	/* On-CPU samples of interpreters' threads by enum interp_status, and those cut (flags). */
	uint64_t interp_samples[INTERP_LOST + 1];
	uint64_t interp_cut;
	/* Samples counted in the kernel whose pid was two processes' in their interval (INTERP_ENDED). */
	uint64_t interp_other_process;
	uint64_t dropped_oom;	/* samples not counted for want of memory (the run then stops) */
};

/* Test seam (tests/seams): once this many distinct stacks are counted, memory "runs out". */
extern size_t pipeline__test_oom_after;

int pipeline__init(struct pipeline *p, const struct pipeline_config *cfg);
void pipeline__fini(struct pipeline *p);
void pipeline__set_unwind(struct pipeline *p, pipeline_unwind_fn fn, void *ctx);
void pipeline__set_interp(struct pipeline *p, const struct pipeline_interp *interp);
/*
 * A backend that walks interpreters in the kernel met a thread of pid that
 * its tables did not know, before the sample's drain: shown to saw_image
 * as such a sample would be, so that the threads are read again now.
 */
void pipeline__interp_unknown_thread(struct pipeline *p, pid_t pid);
/*
 * A backend holds frames of pid's interpreter whose samples it may give
 * only later (an off-CPU wait not over): named now, while pid lives.
 */
void pipeline__interp_name_now(struct pipeline *p, pid_t pid, const struct interp_frame *frames,
			       unsigned int nr);

/* The side-band's executable mapping m of pid, told to the interpreters' finder. */
void pipeline__interp_mapped(struct pipeline *p, pid_t pid, const struct mapping *m);

/*
 * Samples that carry no time were taken between t0 and t1 (side-band clock):
 * counts drained from the kernel. The default, and t0 = t1 = UINT64_MAX:
 * the process's current image.
 */
void pipeline__set_window(struct pipeline *p, uint64_t t0, uint64_t t1);

/* Keep only the process tree of root (a launched command), as it forks. */
int pipeline__set_tree(struct pipeline *p, pid_t root);
/*
 * A fork record (side-band clock time): thread tid of pid, forked from ppid
 * (thread ptid); pid == ppid for a new thread. A new process is in the tree
 * if its parent is; one that takes the pid or tid of a member (of the tree,
 * -p or -L) after it ended begins another lifetime, not the member's.
 */
int pipeline__note_fork(struct pipeline *p, pid_t pid, pid_t ppid, pid_t tid, uint64_t time);
/* An exit record: thread tid of pid exited at time. A member ends with its last thread. */
void pipeline__note_exit(struct pipeline *p, pid_t pid, pid_t tid, uint64_t time);
/*
 * Forget the members (tree, -p, -L) that ended more than grace before the
 * newest record: their samples have all been read.
 */
void pipeline__forget_ended(struct pipeline *p, uint64_t grace);
/*
 * How many members (tree, -p, -L) have ended: a backend that sums time in
 * the kernel by pid drains at a change, so that the sums of a member and
 * of the process that takes its pid after it fall in different windows.
 */
uint64_t pipeline__members_ended(const struct pipeline *p);

/*
 * Whether samples of this process may be wanted (for side-band bookkeeping;
 * a member that ended still is, until forgotten: its late samples).
 */
bool pipeline__wants_pid(const struct pipeline *p, pid_t pid);
/*
 * Whether the filters (-p, -L, idle) may keep a sample of this thread; the
 * lifetimes of the members it names are checked by pipeline__count, with
 * the sample's time.
 */
bool pipeline__wants_thread(const struct pipeline *p, pid_t pid, pid_t tid);

/*
 * Read the mappings of every wanted process that exists now, as perf record
 * does: a process that exits before its first sample is handled still
 * symbolizes.
 */
int pipeline__snapshot_processes(struct pipeline *p);

/*
 * Unwind s's user snapshot now into buf (MAX_STACK_DEPTH frames): s then
 * carries addresses. For stacks kept for later (off-CPU time is counted at
 * switch-in, the stack is taken at switch-out, when the copy is current).
 */
void pipeline__unwind_now(struct pipeline *p, struct sample *s, uint64_t *buf);

/*
 * Read s's interpreted frames now into buf (MAX_INTERP_DEPTH), if it asks
 * (read_interp): for stacks kept for later, as pipeline__unwind_now.
 */
void pipeline__interp_now(struct pipeline *p, struct sample *s, struct interp_frame *buf);

/* Filter, trim, unwind and count one sample. Returns 0 or -ENOMEM. */
int pipeline__add(struct pipeline *p, struct sample *s);
/* The same for a sample the caller already checked with pipeline__wants_thread(). */
int pipeline__count(struct pipeline *p, struct sample *s);

#endif
