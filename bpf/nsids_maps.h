/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profiler inside a pid namespace on kernels without
 * bpf_get_ns_current_pid_tgid (before 5.7): the counting program counts by
 * the ids of the initial namespace, and for each task it has not named for
 * a while it sends a record holding them through a perf event array whose
 * events the profiler opened with PERF_SAMPLE_TID. The kernel writes the
 * current task's ids into that field as the event's owner sees them: its
 * pid namespace's ids, 0 for a task outside it. User space pairs the two
 * and names each count by the namespace's ids. (bpf/nsids.bpf.h)
 */
#ifndef BPF_NSIDS_MAPS_H
#define BPF_NSIDS_MAPS_H

#include <linux/types.h>

/* A task is named again after this long, so that a reused id is named anew. */
#define NSID_RENAME_NS 1000000000ULL

/* The raw data of a record: the ids of the initial pid namespace. */
struct nsid_record {
	__u32 tgid;
	__u32 tid;
};

/*
 * Value of the nsids map, keyed by tgid (by tid with PROFILE_CFG_KEY_TID)
 * in the initial namespace: when the program last sent a record of it, and
 * whether user space found it outside the namespace (then not counted).
 */
struct nsid_entry {
	__u64 named;			/* bpf_ktime_get_ns() */
	__u32 outside;
	__u32 pad;
};

#endif
