/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel-side task filters of a run that name things outside the
 * profiler (--cgroup directories, bcc's pinned --cgroupmap/--mntnsmap
 * maps): opened and checked once before a backend is chosen, so that a bad
 * path is a usage error whichever backend would run, and held open until
 * the run ends.
 */
#ifndef APP_RUN_FILTERS_H
#define APP_RUN_FILTERS_H

#include "app/run/opts.h"
#include "compat/cgroup.h"
#include "core/backend/backend.h"

struct run_filters {
	struct cgroup_dir cgroups[CGROUP_MAX];
	int nr_cgroups;
	int cgroupmap_fd;	/* 0: none */
	int mntnsmap_fd;
};

/*
 * Open what o names. Returns 0, or -errno after printing a one-line usage
 * error (the run exits 2). f must be closed in every case.
 */
int run_filters__open(struct run_filters *f, const struct run_opts *o);
/* Point the backend's config at them. */
void run_filters__config(const struct run_filters *f, struct backend_config *c);
void run_filters__close(struct run_filters *f);

#endif
