/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layouts shared by the off-CPU program (bpf/offcpu.bpf.c) and its loader.
 * Fixed-size types only: both sides must agree byte for byte. The stack map
 * holds PROFILE_MAX_STACK_DEPTH ips per stack, as the counting program's.
 */
#ifndef BPF_OFFCPU_MAPS_H
#define BPF_OFFCPU_MAPS_H

#include <linux/types.h>

#include "bpf/profile_maps.h"

/* offcpu_config.flags; the first five have profile_config's values. */
#define OFFCPU_CFG_USER_STACK (1U << 0)
#define OFFCPU_CFG_KERNEL_STACK (1U << 1)
#define OFFCPU_CFG_FILTER_TGID (1U << 3)	/* -p: tgid must be in filter_ids */
#define OFFCPU_CFG_FILTER_TID (1U << 4)	/* -L: tid must be in filter_ids */
#define OFFCPU_CFG_FILTER_STATE (1U << 6)	/* --state: see offcpu_config.state */
#define OFFCPU_CFG_USER_THREADS (1U << 7)	/* --user-threads-only */
#define OFFCPU_CFG_KERNEL_THREADS (1U << 8)	/* --kernel-threads-only */
/* Keep cg_members, --cgroup's thread table for the on-CPU programs (cgroup_members.bpf.h). */
#define OFFCPU_CFG_TRACK_CGROUPS (1U << 9)
/* A profiler in a pid namespace: tasks are named by records (bpf/nsids.bpf.h). */
#define OFFCPU_CFG_NSIDS (1U << 10)
/* Walk the Python frames of py_procs' threads as they switch out (bpf/python_offcpu.bpf.h). */
#define OFFCPU_CFG_PYTHON (1U << 11)
/*
 * --unwind auto: the user stacks of processes in native_procs unwound by
 * the tables (bpf/offcpu_native.bpf.h), the others by frame pointers.
 */
#define OFFCPU_CFG_NATIVE (1U << 12)
/*
 * Before Linux 4.16 x86-64's system-call fast path saved no rbp in the
 * registers at the top of the kernel stack: there, a thread in a system
 * call is walked as if its rbp were unknown (frames whose CFA is rbp end
 * the walk; a frame that saved rbp gives it back).
 */
#define OFFCPU_CFG_SYSCALL_BP_STALE (1U << 13)

/*
 * The one element of the config ARRAY map (no global variables before 5.2).
 * The program reads sched_switch's fields at the offsets given here, which
 * the loader takes from the event's tracefs format: they differ across
 * kernels. While next_pid_off is 0 (not set yet) the program does nothing.
 */
struct offcpu_config {
	__u32 flags;
	/* Which of the two count maps the program writes: the other one is being drained. */
	__u32 active_counts;
	__u32 prev_pid_off;		/* "prev_pid", pid_t: checked against the current task */
	__u32 next_pid_off;		/* "next_pid", pid_t */
	__u32 prev_state_off;		/* "prev_state" */
	__u32 prev_state_size;		/* 4 or 8 (long on 64-bit kernels) */
	/*
	 * Kernel stack frames to drop from the top (bpf_get_stackid's skip,
	 * at most 255) so that stacks start in the scheduler: the frames of the
	 * tracing path differ across kernels and with the number of probes on
	 * the tracepoint. The loader calibrates it.
	 */
	__u32 kernel_skip;
	__u32 pad;
	/* Intervals outside [min_us, max_us] are not counted (bcc's -m, -M). */
	__u64 min_us;
	__u64 max_us;
	/*
	 * With OFFCPU_CFG_FILTER_STATE, bcc's --state: 0 counts threads that
	 * were switched out runnable (preempted, yielded), anything else those
	 * whose state has one of its bits (2: TASK_UNINTERRUPTIBLE). prev_state
	 * & state_mask is compared: state_mask has the task-state bits of the
	 * format's __print_flags table, so not the "preempted" marker above them
	 * (TASK_STATE_MAX before 4.14, TASK_REPORT_MAX since). 0xff serves
	 * 4.9 to 6.x for R, S and D.
	 */
	__u64 state;
	__u64 state_mask;
	/*
	 * A thread switched out with one of these bits in prev_state never
	 * comes back (it exited): it is not stored, so that exited threads do
	 * not fill the start map. "X" and "Z" since 4.14 (exit_state is
	 * reported: 0x30), "x" (TASK_DEAD, 64) before.
	 */
	__u64 exit_states;
	/* sched:sched_process_fork's "child_pid", with OFFCPU_CFG_TRACK_CGROUPS. */
	__u32 child_pid_off;
	/*
	 * Where struct task_struct holds se.sum_exec_runtime, the task's CPU
	 * time in ns (from the kernel's BTF); 0 where unknown. With it, an
	 * interval whose switch-in no sched_switch reported still ends: see
	 * offcpu_start.runtime.
	 */
	__u32 runtime_off;
	/* With OFFCPU_CFG_NATIVE: ustacks_off's slots, a power of two. */
	__u32 native_slots;
	__u32 pad2;
};

/* Key of the count maps: bcc offcputime's key_t. Values: __u64 microseconds off-CPU. */
struct offcpu_key {
	__u32 tgid;
	__u32 tid;
	__s32 user_stack_id;		/* >= 0, -EFAULT (none), PROFILE_STACK_NOT_TAKEN, error */
	__s32 kernel_stack_id;
	char comm[PROFILE_COMM_LEN];
	/* The Python frames' (bpf/python_maps.h: PY_STACK_*), 0 for other threads. */
	__u64 py_stack;
};

/*
 * Value of the start map, keyed by tid (__u32): a thread switched out and
 * not yet back. What is left in it at the end are threads still off-CPU:
 * ts is CLOCK_MONOTONIC, so the loader can count them up to its end time.
 */
struct offcpu_start {
	__u64 ts;			/* bpf_ktime_get_ns() at switch-out */
	__u64 state;			/* prev_state as read */
	__u32 tgid;
	__s32 user_stack_id;
	__s32 kernel_stack_id;
	__u32 pad;
	char comm[PROFILE_COMM_LEN];
	__u64 py_stack;			/* set by the Python walk that follows the switch-out */
	__u64 runtime;			/* its CPU time then (config.runtime_off), 0 if unknown */
};

/*
 * Value of the missed map, keyed by tid (__u32): how many of the thread's
 * intervals were dropped because the program saw no switch-in for them.
 * Per thread, so that only the profiled threads' losses are warned about:
 * with a launched command the program stores every thread and the loader
 * keeps the command's, and this kernel reports no switch-in for some
 * switches of other threads.
 */
struct offcpu_missed {
	__u32 tgid;
	__u32 pad;
	__u64 count;
};

/* Slots of the per-CPU stats array. */
enum offcpu_stat {
	OFFCPU_STAT_SWITCHES,		/* program runs */
	OFFCPU_STAT_NEW_KEYS,		/* count keys inserted (for the drain decision) */
	OFFCPU_STAT_START_FULL,		/* switch-outs dropped: start map full */
	OFFCPU_STAT_COUNT_FULL,		/* intervals dropped: count map full */
	OFFCPU_STAT_BAD_DELTA,		/* intervals dropped: switch-in not after switch-out */
	OFFCPU_STAT_STACK_COLLISION,	/* a stack not stored: both maps' buckets held others */
	OFFCPU_STAT_STACK_FULL,		/* a stack not stored: stack map full (-ENOMEM) */
	OFFCPU_STAT_BAD_CTX,		/* runs ignored: fields unreadable, prev_pid not current */
	OFFCPU_STAT_MISSED_SWITCH_IN,	/* intervals dropped: the program did not see their end */
	OFFCPU_STAT_MISSED_UNKEYED,	/* of those, not in the missed map (full): whose unknown */
	OFFCPU_STAT_MEMBERS_FULL,	/* threads under --cgroup not tracked: cg_members full */
	OFFCPU_STAT_NSIDS_FULL,		/* pid namespace records: a thread not kept in nsids */
	OFFCPU_STAT_PY_FULL,		/* Python stacks not stored: their map was full */
	OFFCPU_STAT_PY_NO_PROG,		/* Python walks not run: no program for the layout */
	/* Intervals whose switch-in no sched_switch reported, ended from the thread's CPU time. */
	OFFCPU_STAT_UNREPORTED_IN,
	/* Threads noted in py_unknown (bpf/python_common.bpf.h): user space reads them at once. */
	OFFCPU_STAT_PY_UNKNOWN,
	/* Python stacks noted in py_fresh (bpf/python_offcpu.bpf.h): named while they live. */
	OFFCPU_STAT_PY_FRESH,
	/* Stacks whose bucket in stacks held another: tried in the overflow map. */
	OFFCPU_STAT_STACK_OVERFLOWED,
	/*
	 * With OFFCPU_CFG_NATIVE: user stacks unwound by the tables; processes
	 * noted in native_unknown; user stacks walked by frame pointers instead,
	 * for a process not loaded yet, one left to stack copies (Node's),
	 * no user registers found, no room in ustacks_off, no step program.
	 */
	OFFCPU_STAT_NATIVE_WALKED,
	OFFCPU_STAT_NATIVE_NOTED,
	OFFCPU_STAT_NATIVE_UNKNOWN,
	OFFCPU_STAT_NATIVE_COPIES_ONLY,
	OFFCPU_STAT_NATIVE_NO_REGS,
	OFFCPU_STAT_NATIVE_FULL,
	OFFCPU_STAT_NATIVE_NO_PROG,
	/* Of the walks, those that ended without CFI, at a failed read, in unknown code, cut. */
	OFFCPU_STAT_NATIVE_NO_CFI,
	OFFCPU_STAT_NATIVE_READ,
	OFFCPU_STAT_NATIVE_UNMAPPED,
	OFFCPU_STAT_NATIVE_TRUNCATED,
	/*
	 * Walks whose leaf no row covers (glibc's vfork keeps its return
	 * address in rdi, which the rows cannot say): the kernel's
	 * frame-pointer walk instead, which gets past it where its caller
	 * keeps them.
	 */
	OFFCPU_STAT_NATIVE_LEAF_FP,
	OFFCPU_STAT_CNT,
};

#endif
