/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What backends feed: filters every sample the same way whichever backend
 * produced it, and counts it with the process image it belongs to.
 */
#ifndef CORE_CORE_H
#define CORE_CORE_H

#include <stdbool.h>

#include "core/agg.h"
#include "core/options.h"
#include "core/proctrack.h"
#include "core/sample.h"

struct profile_core {
	const struct profile_opts *opts;
	struct proctrack *procs;
	struct agg agg;
	uint64_t filtered;	/* samples dropped by the filters */
};

int core__init(struct profile_core *core, const struct profile_opts *opts);
void core__fini(struct profile_core *core);

/* Whether samples of this process are wanted (for side-band bookkeeping). */
bool core__wants_pid(const struct profile_core *core, pid_t pid);

/*
 * Read the mappings of every wanted process that exists now, as perf record
 * does: a process that exits before its first sample is handled still
 * symbolizes.
 */
int core__snapshot_processes(struct profile_core *core);

/* Whether the filters (-p, -L, idle) keep a sample of this thread. */
bool core__sample_wanted(const struct profile_core *core, pid_t pid, pid_t tid);

/* Filter, trim (-U/-K) and count one sample. Returns 0 or -ENOMEM. */
int core__add_sample(struct profile_core *core, struct sample *s);
/* The same for a sample the caller already checked with core__sample_wanted(). */
int core__count_sample(struct profile_core *core, struct sample *s);

#endif
