/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One run of the profiler: run__main(), which chooses a backend, samples,
 * resolves the profile and writes the report, for what struct run_opts
 * (opts.h) asks.
 */
#ifndef APP_RUN_RUN_H
#define APP_RUN_RUN_H

#include "app/run/opts.h"
#include "core/backend/backend.h"

#define EXIT_USAGE 2

/*
 * Test seam (tests/seams): when non-zero, what ended processes held is let
 * go this many ms after their end instead of 30 s, looked at six times as
 * often: tests of the letting go need not wait half a minute for it.
 */
extern unsigned int run__test_settle_grace_ms;

/*
 * Run the profile opts describe with one of backends (NULL-terminated, in
 * order of preference). Returns the exit status: 0, 1 (runtime failure),
 * EXIT_USAGE, or a launched command's own.
 */
int run__main(const struct run_opts *opts, const struct backend_ops *const *backends);

/*
 * Compare the profiles in opts->diff_base and opts->diff_new and write the
 * comparison in opts->format. Returns 0, 1 when a file cannot be read or
 * the report written, or when a function's self share grew by more than
 * opts->diff_threshold points.
 */
int run__diff(const struct run_opts *opts);

#endif
