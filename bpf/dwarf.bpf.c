// SPDX-License-Identifier: GPL-2.0
/*
 * The stack-copy program of --unwind dwarf for Linux 4.9 (see
 * bpf/dwarf.bpf.h): pieces sent from the BPF stack; kernel-mode samples get
 * frame-pointer user stacks. Newer kernels load bpf/dwarf_map.bpf.c.
 *
 * bpf-compat: linux-4.9
 */
#define DWARF_PIECES_ON_STACK
#include "bpf/dwarf.bpf.h"

SEC("perf_event")
int dwarf_sample(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 0, 0);
}

/* A sample of a process the native unwinder's tables do not have yet (NATIVE_PROG_COPY). */
SEC("perf_event")
int dwarf_sample_handed(struct bpf_perf_event_data *ctx)
{
	snapshot(ctx, 0, 1);
	return dwarf_handed_end();
}

char LICENSE[] SEC("license") = "GPL";
