// SPDX-License-Identifier: GPL-2.0
#include "compat/perf_event.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "compat/host.h"

int sys_perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			unsigned long flags)
{
	long fd = syscall(__NR_perf_event_open, attr, pid, cpu, group_fd, flags);

	return fd < 0 ? -errno : (int)fd;
}

/* PERF_FLAG_FD_CLOEXEC is 3.14+; before, any unknown flag is EINVAL. A fact of the kernel. */
static atomic_bool cloexec_flag_missing;

bool perf_event_cloexec_flag_missing(void)
{
	return atomic_load(&cloexec_flag_missing);
}

/*
 * Without the flag, fcntl sets FD_CLOEXEC: a fork+exec of another thread in
 * between would inherit the fd, which this single-threaded opener never does.
 */
static int open_set_cloexec(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags)
{
	int fd = sys_perf_event_open(attr, pid, cpu, group_fd, flags & ~PERF_FLAG_FD_CLOEXEC);

	if (fd >= 0 && fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

int perf_event_open_cloexec(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd,
			    unsigned long flags)
{
	int fd;

	if (perf_event_cloexec_flag_missing())
		return open_set_cloexec(attr, pid, cpu, group_fd, flags);
	fd = sys_perf_event_open(attr, pid, cpu, group_fd, flags | PERF_FLAG_FD_CLOEXEC);
	if (fd != -EINVAL)
		return fd;
	/* EINVAL may be the attr's as well: the flag is missing only if the retry works. */
	fd = open_set_cloexec(attr, pid, cpu, group_fd, flags);
	if (fd >= 0)
		atomic_store(&cloexec_flag_missing, true);
	return fd;
}

static const char *const feature_names[__PERF_ATTR_FEATURE_CNT] = {
	[PERF_ATTR_BUILD_ID] = "build_id (5.12)",
	[PERF_ATTR_SAMPLE_MAX_STACK] = "sample_max_stack (4.8)",
	[PERF_ATTR_CONTEXT_SWITCH] = "context_switch (4.3)",
	[PERF_ATTR_USE_CLOCKID] = "use_clockid (4.1)",
	[PERF_ATTR_MMAP2] = "mmap2 and comm_exec (3.16)",
	[PERF_ATTR_FD_CLOEXEC] = "PERF_FLAG_FD_CLOEXEC (3.14; FD_CLOEXEC set with fcntl)",
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
	case PERF_ATTR_BUILD_ID:
		/* MMAP2 records then name device and inode; the tracker reads build-ids itself. */
		attr->build_id = 0;
		break;
	case PERF_ATTR_SAMPLE_MAX_STACK:
		attr->sample_max_stack = 0;
		/* Kernels before 4.8 refuse a larger attr with non-zero tail (E2BIG). */
		if (attr->size > PERF_ATTR_SIZE_VER5)
			attr->size = PERF_ATTR_SIZE_VER5;
		break;
	case PERF_ATTR_CONTEXT_SWITCH:
		/* Off-CPU time then takes switch-ins from sched_switch's next_pid. */
		attr->context_switch = 0;
		break;
	case PERF_ATTR_USE_CLOCKID:
		/* Times are then perf's clock: intervals still are right, the end is the last record. */
		attr->use_clockid = 0;
		attr->clockid = 0;
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
	case PERF_ATTR_FD_CLOEXEC:	/* a flag: open_flags leaves it out */
	default:
		break;
	}
}

static int open_flags(struct perf_attr_ladder *ladder, struct perf_event_attr *attr, pid_t pid,
		      int cpu, unsigned long flags)
{
	int feat, fd;

	/* Learnt by another opener (the feature probe): no need to find it again. */
	if (perf_event_cloexec_flag_missing())
		ladder->dropped[PERF_ATTR_FD_CLOEXEC] = true;
	for (feat = 0; feat < __PERF_ATTR_FEATURE_CNT; feat++)
		if (ladder->dropped[feat])
			drop_feature(attr, feat);

	for (feat = 0;; feat++) {
		if (ladder->dropped[PERF_ATTR_FD_CLOEXEC])
			fd = open_set_cloexec(attr, pid, cpu, -1, flags);
		else
			fd = sys_perf_event_open(attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC | flags);
		if (fd >= 0 && ladder->dropped[PERF_ATTR_FD_CLOEXEC])
			atomic_store(&cloexec_flag_missing, true);
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

int perf_attr__open(struct perf_attr_ladder *ladder, struct perf_event_attr *attr, pid_t pid,
		    int cpu)
{
	return open_flags(ladder, attr, pid, cpu, 0);
}

int perf_attr__open_cgroup(struct perf_attr_ladder *ladder, struct perf_event_attr *attr,
			   int cgroup_fd, int cpu)
{
	return open_flags(ladder, attr, cgroup_fd, cpu, PERF_FLAG_PID_CGROUP);
}

void perf_open_error(int err, bool system_wide, char *why, size_t len)
{
	int paranoid = perf_event_paranoid();

	if ((err == -EACCES || err == -EPERM) && geteuid() == 0)
		snprintf(why, len,
			 "perf_event_open: %s although running as root: a seccomp filter or a "
			 "security module refuses it",
			 strerror(-err));
	else if (err == -EPERM)
		/* The paranoid checks answer EACCES; EPERM comes from seccomp or an LSM. */
		snprintf(why, len,
			 "perf_event_open: %s: a seccomp filter or a security module refuses it "
			 "(a container runtime's default profile does)",
			 strerror(-err));
	else if (err == -EACCES && paranoid >= 3)
		snprintf(why, len,
			 "perf_event_open: %s: kernel.perf_event_paranoid is %d, which (a Debian "
			 "and Android patch) refuses perf_event_open to users without "
			 "CAP_SYS_ADMIN (CAP_PERFMON is not enough there); set it to 2 or lower, or "
			 "run as root",
			 strerror(-err), paranoid);
	else if (err == -EACCES)
		snprintf(why, len,
			 "perf_event_open: %s: %s needs root, CAP_PERFMON, or "
			 "kernel.perf_event_paranoid <= %d (now %d)",
			 strerror(-err), system_wide ? "system-wide sampling" : "kernel sampling",
			 system_wide ? 0 : 1, paranoid);
	else if (err == -ENOSYS)
		snprintf(why, len, "perf_event_open: not supported by this kernel");
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		snprintf(why, len, "perf_event_open: the cpu-clock event is not available (%s)",
			 strerror(-err));
	else
		snprintf(why, len, "perf_event_open: %s", strerror(-err));
}
