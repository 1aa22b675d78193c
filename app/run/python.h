/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames in a run (app/run/python.c): the Python processes found
 * among the samples' images, their threads, and what the pipeline, the
 * model and a backend that walks in the kernel are told of them.
 */
#ifndef APP_RUN_PYTHON_H
#define APP_RUN_PYTHON_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

struct resolver;
struct run_python;

/* Hooks itself into pl and res; raw keeps every native frame, full_paths names files in full. */
struct run_python *run_python__new(struct pipeline *pl, struct resolver *res, bool raw,
				   bool full_paths);
void run_python__free(struct run_python *rp);
/* The backend that samples: told of the processes if it walks them (ops->set_interp). */
void run_python__set_backend(struct run_python *rp, struct backend *b,
			     const struct backend_ops *ops);
/* After each drain: threads read again every second; the backend told of what changed. */
void run_python__tick(struct run_python *rp);
/*
 * Before sampling: the Python processes running now among those pl wants
 * (their mappings were read), and the launched command child (or -1),
 * looked at every tick from now on.
 */
void run_python__scan(struct run_python *rp, struct pipeline *pl, pid_t child);
/* Whether processes that mapped an interpreter's file are being looked at (ticks come often). */
bool run_python__watching(const struct run_python *rp);
/* Its reads right after each sample, for a backend that can make them (the perf backend). */
const struct interp_reader *run_python__reader(struct run_python *rp);
/* Image as is freed: its Python process goes with it. */
void run_python__ended(struct run_python *rp, const struct addr_space *as);
/* -v: the processes found, and why samples had no Python frames. */
void run_python__report(const struct run_python *rp, const struct pipeline *pl,
			const struct resolver *res);

#endif
