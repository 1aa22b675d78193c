/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames read right after each sample, by the perf backend's reader
 * thread: the threads of the run's Python processes, published by the main
 * thread, walked from the reader thread under a lock.
 */
#ifndef APP_RUN_PYTHON_EARLY_H
#define APP_RUN_PYTHON_EARLY_H

#include <stdint.h>

#include "core/backend/backend.h"

struct python_early;
struct py_registry;

struct python_early *python_early__new(void);
void python_early__free(struct python_early *e);

/* The registry's live processes and their threads, as the reader will walk them. */
int python_early__publish(struct python_early *e, const struct py_registry *reg);

/* What a backend calls: valid while e lives. */
const struct interp_reader *python_early__reader(struct python_early *e);

/*
 * Reads asked of it for threads it knew, of those, reads that gave frames,
 * and the walks read again because the thread left its leaf frame meanwhile.
 */
void python_early__counts(struct python_early *e, uint64_t *reads, uint64_t *frames,
			  uint64_t *rewalks);

#endif
