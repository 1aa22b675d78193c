/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Whether the bpf backend can run here, and why not: the kernel's features,
 * permissions, the options it cannot serve, then the honest test: loading
 * the real programs and opening one cpu-clock event.
 */
#ifndef BACKEND_BPF_PROBE_H
#define BACKEND_BPF_PROBE_H

#include "core/backend/backend.h"

void bpf_probe(const struct backend_config *cfg, struct backend_plan *plan);

#endif
