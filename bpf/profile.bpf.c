// SPDX-License-Identifier: GPL-2.0
/*
 * Counts stacks in the kernel: one run per cpu-clock sample. Written for
 * Linux 4.9: UAPI headers only, no global variables, no loops, helpers from
 * 4.9 (map lookup/update, get_current_pid_tgid, get_current_comm,
 * get_stackid), and atomics without return values. `make check` verifies
 * this on the compiled object (scripts/check-bpf-compat.sh).
 *
 * bpf-compat: linux-4.9
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define COUNTING_PYTHON
#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_sample(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_get_stackid is GPL-only */
