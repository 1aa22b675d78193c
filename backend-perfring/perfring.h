/* SPDX-License-Identifier: GPL-2.0 */
/* The perf backend: cpu-clock events with mmap rings, counted in user space. */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

#include "backend-perfring/decode.h"
#include "core/backend.h"

extern const struct backend_ops perfring_backend_ops;

/*
 * The sample the core gets from one decoded ring sample: the callchain split
 * into kernel and user ips (into the caller's buffers of MAX_STACK_DEPTH),
 * the thread's comm from the tracker. Exported for the tests.
 */
int perfring__convert_sample(const struct decoded_sample *ds, struct proctrack *pt,
			     uint64_t *kernel, uint64_t *user, struct sample *s);

#endif
