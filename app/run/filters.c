// SPDX-License-Identifier: GPL-2.0
#include "app/run/filters.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "compat/bpfpin.h"
#include "compat/cgroup.h"
#include "core/lib/log.h"

/* What only one backend can do, asked of the other: a usage error, not a runtime one. */
static int check_backend(const struct run_filters *f, const struct run_opts *o)
{
	/* On-CPU, both backends open events on the cgroup; off-CPU, bpf asks the helper. */
	for (int i = 0; i < f->nr_cgroups && o->backend == BACKEND_BPF && run_opts__off_cpu(o);
	     i++)
		if (f->cgroups[i].version == CGROUP_V1) {
			pr_warn("argument --cgroup: %s is a cgroup v1 directory: the bpf backend "
				"filters off-CPU time by cgroup v2 membership only "
				"(bpf_current_task_under_cgroup); use --backend perf or auto\n",
				f->cgroups[i].path);
			return -EINVAL;
		}
	if (o->backend == BACKEND_PERF && (f->cgroupmap_fd || f->mntnsmap_fd)) {
		pr_warn("argument %s: the perf backend cannot read BPF maps; use --backend bpf or "
			"auto\n", f->cgroupmap_fd ? "--cgroupmap" : "--mntnsmap");
		return -EINVAL;
	}
	return 0;
}

int run_filters__open(struct run_filters *f, const struct run_opts *o)
{
	char why[512] = "";
	int fd;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < o->nr_cgroups; i++) {
		int err = cgroup_dir__open(o->cgroups[i], &f->cgroups[i], why, sizeof(why));

		if (err) {
			pr_warn("argument --cgroup: %s\n", why[0] ? why : strerror(-err));
			return err;
		}
		f->nr_cgroups++;
		pr_info("cgroup %s: v%d, id %llu\n", o->cgroups[i], (int)f->cgroups[i].version,
			(unsigned long long)f->cgroups[i].id);
	}
	if (o->cgroupmap) {
		fd = bpfpin__open_id_set(o->cgroupmap, "--cgroupmap", why, sizeof(why));
		if (fd < 0) {
			pr_warn("%s\n", why[0] ? why : strerror(-fd));
			return fd;
		}
		f->cgroupmap_fd = fd;
	}
	if (o->mntnsmap) {
		fd = bpfpin__open_id_set(o->mntnsmap, "--mntnsmap", why, sizeof(why));
		if (fd < 0) {
			pr_warn("%s\n", why[0] ? why : strerror(-fd));
			return fd;
		}
		f->mntnsmap_fd = fd;
	}
	return check_backend(f, o);
}

void run_filters__config(const struct run_filters *f, struct backend_config *c)
{
	c->cgroups = f->nr_cgroups ? f->cgroups : NULL;
	c->nr_cgroups = f->nr_cgroups;
	c->cgroupmap_fd = f->cgroupmap_fd;
	c->mntnsmap_fd = f->mntnsmap_fd;
}

void run_filters__close(struct run_filters *f)
{
	for (int i = 0; i < f->nr_cgroups; i++)
		cgroup_dir__close(&f->cgroups[i]);
	f->nr_cgroups = 0;
	if (f->cgroupmap_fd > 0)
		close(f->cgroupmap_fd);
	if (f->mntnsmap_fd > 0)
		close(f->mntnsmap_fd);
	f->cgroupmap_fd = f->mntnsmap_fd = 0;
}
