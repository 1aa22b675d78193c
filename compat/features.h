/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel feature probes: one table, each probe run at most once. A probe
 * tells "supported", "missing" (kernel too old or built without it) and
 * "not permitted" (EPERM/EACCES) apart, which libbpf's probes do not.
 */
#ifndef COMPAT_FEATURES_H
#define COMPAT_FEATURES_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

enum kernel_feature {
	FEAT_PERF_EVENT_OPEN,		/* 2.6.31 */
	FEAT_BPF_SYSCALL,		/* 3.18 */
	FEAT_BPF_PERCPU_ARRAY,		/* 4.6 */
	FEAT_BPF_STACK_TRACE_MAP,	/* 4.6 */
	FEAT_BPF_PERF_EVENT_PROG,	/* 4.9 */
	__FEAT_CNT,
};

enum feature_state {
	FEATURE_UNKNOWN,
	FEATURE_SUPPORTED,
	FEATURE_MISSING,
	FEATURE_NOT_PERMITTED,
};

enum feature_state kernel_feature__state(enum kernel_feature feat);
/* "BPF_PROG_TYPE_PERF_EVENT (Linux 4.9)" */
const char *kernel_feature__desc(enum kernel_feature feat);
/* The errno the probe saw, when not supported. */
int kernel_feature__errno(enum kernel_feature feat);
const char *feature_state__name(enum feature_state st);

/* kernel.perf_event_paranoid (2, the kernel's default, if it cannot be read). */
int perf_event_paranoid(void);

/* kernel.perf_event_max_sample_rate: the highest -F, and 1e9 / it the shortest -c (ns). */
unsigned int perf_event_max_sample_rate(void);

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
uint64_t mem_available_bytes(void);

/* "6.18.44-..." from uname. */
const char *kernel_release(void);

/*
 * Whether user stacks taken inside a system call may end at the libc
 * wrapper on this kernel (uname's release and machine): before Linux 4.16,
 * x86-64's system-call fast path left rbp out of the registers it saved, so
 * the kernel's walk of the user stack starts from an older value, for perf
 * record's profiles too (tests/kernels/README.md, the 4.4 cell).
 */
bool kernel_cuts_syscall_user_stacks(const char *release, const char *machine);

#endif
