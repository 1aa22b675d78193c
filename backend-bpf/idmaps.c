// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/idmaps.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend-bpf/shared_maps.h"
#include "bpf/idmap_maps.h"

int idmaps__filters(const struct backend_config *c)
{
	return (c->cgroupmap_fd ? IDMAP_CGROUP : 0) | (c->mntnsmap_fd ? IDMAP_MNTNS : 0);
}

bool idmaps__have_btf(char *why, size_t len)
{
	if (!access("/sys/kernel/btf/vmlinux", R_OK))
		return true;
	snprintf(why, len, "--mntnsmap needs kernel BTF (/sys/kernel/btf/vmlinux: "
		 "CONFIG_DEBUG_INFO_BTF, Linux 5.5 or later): without it a BPF program cannot "
		 "find a task's mount namespace on this kernel");
	return false;
}

int idmaps__probe(const struct backend_config *c, bool in_pidns, char *why, size_t len)
{
	const char *opt = c->cgroupmap_fd ? "--cgroupmap" : "--mntnsmap";

	if (in_pidns) {
		snprintf(why, len, "%s: the profiler runs in a pid namespace, where the bpf "
			 "backend's programs that read it are not available", opt);
		return -EOPNOTSUPP;
	}
	if (c->on_cpu && c->dwarf && c->user_stacks) {
		snprintf(why, len, "%s with --unwind dwarf: the stack-copy program does not read "
			 "bcc's maps", opt);
		return -EOPNOTSUPP;
	}
	if (c->mntnsmap_fd && !idmaps__have_btf(why, len))
		return -EOPNOTSUPP;
	return 0;
}

void idmaps__refused(const struct backend_config *c, const char *what, int err, char *why,
		     size_t len)
{
	snprintf(why, len, "the kernel refused the %s that reads %s: %s (%s; -vv shows the "
		 "verifier's log)", what, c->mntnsmap_fd ? "--mntnsmap" : "--cgroupmap",
		 strerror(-err), c->mntnsmap_fd ? "CO-RE over kernel BTF and bpf_probe_read_kernel "
						  "need Linux 5.5"
						: "bpf_get_current_cgroup_id needs Linux 4.18");
}

/* The variant's program names end with what it filters by. */
static const char *suffix(int filters)
{
	switch (filters) {
	case IDMAP_CGROUP:
		return "_cgroupmap";
	case IDMAP_MNTNS:
		return "_mntns";
	default:
		return "_mntns_cgroupmap";
	}
}

static bool ends_with(const char *s, const char *end)
{
	size_t n = strlen(s), m = strlen(end);

	return n >= m && !strcmp(s + n - m, end);
}

static int use_pinned(struct bpf_object *obj, const char *name, int fd)
{
	struct bpf_map *map = bpf_object__find_map_by_name(obj, name);

	return map ? bpf_map__reuse_fd(map, fd) : -ENOENT;
}

int idmaps__prepare(struct bpf_object *obj, const struct bpf_object *main,
		    const struct backend_config *c, struct bpf_program **prog)
{
	const char *want = suffix(idmaps__filters(c));
	struct bpf_program *p;
	int err;

	*prog = NULL;
	bpf_object__for_each_program(p, obj) {
		bool mine = ends_with(bpf_program__name(p), want) && !*prog;

		bpf_program__set_autoload(p, mine);
		if (mine)
			*prog = p;
	}
	if (!*prog)
		return -ENOENT;
	err = shared_maps__reuse(obj, main);
	/* After the shared ones: the off-CPU program's own placeholders are shared too. */
	if (!err && c->cgroupmap_fd)
		err = use_pinned(obj, "cgroupmap", c->cgroupmap_fd);
	if (!err && c->mntnsmap_fd)
		err = use_pinned(obj, "mntnsmap", c->mntnsmap_fd);
	return err;
}
