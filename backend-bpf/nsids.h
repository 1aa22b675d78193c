/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A profiler inside a pid namespace where the kernel lacks
 * bpf_get_ns_current_pid_tgid (before 5.7): the counting program's variant
 * bpf/profile_nsids.bpf.c counts by the initial namespace's ids and sends a
 * record of each task it has not named for a second through a perf event
 * array opened here with PERF_SAMPLE_TID, which the kernel fills with the
 * task's ids in this process's namespace (0 outside it). This pairs them
 * and names the counts by the namespace's ids, as -p/-L, /proc and the
 * side-band records here do.
 */
#ifndef BACKEND_BPF_NSIDS_H
#define BACKEND_BPF_NSIDS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpf/profile_maps.h"

struct bpf_nsids;
struct profile_bpf;

/* Tests: the records' way even where the kernel has the 5.7 helper. */
extern bool bpf_nsids__test_force;

/* Whether the kernel takes the variant, on counting's maps: 0 or -errno. */
int bpf_nsids__probe(struct profile_bpf *counting);
/*
 * Load the variant on counting's maps and open its records' buffers. With
 * by_tid the tasks are threads (-L), else processes. NULL with errno set.
 */
struct bpf_nsids *bpf_nsids__open(struct profile_bpf *counting, bool by_tid);
int bpf_nsids__prog_fd(const struct bpf_nsids *n);
/* Read the records that arrived: 0 or -errno. */
int bpf_nsids__consume(struct bpf_nsids *n);
/*
 * key's task by its ids in the namespace: 1 (renamed), 0 (outside it: not
 * profiled), -ENOENT (no record of it: its count weight is counted as unnamed).
 */
int bpf_nsids__rename(struct bpf_nsids *n, struct profile_key *key, uint64_t weight);
/* The sample weight of tasks without a record (lost: the buffer was full). */
uint64_t bpf_nsids__unnamed(const struct bpf_nsids *n);
void bpf_nsids__close(struct bpf_nsids *n);

#endif
