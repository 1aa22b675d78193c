/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to app/run (scripts/check-includes.sh keeps it there): struct
 * run, which run.c sets up and frees, loop.c samples with and report.c
 * ends with, and what the three share. run.c calls the other two; they
 * call nothing of run.c's.
 */
#ifndef APP_RUN_RUN_INTERNAL_H
#define APP_RUN_RUN_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "app/run/filters.h"
#include "app/run/launch.h"
#include "app/run/opts.h"
#include "app/run/outfile.h"
#include "app/run/progress.h"
#include "app/run/run.h"
#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

struct symbolizer;
struct resolver;
struct unwinder;
struct unwind_verdicts;
struct run_python;
struct run_node;

struct run {
	struct run_opts eff;		/* what runs: may differ from what was asked (user only) */
	struct backend_config cfg;
	struct outfile out;
	const struct backend_ops *ops;
	struct backend *backend;
	struct pipeline pipeline;
	bool pipeline_ready;
	struct symbolizer *sym;
	struct resolver *resolver;
	size_t released_images;		/* of ended processes, let go while sampling (-v) */
	size_t freed_images;		/* and of those, freed */
	struct unwinder *unwinder;
	struct unwind_verdicts *verdicts;	/* --unwind auto's, per binary and process */
	struct run_python *python;	/* NULL with --python off */
	struct run_node *node;		/* NULL with --node off */
	struct pid_watch *pidwatch;	/* who had a pid when, for the tracker (NULL: not allowed) */
	struct launch child;
	bool launched;
	struct run_filters filters;	/* --cgroup, --cgroupmap, --mntnsmap */
	/*
	 * --wall without kernel samples and without -U: the kernel part of a
	 * stack stays, for the placeholder of time the kernel withheld.
	 */
	bool kernel_placeholder;
	uint64_t start_ns;		/* wall clock at the start */
	int64_t t_start, t_end;		/* monotonic ms */
	struct progress progress;	/* the line on a terminal during a timed run */
	void *reserve;			/* address space given back when memory runs out */
	bool oom;			/* memory ran out: sampling stopped, the report is partial */
};

/*
 * Out of memory mid-run (an RLIMIT_AS, vm.overcommit_memory=2), what was
 * counted is still worth a report: a reserve of address space, mapped at the
 * start and never touched (no RSS), is given back so that resolving and
 * writing what was counted can allocate.
 */
#define OOM_RESERVE_BYTES (16u << 20)

static inline void out_of_memory(struct run *r)
{
	if (r->reserve)
		munmap(r->reserve, OOM_RESERVE_BYTES);
	r->reserve = NULL;
	r->oom = true;
}

/*
 * Every SETTLE_INTERVAL_MS, images that ended more than SETTLE_GRACE_NS
 * before the newest record give back their mappings. Every sample is read
 * within a drain period (the bpf backend switches its count maps at least
 * every second): the grace is that many times over, for a reader left
 * unscheduled on a saturated host.
 */
#define SETTLE_INTERVAL_MS 5000
#define SETTLE_GRACE_NS (30 * 1000000000ULL)

/* The grace, or the test seam's (run.h). */
static inline uint64_t settle_grace_ns(void)
{
	return run__test_settle_grace_ms ? run__test_settle_grace_ms * 1000000ULL : SETTLE_GRACE_NS;
}

/* SETTLE_INTERVAL_MS, or a sixth of the seam's grace as the two are by default. */
static inline int64_t settle_interval_ms(void)
{
	return run__test_settle_grace_ms ? run__test_settle_grace_ms / 6 + 1 : SETTLE_INTERVAL_MS;
}

/* loop.c: sample until the duration ends, a signal arrives, or the command exits. */
int run__sample_loop(struct run *r);
/* report.c: resolve and write the report, then the warnings; 0 or -errno (printed). */
int run__finish(struct run *r);

#endif
