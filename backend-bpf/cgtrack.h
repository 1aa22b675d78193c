/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --cgroup for the on-CPU programs. Where perf events can follow the
 * cgroups (PERF_FLAG_PID_CGROUP) they are opened on them, and the programs
 * fire only for the cgroups' tasks. Where they cannot (a cgroup v2
 * directory before Linux 4.11, or perf_event bound to a v1 hierarchy, as
 * on hybrid systemd hosts) the events are per CPU and the programs look
 * the thread up in a table (bpf/cgroup_members.bpf.h) that the off-CPU
 * program keeps on sched_switch and sched_process_fork, filled here at the
 * start from the cgroups' thread lists: Linux 4.9 suffices.
 */
#ifndef BACKEND_BPF_CGTRACK_H
#define BACKEND_BPF_CGTRACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/backend/backend.h"

enum cgroup_mode {
	CGROUP_MODE_NONE,	/* no --cgroup, or no on-CPU sampling */
	CGROUP_MODE_EVENTS,	/* events on the cgroups */
	CGROUP_MODE_TABLE,	/* per-CPU events, the thread table */
};

/* Entries of the thread table: threads under the cgroups at once. */
#define CGTRACK_ENTRIES 32768

/* Tests: the table even where perf events could follow the cgroups. */
extern bool bpf_cgtrack__test_table;

/*
 * How the on-CPU programs keep to cfg's cgroups here: a mode, with why
 * perf events cannot follow them in why for CGROUP_MODE_TABLE; or -errno
 * with the reason neither can work.
 */
int cgtrack__mode(const struct backend_config *cfg, bool in_pidns, char *why, size_t len);

/*
 * Add every thread of cfg's cgroups and of the cgroups below them to the
 * table at members_fd (entries the programs made already are kept).
 * Returns the number of threads added, or -errno with a one-line reason.
 * *full counts those the table had no room for.
 */
int cgtrack__fill(int members_fd, const struct backend_config *cfg, uint64_t *full, char *why,
		  size_t len);

#endif
