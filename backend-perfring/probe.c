// SPDX-License-Identifier: GPL-2.0
/*
 * Whether the perf backend can run here, and why not: the probe is the real
 * call, one event opened like the ones sampling will open.
 */
#include "backend-perfring/probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend-perfring/offcpu.h"
#include "backend-perfring/ringsample.h"
#include "backend-perfring/ringset.h"
#include "compat/host.h"
#include "compat/perf_event.h"

static bool process_is_ours(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == geteuid();
}

/* Open and close one event like the real ones; returns 0 or -errno. */
int perfring__try_open(const struct backend_config *c, bool launch, bool user_mode_only,
		       pid_t pid, int cpu)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd;

	perfring__sample_attr(&attr, c, launch);
	attr.enable_on_exec = 0;
	attr.exclude_kernel = user_mode_only;
	fd = perf_attr__open(&ladder, &attr, pid, cpu);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/* A thread of the targets to try per-task events on: 0 for the command to be launched. */
pid_t perfring__first_task(const struct backend_config *c)
{
	pid_t *tids = NULL, task = 0;
	int nr;

	if (c->launch || (!c->nr_pids && !c->nr_tids))
		return 0;
	nr = ring_set__task_list(c, &tids);
	if (nr > 0)
		task = tids[0];
	free(tids);
	return task;
}

/* bcc's pinned maps are for BPF programs only; each --cgroup must take events. */
static int probe_cgroups(const struct backend_config *c, char *why, size_t len)
{
	if (c->cgroupmap_fd || c->mntnsmap_fd) {
		snprintf(why, len, "%s is a BPF map, which only the bpf backend can read",
			 c->cgroupmap_fd ? "--cgroupmap" : "--mntnsmap");
		return -EOPNOTSUPP;
	}
	return ring_set__probe_cgroups(c, why, len);
}

/*
 * Per-task switch events end a thread's off-CPU interval with its switch-in,
 * which only PERF_RECORD_SWITCH (attr.context_switch, 4.3) reports; without
 * it the intervals cannot be measured, and a wrong total is worse than none.
 */
static int switch_ins_reported(const struct backend_config *c, enum offcpu_source source,
			       pid_t task, char *why, size_t len)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd, err = perf_offcpu__attr(c, source, &attr, why, len);

	if (err)
		return err;
	attr.enable_on_exec = 0;
	fd = perf_attr__open(&ladder, &attr, task, -1);
	if (fd < 0) {
		perf_open_error(fd, false, why, len);
		return fd;
	}
	close(fd);
	if (!ladder.dropped[PERF_ATTR_CONTEXT_SWITCH])
		return 0;
	snprintf(why, len, "off-CPU time without root or CAP_PERFMON needs the switch-in "
		 "records of PERF_RECORD_SWITCH (Linux 4.3; this kernel is %s); as root, "
		 "sched:sched_switch serves", kernel_release());
	return -EOPNOTSUPP;
}

static void probe_offcpu(const struct backend_config *c, struct backend_plan *plan)
{
	enum offcpu_source source;
	pid_t task = perfring__first_task(c);

	plan->err = perf_offcpu__probe(c, task, &source, plan->why, sizeof(plan->why));
	if (!plan->err && source != OFFCPU_TRACEPOINT) {
		char why[sizeof(plan->why)] = "";
		int err = switch_ins_reported(c, source, task, why, sizeof(why));

		if (err) {
			plan->err = err;
			snprintf(plan->why, sizeof(plan->why), "%s", why);
			return;
		}
	}
	/* Times without stacks: usable, and said so; another backend may do better. */
	plan->partial = !plan->err && source == OFFCPU_SWITCHES_ONLY;
}

/*
 * The probe is the real call. System-wide needs root, CAP_PERFMON or
 * perf_event_paranoid <= 0; one's own processes can be sampled up to
 * paranoid 2, user mode only above 1.
 */
void perfring__probe(const struct backend_config *c, struct backend_plan *plan)
{
	/* Events on a cgroup are per CPU: -p/-L are then filtered in the pipeline. */
	bool targeted = (c->launch || c->nr_pids || c->nr_tids) && !c->nr_cgroups;
	pid_t *tids = NULL;
	pid_t task;
	int *cpus = NULL, nr, err;

	if (c->nr_cgroups || c->cgroupmap_fd || c->mntnsmap_fd) {
		plan->err = probe_cgroups(c, plan->why, sizeof(plan->why));
		if (plan->err)
			return;
	}
	if (c->off_cpu) {
		probe_offcpu(c, plan);
		if (plan->err || !c->on_cpu)
			return;
	}

	nr = ring_set__cpus(c, &cpus);
	if (nr < 0) {
		plan->err = nr;
		snprintf(plan->why, sizeof(plan->why), "cannot read the online CPUs: %s",
			 strerror(-nr));
		return;
	}
	err = c->launch ? -EACCES : perfring__try_open(c, false, false, -1, cpus[0]);
	free(cpus);
	if (!err || !targeted || (err != -EACCES && err != -EPERM)) {
		if (err)
			perf_open_error(err, true, plan->why, sizeof(plan->why));
		plan->err = err;
		return;
	}

	/* Per task: our own pid stands for the command not yet started. */
	if (c->launch) {
		task = 0;
	} else {
		nr = ring_set__task_list(c, &tids);
		task = nr > 0 ? tids[0] : -1;
		free(tids);
		if (nr <= 0) {
			plan->err = -ESRCH;
			snprintf(plan->why, sizeof(plan->why),
				 "no thread of the given processes is left");
			return;
		}
	}
	err = perfring__try_open(c, c->launch, false, task, -1);
	if (!err)
		return;
	if (err == -EACCES && c->user_stacks && !perfring__try_open(c, c->launch, true, task, -1)) {
		plan->user_mode_only = true;
		snprintf(plan->why, sizeof(plan->why),
			 "kernel.perf_event_paranoid is %d, which lets users without CAP_PERFMON "
			 "sample user space only; kernel.perf_event_paranoid=1, CAP_PERFMON or root "
			 "would add kernel stacks",
			 perf_event_paranoid());
		return;
	}
	plan->err = err;
	if (err == -EACCES && task > 0 && !process_is_ours(task))
		snprintf(plan->why, sizeof(plan->why),
			 "perf_event_open on thread %d: %s: it belongs to another user; sampling it "
			 "needs CAP_PERFMON or root",
			 (int)task, strerror(-err));
	else
		perf_open_error(err, false, plan->why, sizeof(plan->why));
}
