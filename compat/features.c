// SPDX-License-Identifier: GPL-2.0
#include "compat/features.h"

#include <errno.h>
#include <linux/bpf.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/perf_event.h"

static long sys_bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

static enum feature_state from_errno(int err)
{
	if (err == EPERM || err == EACCES)
		return FEATURE_NOT_PERMITTED;
	return FEATURE_MISSING;
}

static enum feature_state probe_perf_event_open(int *err)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.disabled = 1,
		.exclude_kernel = 1,
	};
	int fd = perf_event_open_cloexec(&attr, 0, -1, -1, 0);

	if (fd >= 0) {
		close(fd);
		return FEATURE_SUPPORTED;
	}
	*err = -fd;
	return from_errno(-fd);
}

static enum feature_state probe_map(enum bpf_map_type type, unsigned int key, unsigned int value,
				    unsigned int flags, int *err)
{
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = type;
	attr.key_size = key;
	attr.value_size = value;
	attr.max_entries = 1;
	attr.map_flags = flags;
	fd = sys_bpf(BPF_MAP_CREATE, &attr);
	if (fd >= 0) {
		close((int)fd);
		return FEATURE_SUPPORTED;
	}
	*err = errno;
	return from_errno(errno);
}

static enum feature_state probe_bpf_syscall(int *err)
{
	union bpf_attr attr;

	/* An invalid map type: EINVAL means bpf() exists and listened. */
	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_UNSPEC;
	if (sys_bpf(BPF_MAP_CREATE, &attr) >= 0 || errno == EINVAL)
		return FEATURE_SUPPORTED;
	*err = errno;
	return from_errno(errno);
}

static enum feature_state probe_percpu_array(int *err)
{
	return probe_map(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, 0, err);
}

static enum feature_state probe_stack_trace_map(int *err)
{
	return probe_map(BPF_MAP_TYPE_STACK_TRACE, 4, 8, 0, err);
}

/* Before 5.5 the flag is refused (EINVAL). */
static enum feature_state probe_mmapable_array(int *err)
{
	return probe_map(BPF_MAP_TYPE_ARRAY, 4, 8, BPF_F_MMAPABLE, err);
}

static enum feature_state probe_perf_event_prog(int *err)
{
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	union bpf_attr attr;
	long fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (unsigned long)insns;
	attr.insn_cnt = 2;
	attr.license = (unsigned long)"GPL";
	fd = sys_bpf(BPF_PROG_LOAD, &attr);
	if (fd >= 0) {
		close((int)fd);
		return FEATURE_SUPPORTED;
	}
	*err = errno;
	return from_errno(errno);
}

struct feature_probe {
	const char *desc;
	enum feature_state (*probe)(int *err);
	enum feature_state state;	/* lazy cache */
	int err;
};

/* Designated fields: state and err start at zero (FEATURE_UNKNOWN). */
#define PROBE(d, fn) { .desc = (d), .probe = (fn) }
static struct feature_probe probes[__FEAT_CNT] = {
	[FEAT_PERF_EVENT_OPEN] = PROBE("perf_event_open (Linux 2.6.31)", probe_perf_event_open),
	[FEAT_BPF_SYSCALL] = PROBE("bpf() (Linux 3.18)", probe_bpf_syscall),
	[FEAT_BPF_PERCPU_ARRAY] = PROBE("BPF_MAP_TYPE_PERCPU_ARRAY (Linux 4.6)", probe_percpu_array),
	[FEAT_BPF_STACK_TRACE_MAP] = PROBE("BPF_MAP_TYPE_STACK_TRACE (Linux 4.6)",
					   probe_stack_trace_map),
	[FEAT_BPF_PERF_EVENT_PROG] = PROBE("BPF_PROG_TYPE_PERF_EVENT (Linux 4.9)",
					   probe_perf_event_prog),
	[FEAT_BPF_MMAPABLE_ARRAY] = PROBE("BPF_F_MMAPABLE arrays (Linux 5.5)",
					  probe_mmapable_array),
};
#undef PROBE

enum feature_state kernel_feature__state(enum kernel_feature feat)
{
	struct feature_probe *p;

	if (feat >= __FEAT_CNT)
		return FEATURE_UNKNOWN;
	p = &probes[feat];
	if (p->state == FEATURE_UNKNOWN) {
		p->err = 0;
		p->state = p->probe(&p->err);
	}
	return p->state;
}

const char *kernel_feature__desc(enum kernel_feature feat)
{
	return feat < __FEAT_CNT ? probes[feat].desc : "?";
}

int kernel_feature__errno(enum kernel_feature feat)
{
	return feat < __FEAT_CNT ? probes[feat].err : 0;
}

const char *feature_state__name(enum feature_state st)
{
	static const char *const names[] = { "unknown", "supported", "missing", "not permitted" };

	return st <= FEATURE_NOT_PERMITTED ? names[st] : "?";
}
