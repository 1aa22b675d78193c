// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU program with bcc's --cgroupmap (Linux 4.18:
 * bpf_get_current_cgroup_id). The loader uses it only with that option,
 * on the maps of offcpu.bpf.c, which stays loadable on Linux 4.9.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "bpf/offcpu.bpf.h"

SEC("tracepoint/sched/sched_switch")
int offcpu_switch_cgroupmap(void *ctx)
{
	return offcpu_on_switch(ctx, IDMAP_CGROUP);
}

char LICENSE[] SEC("license") = "GPL";
