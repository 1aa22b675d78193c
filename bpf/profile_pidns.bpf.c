// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program for a profiler that runs inside a pid namespace (a
 * container): tasks are named by their ids in that namespace, found with
 * bpf_get_ns_current_pid_tgid (Linux 5.7). The loader uses it only there,
 * with the maps of profile.bpf.c, which stays loadable on Linux 4.9.
 *
 * bpf-compat: linux-5.7
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_sample_pidns(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_ALWAYS);
}

char LICENSE[] SEC("license") = "GPL";
