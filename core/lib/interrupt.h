/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the user asked the run to stop (SIGINT, SIGTERM, SIGHUP), for
 * long loops anywhere below the run to poll: building the profile, the
 * writers, the scan of /proc. The run's signal handler raises it; the run
 * decides from when on a signal counts (interrupt__arm): the signal that
 * ends sampling asks for the report, one after it stops the report.
 * Polling is a load of one variable: cheap in any loop.
 */
#ifndef CORE_LIB_INTERRUPT_H
#define CORE_LIB_INTERRUPT_H

#include <stdbool.h>

/* A stop signal arrived (async-signal-safe). */
void interrupt__raise(void);
/* Signals so far are dealt with: from now on only new ones are pending. */
void interrupt__arm(void);
/* A signal arrived since the last interrupt__arm() (or the start). */
bool interrupt__pending(void);

#endif
