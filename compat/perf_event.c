// SPDX-License-Identifier: GPL-2.0
#include "compat/perf_event.h"

#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			unsigned long flags)
{
	long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

static const char *const feature_names[__PERF_ATTR_FEATURE_CNT] = {
	[PERF_ATTR_SAMPLE_MAX_STACK] = "sample_max_stack (4.8)",
	[PERF_ATTR_MMAP2] = "mmap2 and comm_exec (3.16)",
	[PERF_ATTR_EXCLUDE_CALLCHAIN] = "exclude_callchain_user/kernel (3.7)",
	[PERF_ATTR_SAMPLE_ID_ALL] = "sample_id_all (2.6.38)",
};

const char *perf_attr_feature__name(enum perf_attr_feature feat)
{
	return feat < __PERF_ATTR_FEATURE_CNT ? feature_names[feat] : "?";
}

static void drop_feature(struct perf_event_attr *attr, enum perf_attr_feature feat)
{
	switch (feat) {
	case PERF_ATTR_SAMPLE_MAX_STACK:
		attr->sample_max_stack = 0;
		/* Kernels before 4.8 refuse a larger attr with non-zero tail (E2BIG). */
		if (attr->size > PERF_ATTR_SIZE_VER5)
			attr->size = PERF_ATTR_SIZE_VER5;
		break;
	case PERF_ATTR_MMAP2:
		/* comm_exec came with mmap2; without it, pid == tid COMM means exec. */
		attr->mmap2 = 0;
		attr->comm_exec = 0;
		break;
	case PERF_ATTR_EXCLUDE_CALLCHAIN:
		/* The core drops the unwanted half of the callchain itself. */
		attr->exclude_callchain_user = 0;
		attr->exclude_callchain_kernel = 0;
		break;
	case PERF_ATTR_SAMPLE_ID_ALL:
		attr->sample_id_all = 0;
		break;
	default:
		break;
	}
}

int perf_attr__open(struct perf_attr_ladder *ladder, struct perf_event_attr *attr, pid_t pid,
		    int cpu)
{
	int feat, fd;

	for (feat = 0; feat < __PERF_ATTR_FEATURE_CNT; feat++)
		if (ladder->dropped[feat])
			drop_feature(attr, feat);

	for (feat = 0;; feat++) {
		fd = sys_perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0 || (fd != -EINVAL && fd != -E2BIG))
			return fd;
		while (feat < __PERF_ATTR_FEATURE_CNT && ladder->dropped[feat])
			feat++;
		if (feat >= __PERF_ATTR_FEATURE_CNT)
			return fd;
		ladder->dropped[feat] = true;
		drop_feature(attr, feat);
	}
}
