/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Kernel feature probes: one table, each probe run at most once. A probe
 * tells "supported", "missing" (kernel too old or built without it) and
 * "not permitted" (EPERM/EACCES) apart, which libbpf's probes do not.
 */
#ifndef COMPAT_FEATURES_H
#define COMPAT_FEATURES_H

/*
 * The host's facts (host.h) were declared here before issue 34: app/run
 * still finds them through this header.
 */

enum kernel_feature {
	FEAT_PERF_EVENT_OPEN,		/* 2.6.31 */
	FEAT_BPF_SYSCALL,		/* 3.18 */
	FEAT_BPF_PERCPU_ARRAY,		/* 4.6 */
	FEAT_BPF_STACK_TRACE_MAP,	/* 4.6 */
	FEAT_BPF_PERF_EVENT_PROG,	/* 4.9 */
	FEAT_BPF_MMAPABLE_ARRAY,	/* 5.5: an ARRAY's values mapped into user space */
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

#endif
