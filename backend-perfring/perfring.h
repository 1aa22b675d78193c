/* SPDX-License-Identifier: GPL-2.0 */
/* The perf backend: cpu-clock events with mmap rings, counted in user space. */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

extern const struct backend_ops perfring_backend_ops;

/*
 * One ring sample down the perf backend's path into p: decode, filter,
 * convert, unwind (with p's unwinder) and count. The backend's samples and
 * a replayed recording (make bench) take this path. Returns 0, -EBADMSG for
 * a malformed record, or -errno.
 */
int perfring__feed_sample(struct pipeline *p, uint64_t sample_type, uint64_t regs_user,
			  const struct perf_event_header *hdr);

#endif
