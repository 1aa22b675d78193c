// SPDX-License-Identifier: GPL-2.0
/* The bpf backend's cpu-clock events, the counting program attached to each. */
#include "backend-bpf/bpfbackend_internal.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

#include "backend-bpf/dwarf.h"
#include "backend-bpf/nsids.h"
#include "backend-perfring/ringset.h"
#include "compat/cgroup.h"
#include "compat/perf_event.h"

/*
 * -p/-L: cpu-clock events per thread and CPU, inherited by the threads it
 * starts, exactly as the perf backend opens them, so that both backends
 * sample by the same clock: the task's own, where per-CPU events fire on
 * the CPU's ticks and catch a kernel-heavy program elsewhere (find's
 * getdents path 9.6% of samples per-CPU, 7.5% per-task, in one run). Per
 * CPU too, not one event following the thread: each event keeps its own
 * period, and after a migration one per CPU takes up the phase the perf
 * backend's does (with one event per thread, stacks of a program pinned
 * by its loop drifted 2-3 points apart between backends). The program
 * still filters. 0 when the events should be per CPU only: no -p/-L, a
 * cgroup or a launch, or too many threads for an event each.
 */
static int task_events(const struct backend *b, pid_t **tids, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	int nr;

	*tids = NULL;
	if (c->nr_cgroups || b->target > 0 || !(c->nr_pids || c->nr_tids))
		return 0;
	nr = ring_set__task_list(c, tids);
	if (nr == 0 || nr == -ESRCH) {
		errmsg__set(errm, "bpf: no thread of the given processes is left");
		return -ESRCH;
	}
	if (nr < 0) {
		errmsg__set(errm, "bpf: listing the given processes' threads: %s", strerror(-nr));
		return nr;
	}
	if (nr > RING_SET_MAX_TASK_EVENTS) {
		free(*tids);
		*tids = NULL;
		return 0;
	}
	return nr;
}

/* One event of attach_events; a thread gone since it was listed is -ESRCH. */
static int open_event(const struct backend *b, struct perf_event_attr *attr, int cpu,
		      int cgroup_fd, pid_t tid)
{
	if (cgroup_fd >= 0)
		return sys_perf_event_open(attr, cgroup_fd, cpu, -1,
					   PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	if (tid > 0) {
		attr->inherit = 1;
		return sys_perf_event_open(attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return sys_perf_event_open(attr, b->target > 0 ? b->target : -1, cpu, -1,
				   PERF_FLAG_FD_CLOEXEC);
}

/*
 * The cpu-clock events the program runs on: per CPU and thread of -p/-L
 * (see task_events), else one per CPU, or per CPU and --cgroup directory: on a
 * cgroup (PERF_FLAG_PID_CGROUP) the event, and so the program, fires only
 * while a task of that cgroup or of one below it runs. The program cannot
 * ask itself in the interrupt it runs in (see bpf/cgroup.bpf.h); where
 * perf events cannot follow the cgroups, it looks the thread up in the
 * table (backend-bpf/cgtrack.h), on one event per CPU.
 */
int bpf_backend__attach_events(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	int prog_fd = b->dwarf	       ? bpf_dwarf__prog_fd(b->dwarf)
		      : b->idmap_prog ? bpf_program__fd(b->idmap_prog)
		      : b->pidns      ? bpf_program__fd(b->pidns->progs.profile_sample_pidns)
		      : b->nsids      ? bpf_nsids__prog_fd(b->nsids)
		      : b->native_prog_fd >= 0 ? b->native_prog_fd
		      : b->fpwalk_prog_fd >= 0 ? b->fpwalk_prog_fd
				      : bpf_program__fd(b->counting->progs.profile_sample);
	struct perf_event_attr attr;
	int *cpus = NULL, nr, per_cpu, nr_tids, gone = 0, err = 0;
	bool on_cgroups;
	pid_t *tids;
	char why[256] = "";

	nr_tids = task_events(b, &tids, errm);
	if (nr_tids < 0)
		return nr_tids;
	nr = ring_set__cpus(c, &cpus);
	if (nr < 0) {
		free(tids);
		errmsg__set(errm, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	on_cgroups = b->cg_mode == CGROUP_MODE_EVENTS;
	per_cpu = nr_tids ? nr_tids : on_cgroups ? c->nr_cgroups : 1;
	b->event_fds = calloc((size_t)nr * per_cpu, sizeof(*b->event_fds));
	if (!b->event_fds) {
		free(cpus);
		free(tids);
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < nr * per_cpu && !err; i++) {
		int cpu = cpus[i / per_cpu], fd;

		ring_set__cpu_clock_attr(&attr, c, b->target > 0);
		fd = open_event(b, &attr, cpu, on_cgroups ? c->cgroups[i % per_cpu].fd : -1,
				tids ? tids[i % per_cpu] : 0);
		if (fd == -ESRCH && tids) {
			gone++;		/* exited since it was listed */
			continue;
		}
		if (fd < 0) {
			perf_open_error(fd, b->target <= 0 && !tids, why, sizeof(why));
			errmsg__set(errm, "%s (%s %d)", why, tids ? "thread" : "CPU",
				    tids ? (int)tids[i % per_cpu] : cpu);
			err = fd;
			break;
		}
		b->event_fds[b->nr_events++] = fd;
		/* The raw ioctl, not a libbpf link: enabling is ours (enable_on_exec). */
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
			err = -errno;
			errmsg__set(errm, "bpf: attaching to the cpu-clock event of %s %d: %s",
				    tids ? "thread" : "CPU", tids ? (int)tids[i % per_cpu] : cpu,
				    strerror(-err));
		}
	}
	if (!err && tids && gone == nr * nr_tids) {
		errmsg__set(errm, "bpf: no thread of the given processes is left");
		err = -ESRCH;
	}
	if (!err && tids)
		pr_info("bpf: sampling %d thread(s) of the given processes\n",
			nr_tids - gone / (nr ? nr : 1));
	free(cpus);
	free(tids);
	return err;
}
