// SPDX-License-Identifier: GPL-2.0
/*
 * The stack-copy program of --unwind dwarf with the user registers of
 * kernel-mode samples (bpf_task_pt_regs, kernel BTF) and ids in the
 * profiler's pid namespace (bpf_get_ns_current_pid_tgid): see bpf/dwarf.bpf.h.
 * A sample's head and copy go in one record (bpf/dwarf_one.bpf.h).
 *
 * bpf-compat: linux-5.15
 */
#define DWARF_ONE_PIECE
#include "bpf/dwarf.bpf.h"

SEC("perf_event")
int dwarf_sample_task_regs(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 1, 0);
}

/* A sample of a process the native unwinder's tables do not have yet (NATIVE_PROG_COPY). */
SEC("perf_event")
int dwarf_sample_task_regs_handed(struct bpf_perf_event_data *ctx)
{
	snapshot(ctx, 1, 1);
	return dwarf_handed_end();
}

char LICENSE[] SEC("license") = "GPL";
