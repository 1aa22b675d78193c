/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcc's --cgroupmap and --mntnsmap: hash maps pinned by another tool
 * (Inspektor Gadget), keyed by cgroup id or mount namespace id, whose keys
 * are the tasks to keep. The loader replaces these placeholders with the
 * pinned maps (bpf_map__reuse_fd). Programs pass IDMAP_* as a constant:
 * the 4.9 programs pass 0, and no newer helper is left in them.
 *  - cgroup ids: bpf_get_current_cgroup_id (Linux 4.18), the task's cgroup
 *    v2 id, matched exactly as bcc does (not its ancestors).
 *  - mount namespace ids: current->nsproxy->mnt_ns->ns.inum, which only a
 *    CO-RE program can read portably (kernel BTF): defined where
 *    IDMAP_CORE is, by the variants that need BTF.
 */
#ifndef BPF_IDMAP_BPF_H
#define BPF_IDMAP_BPF_H

#include "bpf/idmap_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u64);
} cgroupmap SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u64);
	__type(value, __u32);
} mntnsmap SEC(".maps");

#ifdef IDMAP_CORE
#include <bpf/bpf_core_read.h>

/* Only the fields read, relocated against the kernel's BTF at load. */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct mnt_namespace {
	struct ns_common ns;
} __attribute__((preserve_access_index));

struct nsproxy {
	struct mnt_namespace *mnt_ns;
} __attribute__((preserve_access_index));

struct task_struct {
	struct nsproxy *nsproxy;
} __attribute__((preserve_access_index));

static __always_inline __u64 current_mntns_id(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	/* 0 (no such key) for an exiting task whose nsproxy is gone. */
	return BPF_CORE_READ(task, nsproxy, mnt_ns, ns.inum);
}
#endif

static __always_inline int idmap_wanted(int filters)
{
	__u64 id;

	if (filters & IDMAP_CGROUP) {
		id = bpf_get_current_cgroup_id();
		if (!bpf_map_lookup_elem(&cgroupmap, &id))
			return 0;
	}
#ifdef IDMAP_CORE
	if (filters & IDMAP_MNTNS) {
		id = current_mntns_id();
		if (!bpf_map_lookup_elem(&mntnsmap, &id))
			return 0;
	}
#endif
	return 1;
}

#endif
