// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/probe.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-bpf/cgtrack.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/idmaps.h"
#include "backend-bpf/load.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/offcpu.h"
#include "backend-perfring/ringset.h"
#include "compat/cgroup.h"
#include "compat/features.h"
#include "compat/host.h"
#include "compat/perf_event.h"
#include "compat/pidns.h"

/*
 * Off-CPU time and/or --cgroup's thread table (track): what the off-CPU
 * program cannot do, then the real load.
 */
static int probe_offcpu(const struct backend_config *c, bool track, char *why, size_t len)
{
	/* auto's are unwound by the tables in the switch program (offcpu_native.c). */
	if (c->off_cpu && c->off_cpu_dwarf && c->user_stacks && !c->native_unwind) {
		snprintf(why, len, "off-CPU time with --unwind dwarf takes stack copies at "
			 "switch-out, which only the perf backend does");
		return -EOPNOTSUPP;
	}
	return bpf_offcpu__probe(c, track, why, len);
}

/*
 * A profiler inside a pid namespace: the counting program's variant that
 * names tasks by their ids there (5.7), else the one that has the kernel
 * write them into perf records (4.9, nsids.h).
 */
static int probe_pidns(struct profile_bpf *skel, char *why, size_t len)
{
	struct profile_pidns_bpf *pidns = bpf_nsids__test_force ? NULL
								 : bpf_load__pidns_program(skel);
	int err = pidns ? 0 : bpf_nsids__probe(skel);

	profile_pidns_bpf__destroy(pidns);
	if (err)
		snprintf(why, len, PIDNS_WHY, strerror(-err));
	return err;
}

/* Returns 0, PROBE_PARTIAL or -errno, with why. */
#define PROBE_PARTIAL 1

static int probe(const struct backend_config *opts, char *why, size_t len)
{
	struct perf_event_attr attr;
	struct profile_bpf *skel;
	bool system_wide = !opts->launch;
	const char *partial = NULL;
	int fd, *cpus = NULL, nr, cg_mode;
	char cg_why[1024] = "";
	uint64_t ns_dev, ns_ino;
	bool in_pidns = pidns__in_child(&ns_dev, &ns_ino);

	switch (kernel_feature__state(FEAT_BPF_SYSCALL)) {
	case FEATURE_SUPPORTED:
		break;
	case FEATURE_NOT_PERMITTED:
		snprintf(why, len,
			 "bpf() refused (%s): needs root, or CAP_BPF and CAP_PERFMON; a seccomp "
			 "filter or kernel.unprivileged_bpf_disabled can also refuse it",
			 strerror(kernel_feature__errno(FEAT_BPF_SYSCALL)));
		return -EPERM;
	default:
		snprintf(why, len,
			 "bpf() is not available: kernel %s is older than 3.18 or built without "
			 "CONFIG_BPF_SYSCALL",
			 kernel_release());
		return -ENOSYS;
	}
	/* The map and program types the program uses, oldest kernel first. */
	for (enum kernel_feature f = FEAT_BPF_PERCPU_ARRAY; f <= FEAT_BPF_PERF_EVENT_PROG; f++)
		if (kernel_feature__state(f) == FEATURE_MISSING) {
			snprintf(why, len, "kernel %s is too old: %s is needed", kernel_release(),
				 kernel_feature__desc(f));
			return -EOPNOTSUPP;
		}
	for (int i = 0; i < opts->nr_cgroups && opts->off_cpu; i++)
		if (opts->cgroups[i].version == CGROUP_V1) {
			snprintf(why, len, "%s is a cgroup v1 directory: the off-CPU program filters by "
				 "cgroup v2 membership only (bpf_current_task_under_cgroup)",
				 opts->cgroups[i].path);
			return -EOPNOTSUPP;
		}
	if (idmaps__filters(opts)) {
		int err = idmaps__probe(opts, in_pidns, why, len);

		if (err)
			return err;
	}
	/* On-CPU --cgroup: events on the cgroups, else the thread table (cgtrack.h). */
	cg_mode = cgtrack__mode(opts, in_pidns, cg_why, sizeof(cg_why));
	if (cg_mode < 0) {
		snprintf(why, len, "%s", cg_why);
		return cg_mode;
	}
	if (opts->off_cpu || cg_mode == CGROUP_MODE_TABLE) {
		int err = probe_offcpu(opts, cg_mode == CGROUP_MODE_TABLE, why, len);

		/* Without off-CPU time, say what the program was for. */
		if (err && !opts->off_cpu) {
			snprintf(cg_why + strlen(cg_why), sizeof(cg_why) - strlen(cg_why),
				 "; the thread table that serves it here: %s", why);
			snprintf(why, len, "%s", cg_why);
		}
		if (err || !opts->on_cpu)
			return err;
	}

	/* The honest probe: load the real program (with small maps). */
	skel = bpf_load__program(1, 1, 1, false, 1, false, false);
	if (!skel) {
		int err = errno;

		if (err == EINTR)
			snprintf(why, len, "loading the BPF program was interrupted by a signal");
		else if (err == EPERM || err == EACCES)
			snprintf(why, len, "loading the BPF program: %s (needs root, or CAP_BPF "
				 "and CAP_PERFMON)", strerror(err));
		else
			snprintf(why, len, "the kernel refused the BPF program: %s (-vv shows "
				 "the verifier's log)", strerror(err));
		return -err;
	}
	if (opts->dwarf && opts->user_stacks && opts->native_unwind && !in_pidns &&
	    !idmaps__filters(opts)) {
		/*
		 * --unwind auto: the tables' program runs, not the copies (its
		 * fallback where it is refused, tried only then): the copy
		 * program's load here cost every run 10 ms for nothing. Its
		 * kernel-mode samples' user registers come from
		 * bpf_task_pt_regs, or from the top of the task's kernel stack.
		 */
		profile_bpf__destroy(skel);
	} else if (opts->dwarf && opts->user_stacks) {
		bool task_regs;
		int err = bpf_dwarf__probe(skel, !opts->test_no_task_regs, &task_regs);

		profile_bpf__destroy(skel);
		if (err == -EINTR) {
			snprintf(why, len, "loading the stack-copy program of --unwind dwarf was "
				 "interrupted by a signal");
			return err;
		}
		if (err) {
			snprintf(why, len, "the kernel refused the stack-copy program of --unwind "
				 "dwarf: %s (-vv shows the verifier's log)", strerror(-err));
			return err;
		}
		if (!task_regs && in_pidns && !opts->native_unwind) {
			snprintf(why, len, "%s", PIDNS_DWARF_WHY);
			return -EOPNOTSUPP;
		}
		if (!task_regs && in_pidns)
			partial = PIDNS_AUTO_FP;
		else if (!task_regs)
			partial = "samples taken in kernel mode whose user registers are not "
				  "found at the top of the task's kernel stack would get "
				  "frame-pointer user stacks (bpf_task_pt_regs needs Linux 5.15 "
				  "with BTF)";
	} else if (idmaps__filters(opts)) {
		struct profile_idmap_bpf *idmap = NULL;
		struct profile_mntns_bpf *mntns = NULL;
		struct bpf_program *prog;
		int err = bpf_load__idmap_program(skel, opts, &idmap, &mntns, &prog);

		profile_idmap_bpf__destroy(idmap);
		profile_mntns_bpf__destroy(mntns);
		profile_bpf__destroy(skel);
		if (err) {
			idmaps__refused(opts, "program", err, why, len);
			return err;
		}
	} else if (in_pidns) {
		int err = probe_pidns(skel, why, len);

		profile_bpf__destroy(skel);
		if (err)
			return err;
	} else {
		profile_bpf__destroy(skel);
	}

	nr = ring_set__cpus(opts, &cpus);
	if (nr < 0) {
		snprintf(why, len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	ring_set__cpu_clock_attr(&attr, opts, !system_wide);
	attr.enable_on_exec = 0;
	fd = sys_perf_event_open(&attr, system_wide ? -1 : 0, system_wide ? cpus[0] : -1, -1,
				 PERF_FLAG_FD_CLOEXEC);
	free(cpus);
	if (fd < 0) {
		perf_open_error(fd, system_wide, why, len);
		return fd;
	}
	close(fd);
	if (partial) {
		snprintf(why, len, "%s", partial);
		return PROBE_PARTIAL;
	}
	return 0;
}

void bpf_probe(const struct backend_config *cfg, struct backend_plan *plan)
{
	int err = probe(cfg, plan->why, sizeof(plan->why));

	plan->partial = err == PROBE_PARTIAL;
	plan->err = err == PROBE_PARTIAL ? 0 : err;
}

