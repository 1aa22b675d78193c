/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The naming of tasks for a profiler inside a pid namespace (see
 * bpf/nsids_maps.h): the counting program's before Linux 5.7, the off-CPU
 * program's on every kernel. 4.9: perf_event_output from the BPF stack, map
 * lookup/update, ktime_get_ns. The includer defines stat_inc() first.
 */
#ifndef BPF_NSIDS_BPF_H
#define BPF_NSIDS_BPF_H

#include "bpf/nsids_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} nsid_records SEC(".maps");

/* Sized by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct nsid_entry);
} nsids SEC(".maps");

/*
 * Whether to count this event of the current task tgid/tid (named key,
 * its tgid or tid, in the nsids map): not when user space found it outside
 * the namespace. Sends its record when it was not named for NSID_RENAME_NS;
 * a full nsids map is counted in stats slot full_slot, and the record still
 * sent.
 */
static __always_inline int nsid_visible(void *ctx, __u32 key, __u32 tgid, __u32 tid,
					__u32 full_slot)
{
	struct nsid_entry *e = bpf_map_lookup_elem(&nsids, &key), first;
	__u64 now = bpf_ktime_get_ns();
	struct nsid_record rec;

	if (e && now - e->named < NSID_RENAME_NS)
		return !e->outside;
	if (e) {
		e->named = now;
	} else {
		__builtin_memset(&first, 0, sizeof(first));
		first.named = now;
		if (bpf_map_update_elem(&nsids, &key, &first, BPF_NOEXIST))
			stat_inc(full_slot);
	}
	rec.tgid = tgid;
	rec.tid = tid;
	bpf_perf_event_output(ctx, &nsid_records, BPF_F_CURRENT_CPU, &rec, sizeof(rec));
	return e ? !e->outside : 1;
}

#endif
