/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A ring sample as the core's sample, shared by the perf backend's on-CPU
 * (perfring.c) and off-CPU (offcpu.c) paths, and the attribute that asks
 * for it.
 */
#ifndef PERFRING_RINGSAMPLE_H
#define PERFRING_RINGSAMPLE_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "backend-perfring/decode.h"
#include "core/backend/backend.h"
#include "core/proc/proctrack.h"

/*
 * The sample the core gets from one decoded ring sample: the callchain split
 * into kernel and user ips (into the caller's buffers of MAX_STACK_DEPTH),
 * the thread's comm from the tracker. Exported for the tests.
 */
int perfring__convert_sample(const struct decoded_sample *ds, struct proctrack *pt,
			     uint64_t *kernel, uint64_t *user, struct sample *s);

/* Dwarf mode: the registers and stack copy of a sample; false for a kernel thread. */
bool perfring__user_snapshot(const struct decoded_sample *ds, uint64_t mask,
			     struct user_snapshot *snap);

/*
 * The sample fields and stack bits of -U/-K/--unwind: callchains, or with
 * copies (cfg's dwarf on-CPU, off_cpu_dwarf off-CPU) the user registers
 * and a copy of the user stack.
 */
void perfring__stack_attr(struct perf_event_attr *attr, const struct backend_config *cfg,
			  bool copies);

/* The attribute the perf backend samples with (also to record a stream to replay). */
void perfring__sample_attr(struct perf_event_attr *attr, const struct backend_config *cfg,
			   bool launch);

#endif
