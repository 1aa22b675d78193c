/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The profile as pprof: a gzip-compressed profile.proto, encoded with
 * protobuf-c. Sample types samples/count and cpu/nanoseconds; one Location
 * per address, Mappings from the process maps (kernel frames under a
 * [kernel.kallsyms] mapping), Functions by name; comm and pid as labels.
 */
#ifndef CORE_PPROF_H
#define CORE_PPROF_H

#include <stdint.h>
#include <stdio.h>

#include "core/agg.h"
#include "core/symbolize.h"

struct pprof_meta {
	uint64_t period_ns;	/* nanoseconds of CPU per sample */
	uint64_t start_ns;	/* wall clock at the start (time_nanos) */
	uint64_t duration_ns;
	const char *comment;	/* e.g. the command line; may be NULL */
	bool user_only;		/* -U: hide kernel frames */
	bool kernel_only;	/* -K: hide user frames */
};

/* Write agg as gzip'ed pprof to out. Returns 0 or -errno. */
int pprof__write(FILE *out, const struct agg *agg, struct symbolizer *sym,
		 const struct pprof_meta *meta);

#endif
