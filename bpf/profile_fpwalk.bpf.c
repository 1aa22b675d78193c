// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program with user stacks walked by the program itself
 * (bpf/fpwalk.bpf.h): bpf_probe_read_user is Linux 5.5. Loaded on the
 * counting program's maps (profile.bpf.c) where the kernel takes it, and
 * neither a pid namespace nor bcc's id maps ask for another variant.
 *
 * bpf-compat: linux-5.5
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define COUNTING_FP_WALK
#define COUNTING_PYTHON
#include "bpf/fpwalk.bpf.h"
#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_fpwalk(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_get_stackid is GPL-only */
