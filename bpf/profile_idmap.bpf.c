// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program with bcc's --cgroupmap (Linux 4.18:
 * bpf_get_current_cgroup_id). The loader uses it only with that option,
 * on the maps of profile.bpf.c, which stays loadable on Linux 4.9.
 *
 * bpf-compat: linux-4.18
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf/counting.bpf.h"
#include "bpf/idmap.bpf.h"

SEC("perf_event")
int profile_sample_cgroupmap(struct bpf_perf_event_data *ctx)
{
	if (!idmap_wanted(IDMAP_CGROUP))
		return 0;
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";
