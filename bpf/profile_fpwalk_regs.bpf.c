// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program that walks user stacks itself (bpf/fpwalk.bpf.h),
 * kernel-mode samples' too, from the task's user registers
 * (bpf_task_pt_regs: Linux 5.15 with kernel BTF); kernel threads get no
 * user walk. profile_fpwalk.bpf.c where this one is refused.
 *
 * bpf-compat: linux-5.15
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define COUNTING_FP_WALK
#define COUNTING_PYTHON
#define FPWALK_TASK_REGS
#include "bpf/fpwalk.bpf.h"
#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_fpwalk(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_get_stackid is GPL-only */
