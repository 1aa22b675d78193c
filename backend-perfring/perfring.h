/* SPDX-License-Identifier: GPL-2.0 */
/* The perf backend: cpu-clock events with mmap rings, counted in user space. */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

#include "backend-perfring/decode.h"
#include "core/run/backend.h"

extern const struct backend_ops perfring_backend_ops;

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
 * dwarf the user registers and a copy of the user stack (also off-CPU's).
 */
void perfring__stack_attr(struct perf_event_attr *attr, const struct backend_config *cfg);
/* The attribute the perf backend samples with (also to record a stream to replay). */
void perfring__sample_attr(struct perf_event_attr *attr, const struct backend_config *cfg,
			   bool launch);

/*
 * One ring sample down the perf backend's path into p: decode, filter,
 * convert, unwind (with p's unwinder) and count. The backend's samples and
 * a replayed recording (make bench) take this path. Returns 0, -EBADMSG for
 * a malformed record, or -errno.
 */
int perfring__feed_sample(struct pipeline *p, uint64_t sample_type, uint64_t regs_user,
			  const struct perf_event_header *hdr);

#endif
