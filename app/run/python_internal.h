/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to app/run (scripts/check-includes.sh keeps it there): struct
 * run_python, which python.c makes, hooks into the pipeline and the
 * resolver, and frees; python_scan.c finds the processes and reads their
 * threads with; python_share.c tells the backend with; python_report.c
 * reports from. Calls go one way: python.c uses python_scan.c, which uses
 * python_share.c; python_report.c calls none of them.
 */
#ifndef APP_RUN_PYTHON_INTERNAL_H
#define APP_RUN_PYTHON_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "app/run/fair_order_internal.h"
#include "app/run/python_watch.h"
#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

struct addr_space;
struct py_process;
struct py_registry;
struct python_early;

struct run_python {
	struct py_registry *reg;
	struct python_early *early;	/* what the perf backend's reader thread walks */
	struct backend *backend;
	const struct backend_ops *ops;
	bool raw;			/* --python raw */
	bool full_paths;		/* file names in full */
	bool changed;			/* a process found or gone since the backend was told */
	struct pipeline *pl;
	pid_t child;			/* a launched command, or -1 */
	struct python_watch watch;	/* processes that mapped an interpreter's file */
	pid_t *pending;			/* processes running at the start, not looked at yet */
	size_t nr_pending, next_pending;
	size_t scan_cursor;		/* where the last tick's thread reads stopped */
	/* -v: the ticks that ran out of time, and the costliest thread list read. */
	uint64_t ticks_over;
	int64_t slowest_us;
	pid_t slowest_pid;
	uid_t slowest_uid;
	struct interp_proc *procs;	/* what the backend was told */
	struct interp_thread *threads;
	struct fair_slot *order;	/* the order it was told them in */
	size_t cap_procs, cap_threads, cap_order;
	struct left_out left_out;	/* -v: the most a backend's table left out */
};

/* python_scan.c: reads p's threads now, and when to read them again: later the more it cost. */
void run_python__scan_threads(struct run_python *rp, struct py_process *p, int64_t now);
/* python_scan.c: the pipeline's hook at each sample's image: its process looked up, or for. */
void run_python__saw_image(void *ctx, const struct addr_space *as, uint32_t status);
/* python_share.c: tell a backend that walks in the kernel every process and thread now. */
int run_python__tell_backend(struct run_python *rp);

#endif
