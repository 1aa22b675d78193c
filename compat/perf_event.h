/* SPDX-License-Identifier: GPL-2.0 */
/*
 * perf_event_open(2) wrapper, fallbacks for constants that old UAPI headers
 * lack, and the attribute fallback ladder for old kernels.
 */
#ifndef COMPAT_PERF_EVENT_H
#define COMPAT_PERF_EVENT_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef PERF_RECORD_MISC_COMM_EXEC	/* 3.16 */
#define PERF_RECORD_MISC_COMM_EXEC (1 << 13)
#endif
#ifndef PERF_RECORD_MMAP2		/* 3.16 */
#define PERF_RECORD_MMAP2 10
#endif
#ifndef PERF_RECORD_SWITCH		/* 4.3: attr.context_switch */
#define PERF_RECORD_SWITCH 14
#endif
#ifndef PERF_RECORD_SWITCH_CPU_WIDE	/* 4.3: attr.context_switch on a CPU-wide event */
#define PERF_RECORD_SWITCH_CPU_WIDE 15
#endif
#ifndef PERF_RECORD_MISC_SWITCH_OUT	/* 4.3 */
#define PERF_RECORD_MISC_SWITCH_OUT (1 << 13)
#endif
#ifndef PERF_RECORD_MISC_MMAP_BUILD_ID	/* 5.12: attr.build_id, MMAP2 with a build-id */
#define PERF_RECORD_MISC_MMAP_BUILD_ID (1 << 14)
#endif
#ifndef PERF_ATTR_SIZE_VER5		/* 4.8: sample_max_stack */
#define PERF_ATTR_SIZE_VER5 112
#endif

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			unsigned long flags);
/*
 * The same, close-on-exec: with PERF_FLAG_FD_CLOEXEC where the kernel has it
 * (3.14), else (EINVAL) without it and FD_CLOEXEC set by fcntl. What was
 * learnt is kept for later calls. Returns an fd or -errno.
 */
int perf_event_open_cloexec(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags);
/* Whether PERF_FLAG_FD_CLOEXEC was refused (a kernel before 3.14). */
bool perf_event_cloexec_flag_missing(void);

/* Attributes the ladder may drop, newest first. */
enum perf_attr_feature {
	PERF_ATTR_BUILD_ID,		/* 5.12 */
	PERF_ATTR_SAMPLE_MAX_STACK,	/* 4.8 */
	PERF_ATTR_CONTEXT_SWITCH,	/* 4.3 */
	PERF_ATTR_USE_CLOCKID,		/* 4.1 */
	PERF_ATTR_MMAP2,		/* 3.16 */
	PERF_ATTR_FD_CLOEXEC,		/* 3.14: the flag PERF_FLAG_FD_CLOEXEC, not an attr */
	PERF_ATTR_EXCLUDE_CALLCHAIN,	/* 3.7 */
	PERF_ATTR_SAMPLE_ID_ALL,	/* 2.6.38 */
	__PERF_ATTR_FEATURE_CNT,
};

/* Which attributes had to be dropped, shared by every event of one backend. */
struct perf_attr_ladder {
	bool dropped[__PERF_ATTR_FEATURE_CNT];
};

const char *perf_attr_feature__name(enum perf_attr_feature feat);

/*
 * Open an event; on EINVAL or E2BIG retry without the newest attribute the
 * kernel may not know, one at a time. Attributes dropped once stay dropped
 * for later calls with the same ladder. Returns an fd or -errno.
 */
int perf_attr__open(struct perf_attr_ladder *ladder, struct perf_event_attr *attr, pid_t pid,
		    int cpu);

/*
 * The same for an event that counts only while a task of the cgroup open at
 * cgroup_fd (or below it) runs on cpu (PERF_FLAG_PID_CGROUP: v1 perf_event
 * hierarchies since 2.6.39, cgroup v2 since 4.11).
 */
int perf_attr__open_cgroup(struct perf_attr_ladder *ladder, struct perf_event_attr *attr,
			   int cgroup_fd, int cpu);

/* A one-line reason for a perf_event_open failure: the cause and what would allow it. */
void perf_open_error(int err, bool system_wide, char *why, size_t len);

#endif
