/* SPDX-License-Identifier: GPL-2.0 */
/* One profiling run: choose a backend, sample, report. */
#ifndef CORE_PROFILE_H
#define CORE_PROFILE_H

#include "core/backend.h"
#include "core/options.h"

#define EXIT_USAGE 2

/*
 * Run the profile described by opts with the first usable backend of the
 * NULL-terminated list (or the one --backend names). Returns the process
 * exit code: 0, 1 (runtime failure), 2 (usage), or a launched command's code.
 */
int profile__run(const struct profile_opts *opts, const struct backend_ops *const *backends);

#endif
