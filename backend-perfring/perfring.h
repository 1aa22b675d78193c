/* SPDX-License-Identifier: GPL-2.0 */
/* The perf backend: cpu-clock events with mmap rings, counted in user space. */
#ifndef PERFRING_PERFRING_H
#define PERFRING_PERFRING_H

#include "core/backend.h"

extern const struct backend_ops perfring_backend_ops;

#endif
