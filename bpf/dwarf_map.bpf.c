// SPDX-License-Identifier: GPL-2.0
/*
 * The stack-copy program of --unwind dwarf from Linux 4.10 (see
 * bpf/dwarf.bpf.h): pieces read into and sent from a per-CPU map value
 * (helper buffers in map values are 4.10); kernel-mode samples get
 * frame-pointer user stacks.
 *
 * bpf-compat: linux-4.10
 */
#include "bpf/dwarf.bpf.h"

SEC("perf_event")
int dwarf_sample_map(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 0, 0);
}

/* A sample of a process the native unwinder's tables do not have yet (NATIVE_PROG_COPY). */
SEC("perf_event")
int dwarf_sample_map_handed(struct bpf_perf_event_data *ctx)
{
	snapshot(ctx, 0, 1);
	return dwarf_handed_end();
}

char LICENSE[] SEC("license") = "GPL";
