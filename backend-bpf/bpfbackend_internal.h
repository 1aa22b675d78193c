/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rooms of the bpf backend share, and no one else: its state
 * (struct backend), and the calls between bpfbackend.c (the backend's
 * operations), counting.c (the counting program loaded and set up),
 * attach.c (its cpu-clock events) and drain.c (counts into the pipeline).
 */
#ifndef BPFBACKEND_BPFBACKEND_INTERNAL_H
#define BPFBACKEND_BPFBACKEND_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend-bpf/cgtrack.h"
#include "backend-bpf/load.h"
#include "backend-bpf/stacks.h"
#include "bpf/profile_maps.h"
#include "core/backend/backend.h"
#include "core/lib/log.h"

#define SIDEBAND_PAGES 32

struct bpf_dwarf;
struct bpf_nsids;
struct bpf_offcpu;
struct bpf_python;
struct ring_set;

struct backend {
	const struct backend_config *cfg;
	struct pipeline *pipeline;
	struct profile_bpf *skel;	/* the maps; the program only in counting */
	struct profile_bpf *counting;	/* the program, where no variant runs instead */
	pid_t target;
	int *event_fds;
	int nr_events;
	/*
	 * The side-band's own rings, or NULL where the stack copies' rings
	 * carry its records (system-wide --unwind dwarf): see tracker().
	 */
	struct ring_set *sideband;
	bool stopped;			/* the next drain takes everything */
	int counts_fd[2];
	int stats_fd;
	int config_fd;
	struct profile_config config;
	/*
	 * Over each write of config: the copies' reader thread renews
	 * copies_until_ns too (first_copies.c), the main thread the rest.
	 */
	pthread_mutex_t config_lock;
	int64_t lease_renewed_ns;	/* the reader thread's own: its last renewal */
	bool lease_started;		/* atomic: the main thread renewed it once (the run started) */
	unsigned int hash_size;
	unsigned int stack_size;
	unsigned int stack_start;	/* before locked-memory limits: the rate's or the asked */
	uint64_t new_keys_at_switch;
	uint64_t new_stacks_at_switch;
	int64_t last_switch_ms;
	/*
	 * When each generation became the active one, and when the stack copies
	 * were last drained (CLOCK_MONOTONIC ns, the side-band's clock): counts
	 * carry no time, so a drained count was taken between then and now.
	 */
	uint64_t gen_since[2];
	uint64_t dwarf_since;
	uint64_t started_ns;
	int nr_cpus;			/* possible CPUs: the per-CPU value count */
	uint64_t drains;
	/* Each generation's stack maps by id; the dwarf program uses generation 0's. */
	struct stack_cache stacks[2];
	uint64_t orphan_stacks;		/* stacks left in a cleared map without a count */
	int poll_ms;			/* how often bpf_drain looks at the fill */
	bool no_batch;			/* the kernel lacks batch map operations */
	struct bpf_dwarf *dwarf;	/* --unwind dwarf: stack copies instead of counts */
	/*
	 * --unwind auto: the samples of processes the native unwinder's
	 * tables do not have yet, as stack copies (a new process's first
	 * ones), drained from first_copies_since on like dwarf's.
	 */
	struct bpf_dwarf *first_copies;
	uint64_t first_copies_since;
	bool kstacks_inline;		/* its kernel stacks come in its records, not stack maps */
	/*
	 * User stacks walked by the program itself, where no other variant runs:
	 * kernel-mode samples' too (5.15, BTF), else user-mode samples' (5.5).
	 */
	struct profile_fpwalk_regs_bpf *fpwalk_regs;
	struct profile_fpwalk_bpf *fpwalk;
	int fpwalk_prog_fd;		/* the one loaded, -1 if none */
	/* User stacks unwound by the native tables (cfg->native_unwind), where no variant runs. */
	struct profile_native_regs_bpf *native_regs;	/* kernel-mode samples too (5.15) */
	struct profile_native_bpf *native_plain;	/* user-mode samples (4.9) */
	struct bpf_object *native;	/* the one loaded, or NULL */
	int native_prog_fd;		/* its counting program, -1 if none */
	uint64_t native_noted;		/* PROFILE_STAT_NATIVE_NOTED when last read (no wake ring) */
	bool native_woken;		/* a native_wake record (or its loss) since the last take */
	int64_t native_swept_ms;	/* when the store last checked its processes */
	int64_t native_late_until_ms;	/* tests: no process read before (bpf_native__test_late_ms) */
	struct native_store *native_store;	/* fills its maps */
	struct perf_buffer *native_wake;	/* the program's records of pids noted */
	/* A profiler inside a pid namespace counts with tasks' ids there. */
	struct profile_pidns_bpf *pidns;
	struct bpf_nsids *nsids;	/* the same before Linux 5.7 */
	/* Off-CPU time: sched_switch, summed in the kernel; and/or --cgroup's thread table. */
	struct bpf_offcpu *offcpu;
	enum cgroup_mode cg_mode;	/* how the on-CPU programs keep to --cgroup */
	uint64_t cgroup_full_at_start;	/* threads the table had no room for at the start */
	/* bcc's --cgroupmap/--mntnsmap: the counting program's variant that reads them. */
	struct profile_idmap_bpf *idmap;
	struct profile_mntns_bpf *mntns;
	struct bpf_program *idmap_prog;
	/* Python frames walked in the kernel (cfg->interp, the counting program of the initial pid namespace). */
	bool python_wanted;
	struct bpf_python *python;
};

/*
 * Whether the run names its processes (a command, -p, -L) rather than
 * sampling the host (system-wide, --cgroup): the native store's few maps,
 * the first samples' copies.
 */
static inline bool bpf_backend__names_processes(const struct backend_config *c)
{
	return (c->nr_pids || c->nr_tids || c->launch) && !c->nr_cgroups;
}

/* counting.c: the counting program on cpu-clock events: on-CPU stacks. Returns 0 or -errno. */
int bpf_backend__open_counting(struct backend *b, struct errmsg *errm);
/*
 * The stack-copy program on the counting program's maps (handed: the
 * native unwinder's copies, first_copies.c; continuous: of processes left
 * to copies the whole run, Node's, too); NULL with errno set and why in
 * errm.
 */
struct bpf_dwarf *bpf_backend__open_dwarf(struct backend *b, bool task_regs, bool handed,
					  bool continuous, struct errmsg *errm);
/* Write b->config to the program's settings map. Returns 0 or -errno. */
int bpf_backend__write_config(struct backend *b);
/* config.copies_until_ns set (only_longer: not shortened) and written, from either thread. */
int bpf_backend__set_lease(struct backend *b, uint64_t until_ns, bool only_longer);
/* The threads in the cgroups now; the programs keep the table from here on. */
int bpf_backend__fill_cgroup_table(struct backend *b, struct errmsg *errm);

/*
 * native.c: the counting program that unwinds user stacks by the native
 * tables, loaded on the maps, or (refused: -v says why) not; its
 * statistics under -v at the end.
 */
void bpf_native__open(struct backend *b);
/*
 * The store over obj's tables (made with opts) and the ring of the pids its
 * program notes: the counting program's variant's, or the off-CPU
 * program's when it runs alone. 0, or -errno with the unwinder closed.
 */
struct native_store_opts;
int bpf_native__adopt(struct backend *b, struct bpf_object *obj,
		      const struct native_store_opts *opts);
void bpf_native__report(struct backend *b);
void bpf_native__close(struct backend *b);
/*
 * Whether the program noted processes whose tables are not loaded (one
 * read of a per-CPU stat), and those processes handed to the store, their
 * notes deleted.
 */
bool bpf_native__noticed(struct backend *b);
void bpf_native__take_unknown(struct backend *b);
/* An fd readable when the program noted a process (its records' rings), or -1. */
int bpf_native__wake_fd(const struct backend *b);
/* Whether the wait must look at the noted count every few ms (no records wake it, or reads wait). */
bool bpf_native__looks(const struct backend *b);
/* The processes of -p handed to the store at the start. */
struct native_store;
void bpf_native__add_targets(struct backend *b);

/*
 * first_copies.c: with the native unwinder, the samples of processes its
 * tables do not have yet as stack copies (b->first_copies), or (refused: -v
 * says why) by frame pointers; their rings, stop, losses and close.
 */
void bpf_first_copies__open(struct backend *b);
/* The program takes copies for a while more (profile_config.copies_until_ns): at start, each drain. */
void bpf_first_copies__renew(struct backend *b);
struct ring_set *bpf_first_copies__ring_set(const struct backend *b);
void bpf_first_copies__stop(struct backend *b);
void bpf_first_copies__stats(const struct backend *b, struct backend_stats *st);
void bpf_first_copies__close(struct backend *b);

/* attach.c: the counting program on its cpu-clock events. Returns 0 or -errno. */
int bpf_backend__attach_events(struct backend *b, struct errmsg *errm);

/* drain.c: how often to look at the active generation's fill, in ms. */
int bpf_backend__poll_interval(const struct backend_config *o, unsigned int stack_size);
/* A generation's stack-map size for the rate (no --stack-storage-size), in [least, most]. */
unsigned int bpf_backend__stack_size_for_rate(const struct backend_config *o, unsigned int least,
					      unsigned int most);
uint64_t bpf_backend__read_stat(struct backend *b, enum profile_stat slot);
/* A stack of generation 0's maps by id, for the stack-copy program's records. */
const uint64_t *bpf_backend__cached_stack(void *ctx, int32_t id);
/* The backend's drain (backend_ops.drain). Returns 0 or -errno. */
int bpf_backend__drain(struct backend *b);
/* Whether Python processes are walked now, and whether the walks met threads they did not know. */
bool bpf_backend__python_watched(const struct backend *b);
bool bpf_backend__python_noticed(const struct backend *b);

#endif
