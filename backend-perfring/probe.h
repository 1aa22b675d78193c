/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the perf backend can run here, and why not: system-wide needs
 * root, CAP_PERFMON or perf_event_paranoid <= 0; one's own processes can be
 * sampled up to paranoid 2, user mode only above 1.
 */
#ifndef PERFRING_PROBE_H
#define PERFRING_PROBE_H

#include <stdbool.h>
#include <sys/types.h>

#include "core/backend/backend.h"

void perfring__probe(const struct backend_config *cfg, struct backend_plan *plan);
/* Open and close one event like the real ones; returns 0 or -errno. */
int perfring__try_open(const struct backend_config *c, bool launch, bool user_mode_only,
		       pid_t pid, int cpu);
/* A thread of the targets to try per-task events on: 0 for the command to be launched. */
pid_t perfring__first_task(const struct backend_config *c);

#endif
