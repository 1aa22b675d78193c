/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The --cgroup filter shared by every program (bpf/cgroup.bpf.h) and the
 * loaders: a BPF_MAP_TYPE_CGROUP_ARRAY of the cgroup directories, at most
 * PROFILE_MAX_CGROUPS, slots 0..n-1 filled. An empty array (slot 0 unset)
 * means no filter.
 */
#ifndef BPF_CGROUP_MAPS_H
#define BPF_CGROUP_MAPS_H

#define PROFILE_MAX_CGROUPS 16

#endif
