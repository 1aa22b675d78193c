// SPDX-License-Identifier: GPL-2.0
/*
 * The off-CPU program with bcc's --mntnsmap (and --cgroupmap with it): the
 * mount namespace id is read with CO-RE, so this object needs kernel BTF
 * (and bpf_probe_read_kernel, Linux 5.5). The loader uses it only with
 * that option, on the maps of offcpu.bpf.c.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#define IDMAP_CORE
#include "bpf/offcpu.bpf.h"

SEC("tracepoint/sched/sched_switch")
int offcpu_switch_mntns(void *ctx)
{
	return offcpu_on_switch(ctx, IDMAP_MNTNS);
}

SEC("tracepoint/sched/sched_switch")
int offcpu_switch_mntns_cgroupmap(void *ctx)
{
	return offcpu_on_switch(ctx, IDMAP_MNTNS | IDMAP_CGROUP);
}

char LICENSE[] SEC("license") = "GPL";
