// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program for a profiler inside a pid namespace on kernels
 * before 5.7: it counts by the initial namespace's ids and sends records
 * that the kernel completes with the ids in the profiler's namespace
 * (bpf/nsids.bpf.h). The loader uses it only there, with the maps of
 * profile.bpf.c.
 *
 * bpf-compat: linux-4.9
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define COUNTING_NSIDS
#include "bpf/common.bpf.h"
#include "bpf/nsids.bpf.h"
#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_sample_nsids(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_NEVER);
}

char LICENSE[] SEC("license") = "GPL";
