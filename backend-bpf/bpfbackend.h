/* SPDX-License-Identifier: GPL-2.0 */
/* The bpf backend: stacks counted in the kernel by a perf_event BPF program. */
#ifndef BPFBACKEND_BPFBACKEND_H
#define BPFBACKEND_BPFBACKEND_H

#include "core/backend/backend.h"

extern const struct backend_ops bpf_backend_ops;
/* Tests (profile-seams): each drain first sleeps this many ms, a main thread busy elsewhere. */
extern unsigned int bpf_backend__test_slow_drain_ms;

#endif
