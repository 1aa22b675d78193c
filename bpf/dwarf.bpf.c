// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind dwarf: instead of counting, each sample goes to user space with
 * the user registers and a copy of the user stack, to be unwound there with
 * .eh_frame. Kernel stacks are still taken here, by id, like the counting
 * program's.
 *
 * A sample taken in user mode has the user registers in its context. One
 * taken in kernel mode (a system call, a page fault) has the kernel's; the
 * user registers are then at the top of the task's kernel stack, which only
 * bpf_task_pt_regs() (Linux 5.15, with kernel BTF) can find.
 * dwarf_sample_task_regs uses it; dwarf_sample, for older kernels, falls back
 * to the frame-pointer user stack for those samples and counts them. The
 * loader uses the first of the two the kernel accepts.
 *
 * Needs more than the counting program (bounded variable offsets into map
 * values, Linux 4.14 or so): the loader's probe decides, and auto picks the
 * perf backend where this does not load.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#include "bpf/stackid.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} snapshots SEC(".maps");

/* One record per CPU, too big for the BPF stack and for a per-CPU map (32 KiB). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);	/* possible CPUs, set by the loader */
	__type(key, __u32);
	__type(value, struct dwarf_record);
} scratch SEC(".maps");

static __always_inline int user_mode(__u64 cs)
{
	return (cs & 3) == 3;
}

/* Copy the user stack from sp up, PROFILE_DUMP_CHUNK at a time, up to where reading fails. */
static __always_inline void copy_stack(struct dwarf_record *rec, __u32 nr_chunks)
{
	__u64 sp = rec->sp;
	__u32 off = 0;

#pragma unroll
	for (int i = 0; i < PROFILE_DUMP_MAX_CHUNKS; i++) {
		if (i >= nr_chunks) {
			rec->dump_size = off;
			return;
		}
		if (bpf_probe_read(&rec->stack[i * PROFILE_DUMP_CHUNK], PROFILE_DUMP_CHUNK,
				   (void *)(sp + i * PROFILE_DUMP_CHUNK)))
			break;
		off += PROFILE_DUMP_CHUNK;
	}
	/* The last chunk crossed the end of the stack: take what it had, halving. */
#pragma unroll
	for (int size = PROFILE_DUMP_CHUNK / 2; size >= 8; size /= 2) {
		off &= 0xffff;
		if (!bpf_probe_read(&rec->stack[off], size, (void *)(sp + off)))
			off += size;
	}
	rec->dump_size = off & 0xffff;
}

static __always_inline int snapshot(struct bpf_perf_event_data *ctx, int use_task_regs)
{
	__u32 tgid, tid, cpu;
	struct profile_config *cfg;
	struct dwarf_record *rec;
	__u64 size;

	stat_inc(PROFILE_STAT_SAMPLES);
	/* Kernels with bpf_task_pt_regs (5.15) also have bpf_get_ns_current_pid_tgid (5.7). */
	cfg = wanted(use_task_regs ? PIDNS_BY_CONFIG : PIDNS_NEVER, &tgid, &tid);
	if (!cfg)
		return 0;
	cpu = bpf_get_smp_processor_id();
	rec = bpf_map_lookup_elem(&scratch, &cpu);
	if (!rec)
		return 0;
	rec->tgid = tgid;
	rec->tid = (cfg->flags & PROFILE_CFG_FILTER_TID) ? tid : 0;
	bpf_get_current_comm(&rec->comm, sizeof(rec->comm));
	rec->kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	rec->kernel_ip = 0;
	rec->user_stack_id = PROFILE_STACK_NOT_TAKEN;
	rec->regs_valid = 0;
	rec->dump_size = 0;
	if (cfg->flags & PROFILE_CFG_KERNEL_STACK) {
		rec->kernel_stack_id = take_stack(ctx, &stacks, &overflow0, 0,
						  PROFILE_STAT_KERNEL_STACK_LOST);
		if (rec->kernel_stack_id >= 0)
			rec->kernel_ip = ctx->regs.rip;
	}
	if (cfg->flags & PROFILE_CFG_USER_STACK) {
		if (user_mode(ctx->regs.cs)) {
			rec->ip = ctx->regs.rip;
			rec->sp = ctx->regs.rsp;
			rec->bp = ctx->regs.rbp;
			rec->regs_valid = 1;
		} else if (use_task_regs) {
			struct pt_regs regs;

			if (!bpf_probe_read_kernel(&regs, sizeof(regs),
						   (void *)bpf_task_pt_regs(bpf_get_current_task_btf())) &&
			    user_mode(regs.cs)) {
				rec->ip = regs.rip;
				rec->sp = regs.rsp;
				rec->bp = regs.rbp;
				rec->regs_valid = 1;
			}
		}
		if (rec->regs_valid) {
			copy_stack(rec, cfg->dump_chunks);
		} else if (!use_task_regs) {
			/*
			 * No user registers here: the frame-pointer walk, counted
			 * unless there is no user stack at all (a kernel thread).
			 */
			rec->user_stack_id = take_stack(ctx, &stacks, &overflow0,
							BPF_F_USER_STACK,
							PROFILE_STAT_USER_STACK_LOST);
			if (rec->user_stack_id != -14 /* -EFAULT */)
				stat_inc(PROFILE_STAT_NO_USER_REGS);
		}
	}
	size = __builtin_offsetof(struct dwarf_record, stack) + rec->dump_size;
	if (size > sizeof(*rec))
		size = sizeof(*rec);
	bpf_perf_event_output(ctx, &snapshots, BPF_F_CURRENT_CPU, rec, size);
	return 0;
}

SEC("perf_event")
int dwarf_sample_task_regs(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 1);
}

SEC("perf_event")
int dwarf_sample(struct bpf_perf_event_data *ctx)
{
	return snapshot(ctx, 0);
}

char LICENSE[] SEC("license") = "GPL";
