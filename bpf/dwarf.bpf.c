// SPDX-License-Identifier: GPL-2.0
/*
 * The stack-copy program of --unwind dwarf for every kernel from 4.9 (see
 * bpf/dwarf.bpf.h): kernel-mode samples get frame-pointer user stacks.
 *
 * bpf-compat: linux-4.9
 */
#include "bpf/dwarf.bpf.h"

SEC("perf_event")
int dwarf_sample(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 0);
}

char LICENSE[] SEC("license") = "GPL";
