/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks named by their ids in the profiler's pid namespace, from records:
 * a program counts by the initial namespace's ids and sends a record of
 * each task it has not named for a second through a perf event array
 * opened here with PERF_SAMPLE_TID, which the kernel fills with the task's
 * ids in this process's namespace (0 outside it) (bpf/nsids.bpf.h). This
 * pairs them and renames what the program counted, so that counts carry
 * the ids -p/-L, /proc and the side-band records here use. The counting
 * program's variant bpf/profile_nsids.bpf.c does this where the kernel
 * lacks bpf_get_ns_current_pid_tgid (before 5.7); the off-CPU program does
 * it on every kernel.
 */
#ifndef BACKEND_BPF_NSIDS_H
#define BACKEND_BPF_NSIDS_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

/* Entries of a program's nsids map: tasks named within the last seconds. */
#define NSIDS_ENTRIES 16384

struct nsid_names;

/*
 * Open the records' buffers of the perf event array records_fd; nsids_fd
 * is the program's nsids map. by_tid: the map and the renaming are by
 * thread, else by process. NULL with errno set.
 */
struct nsid_names *nsid_names__new(int records_fd, int nsids_fd, bool by_tid);
/*
 * A task whose name is in use however old its record: keep(ctx, host) for
 * its id in the initial namespace (the off-CPU program's: a thread still
 * switched out, whose interval it counts when the thread comes back, and
 * which sends no record meanwhile).
 */
typedef bool (*nsid_keep_fn)(void *ctx, __u32 host);
void nsid_names__set_keep(struct nsid_names *n, nsid_keep_fn keep, void *ctx);
/* Read the records that arrived: 0 or -errno. */
int nsid_names__consume(struct nsid_names *n);
/*
 * The task tgid, tid (the initial namespace's; tid used only by_tid) by its ids in
 * the namespace: 1 (renamed), 0 (outside it: not profiled), -ENOENT (no
 * record of it: weight is counted as unnamed).
 */
int nsid_names__rename(struct nsid_names *n, __u32 *tgid, __u32 *tid, uint64_t weight);
/* The weight of tasks without a record (lost: the buffer was full). */
uint64_t nsid_names__unnamed(const struct nsid_names *n);
void nsid_names__free(struct nsid_names *n);

struct bpf_nsids;
struct profile_bpf;

/* Tests: the counting program's records' way even where the kernel has the 5.7 helper. */
extern bool bpf_nsids__test_force;

/* Whether the kernel takes the counting program's variant, on counting's maps: 0 or -errno. */
int bpf_nsids__probe(struct profile_bpf *counting);
/*
 * Load the variant on counting's maps and open its records' buffers. With
 * by_tid the tasks are threads (-L), else processes. NULL with errno set.
 */
struct bpf_nsids *bpf_nsids__open(struct profile_bpf *counting, bool by_tid);
int bpf_nsids__prog_fd(const struct bpf_nsids *n);
struct nsid_names *bpf_nsids__names(struct bpf_nsids *n);
void bpf_nsids__close(struct bpf_nsids *n);

#endif
