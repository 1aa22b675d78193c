// SPDX-License-Identifier: GPL-2.0
/*
 * Off-CPU time (bcc's offcputime) on the sched:sched_switch tracepoint: the
 * thread switching out (the current task) is stored with its stacks and the
 * time; when it is switched in again, the interval is added to its key in
 * microseconds. Written for Linux 4.9 without BTF: UAPI headers only, no
 * global variables, no loops, no subprograms, helpers from 4.9 (map
 * lookup/update/delete, probe_read, ktime_get_ns, get_current_pid_tgid,
 * get_current_comm, get_stackid, current_task_under_cgroup), atomics
 * without return values. The tracepoint's field offsets come from the
 * settings map (its tracefs format differs across kernels) and are read
 * with bpf_probe_read from ctx plus an offset, which 4.9 allows to
 * CAP_SYS_ADMIN (pointer arithmetic on ctx gives an unknown value, fine as
 * probe_read's source).
 *
 * bpf-compat: linux-4.9
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/errno.h>
#include <bpf/bpf_helpers.h>

#define OFFCPU_PYTHON
#include "bpf/offcpu.bpf.h"

SEC("tracepoint/sched/sched_switch")
int offcpu_switch(void *ctx)
{
	return offcpu_on_switch(ctx, 0);
}

/* --cgroup's thread table (OFFCPU_CFG_TRACK_CGROUPS): loaded only when it is kept. */
SEC("tracepoint/sched/sched_process_fork")
int offcpu_fork(void *ctx)
{
	return offcpu_on_fork(ctx);
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_probe_read, bpf_get_stackid are GPL-only */
