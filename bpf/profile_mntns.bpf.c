// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program with bcc's --mntnsmap (and --cgroupmap with it):
 * the mount namespace id is read with CO-RE, so this object needs kernel
 * BTF (and bpf_probe_read_kernel, Linux 5.5). The loader uses it only with
 * that option, on the maps of profile.bpf.c.
 *
 * bpf-compat: linux-5.5
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define IDMAP_CORE
#include "bpf/counting.bpf.h"
#include "bpf/idmap.bpf.h"

SEC("perf_event")
int profile_sample_mntns(struct bpf_perf_event_data *ctx)
{
	if (!idmap_wanted(IDMAP_MNTNS))
		return 0;
	return count_sample(ctx, PIDNS_NEVER);
}

SEC("perf_event")
int profile_sample_mntns_cgroupmap(struct bpf_perf_event_data *ctx)
{
	if (!idmap_wanted(IDMAP_MNTNS | IDMAP_CGROUP))
		return 0;
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";
