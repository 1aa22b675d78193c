/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracks what each process had mapped, and each thread's comm, from
 * /proc at first sight and from perf side-band records after that, so that
 * processes that exec or exit during the profile still symbolize.
 */
#ifndef CORE_PROC_PROCTRACK_H
#define CORE_PROC_PROCTRACK_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/lib/hashmap.h"
#include "core/proc/buildid.h"
#include "core/sample/sample.h"

struct mapping {
	uint64_t start;
	uint64_t end;		/* exclusive */
	uint64_t pgoff;		/* file offset of start */
	uint64_t dev;		/* makedev(maj, min), 0 if unknown */
	uint64_t ino;
	bool exec;
	char *path;		/* "/usr/lib/...", "[vdso]", "//anon", ... */
};

struct file_table;

/*
 * One address space: a process between two execs. Once it has ended long
 * enough ago that no sample of it can still come, its mappings are freed
 * (see proctrack__settle), then the struct itself (proctrack__free_released):
 * a busy host starts a hundred processes a second. Caches outside the
 * tracker key an image by its id, never reused, not by its address.
 */
struct addr_space {
	struct file_table *files;	/* the tracker's open binaries; NULL outside a tracker */
	pid_t pid;
	unsigned int id;	/* unique per tracker, for stable ordering */
	char comm[TASK_COMM_LEN];	/* the process's comm when this image began */
	struct addr_space *older;	/* the same pid's image before this one (exec, pid reuse) */
	/*
	 * When this image began, in the side-band records' clock: the exec or
	 * fork record's time; 0 for an image found already running. It ends
	 * where the next image of the pid begins.
	 */
	uint64_t start_time;
	uid_t uid;			/* its real uid when first seen, (uid_t)-1 if not known */
	/* Wall clock (ns) at which the tracker learnt of its start; 0 for one already running. */
	int64_t start_wall_ns;
	struct mapping *maps;	/* sorted by start, non-overlapping */
	size_t nr_maps;
	size_t cap_maps;
	/* Spaces sharing maps (a fork, until one side changes), or NULL: not shared. */
	unsigned int *maps_refs;
	unsigned int generation;	/* changes whenever maps do (for caches of unwind steps) */
	struct addr_space *next_all, *prev_all;
	/*
	 * When it ended, in the side-band records' clock: the exec or fork that
	 * began the pid's next image, or the exit of its last thread; 0: not
	 * known to have ended.
	 */
	uint64_t end_time;
	bool leader_exited;	/* its main thread exited: other threads may still run it */
	bool by_exec;		/* began with an exec of older's process (not a new process) */
	bool settled;		/* ended long enough ago that no sample of it is still to come */
	bool released;		/* settled, and its mappings freed */
};

struct proctrack;

struct proctrack *proctrack__new(void);
void proctrack__free(struct proctrack *pt);

/*
 * The current address space of pid. The first time a pid is seen, its
 * mappings are read from /proc/PID/maps (an empty space if it is gone).
 * Returns NULL only when out of memory.
 */
struct addr_space *proctrack__addr_space(struct proctrack *pt, pid_t pid);

/*
 * The images of pid that may have run at some time in [t0, t1] (times of
 * the side-band records' clock), newest first, at most max: one for a
 * sample with its exact time, maybe more for samples counted in the kernel
 * over an interval. A process's comm never selects one: any process can
 * take any name. Returns how many (0 only when out of memory).
 */
unsigned int proctrack__images(struct proctrack *pt, pid_t pid, uint64_t t0, uint64_t t1,
			       struct addr_space **out, unsigned int max);

/* Read the mappings of every process now, so that those that exit later still symbolize. */
int proctrack__snapshot(struct proctrack *pt, bool (*wanted)(pid_t pid, void *ctx), void *ctx);

/*
 * After side-band records were lost: read again the mappings of every
 * wanted process the tracker knows that still runs. Mappings it missed are
 * added; where /proc shows another image than the one tracked (a lost
 * exec), a new image begins at time (side-band clock). Returns how many
 * processes were read, or -errno.
 */
int proctrack__resync(struct proctrack *pt, bool (*wanted)(pid_t pid, void *ctx), void *ctx,
		      uint64_t time);

/* True once pid has an address space (seen in a sample or a record). */
bool proctrack__knows(struct proctrack *pt, pid_t pid);

/*
 * The wall-clock time (ns) of the side-band record about to be applied, 0
 * for "now": when a mapping or an image began. A file first looked for
 * after its process ended must have been changed no later than the mmap.
 */
void proctrack__set_record_time(struct proctrack *pt, int64_t wall_ns);

/* An mmap of pid (PERF_RECORD_MMAP/MMAP2); only executable mappings matter. */
int proctrack__mmap(struct proctrack *pt, pid_t pid, const struct mapping *m);
/*
 * The same for an MMAP2 record that carried the file's build-id (5.12+,
 * attr.build_id) instead of its device and inode (m has none): they are
 * taken from the file the process maps if it has that build-id. Without
 * such a file the mapping names no file and its frames print [unknown].
 */
int proctrack__mmap_build_id(struct proctrack *pt, pid_t pid, const struct mapping *m,
			     const struct build_id *bid);
/*
 * pid called exec (now named comm) at time: later samples belong to a new,
 * empty address space. time 0: not known (the new image covers all time).
 */
int proctrack__exec(struct proctrack *pt, pid_t pid, const char *comm, uint64_t time);
/* A new process pid forked from ppid at time: it starts with a copy of ppid's mappings. */
int proctrack__fork(struct proctrack *pt, pid_t pid, pid_t ppid, uint64_t time);
/* Thread tid of pid exited at time (PERF_RECORD_EXIT): the image ends with its last thread. */
int proctrack__exit(struct proctrack *pt, pid_t pid, pid_t tid, uint64_t time);

/*
 * Mark settled the images that ended more than grace_ns (side-band clock)
 * before the newest exec, fork or exit applied: every sample of them has
 * been read by then. A process whose main thread exited is settled only
 * once /proc no longer shows it. Returns how many were settled now.
 * Threads that exited as long ago lose their comm (a sample of one later
 * prints ":TID", as perf script does), pids whose image was freed as long
 * ago their entry (proctrack_counts).
 */
size_t proctrack__settle(struct proctrack *pt, uint64_t grace_ns);
/*
 * Free the mappings of the settled images, once every stack that names
 * them has its frames: a sample that names one later has [unknown] user
 * frames (pipeline's late_images). Returns how many images.
 */
size_t proctrack__release_settled(struct proctrack *pt);

/*
 * Free the images released so far, once nothing outside the tracker points
 * at them (every stack naming one has its frames): forget(ctx, as) is told
 * of each first, to drop what it keeps by the address. A pid whose current
 * image goes is left with a shared released image that maps nothing, so
 * that a sample that still names it counts as late rather than taking
 * whatever /proc shows at the pid now; a grace later its entry goes too,
 * and a sample dated before the pid's next image still counts as late.
 * Returns how many were freed.
 */
size_t proctrack__free_released(struct proctrack *pt,
				void (*forget)(void *ctx, const struct addr_space *as), void *ctx);

/*
 * What the tracker holds per thread and per pid, and what it let go of: a
 * thread's comm goes a grace after its exit (proctrack__settle), a pid's
 * entry a grace after its image was freed, its kind with its main thread.
 */
struct proctrack_counts {
	size_t procs, comms, kinds;	/* entries held now */
	size_t paths;			/* mapping paths pooled now (those of images not freed) */
	size_t retiring;		/* exits and freed images waiting for their grace */
	size_t forgotten_threads;	/* comms dropped */
	size_t forgotten_pids;		/* pid entries dropped */
	/* Handles to a process's /proc refused: its pid was another's by then (handover.c). */
	size_t handovers_refused;
	/* Bytes held (proctrack__counts_bytes): images and mappings, files and paths, entries. */
	size_t bytes;
};

void proctrack__counts(const struct proctrack *pt, struct proctrack_counts *out);
/* The same with bytes filled in: walks every image and file (-v's account at the end). */
void proctrack__counts_bytes(const struct proctrack *pt, struct proctrack_counts *out);

/*
 * Whether a task with id tid exited in (after, until] (records' clock),
 * by records written but maybe not applied yet; true too where records
 * were lost then (it cannot tell). A pid is another's only after its main
 * thread's exit.
 */
typedef bool (*proctrack_handover_fn)(void *ctx, pid_t tid, uint64_t after, uint64_t until);
/* The backend's watcher of such records (NULL: none; the records applied only). */
void proctrack__set_handover(struct proctrack *pt, proctrack_handover_fn fn, void *ctx);
/*
 * The records' clock now, to date a handle to /proc/PID right after it
 * was opened; 0 where the records' clock is not CLOCK_MONOTONIC.
 */
uint64_t proctrack__records_now(const struct proctrack *pt);
/* Whether proctrack__held_by is exact: a watcher, and records on CLOCK_MONOTONIC. */
bool proctrack__exact_handover(const struct proctrack *pt);
/*
 * Whether a handle to /proc/PID opened at opened (proctrack__records_now
 * read after the open; 0: not known) is image as's process: its main
 * thread had not exited (so no other task could have its pid) nor its
 * image ended by then. Refusals are counted (handovers_refused).
 */
bool proctrack__held_by(struct proctrack *pt, const struct addr_space *as, uint64_t opened);

/* Whether pid is a kernel thread (PF_KTHREAD in /proc/PID/stat), read once. */
bool proctrack__is_kernel_thread(struct proctrack *pt, pid_t pid);

/* The thread group of thread tid, from /proc/TID/status; 0 if it cannot be read. */
pid_t procfs__tgid_of(pid_t tid);

/* Thread comm: cached, else /proc/PID/task/TID/comm, else ":TID". */
const char *proctrack__comm(struct proctrack *pt, pid_t pid, pid_t tid);
/*
 * The same for a sample of tid at time (the records' clock; 0: not known):
 * a comm read from /proc is of the thread there when it was read, and is
 * not this sample's if that thread began after time (another process took
 * the number since, issue 32): ":TID" then, until the next call.
 */
const char *proctrack__comm_at(struct proctrack *pt, pid_t pid, pid_t tid, uint64_t time);
/*
 * What to add to a record's time for the wall clock, where records are on
 * CLOCK_MONOTONIC (use_clockid); 0 where they are not: comms are not dated.
 */
void proctrack__set_clock_to_wall(struct proctrack *pt, int64_t offset);
int proctrack__set_comm(struct proctrack *pt, pid_t tid, const char *comm);
/* A new thread tid inherits ptid's comm. */
int proctrack__inherit_comm(struct proctrack *pt, pid_t tid, pid_t ppid, pid_t ptid);

/*
 * The binary behind a mapping, checked to be the file that was mapped: the
 * fd the tracker opened at first sight (so a binary deleted, replaced, or
 * visible only inside a container since still reads), if it still has the
 * build-id (else size and mtime) it had then: *owned false, do not close.
 * Else m's path opened now, if it has m's device and inode, the ctime seen
 * at first sight and the same build-id: *owned true, close it. -1 if
 * neither: no names rather than another file's.
 */
int file_table__open(const struct file_table *ft, const struct mapping *m, bool *owned);

/* What the tracker learnt of a mapped file when it first saw it. */
struct file_identity {
	/*
	 * The tracker holds it open: the one file with its device and inode
	 * for the whole run, and checked again at each new mapping of it
	 * (rewritten in place: no identity any more). One not held open may
	 * be another file by now (the inode reused): only an open tells.
	 */
	bool kept;
	int64_t ctime_ns;	/* its ctime then; 0 if it could not be read */
	bool bid_known;		/* bid is the file's (from the mmap record or the file) */
	struct build_id bid;	/* size 0: the file has none */
};

/*
 * The identity of m's file, with no system call: false when the tracker
 * knows no such file, or two files had its device and inode in the run.
 */
bool file_table__identity(const struct file_table *ft, const struct mapping *m,
			  struct file_identity *out);

/* Whether m maps a file by path: not "//anon" (perf's name for anonymous memory), "[heap]", "". */
static inline bool mapping__is_file(const struct mapping *m)
{
	return m->path && m->path[0] == '/' && m->path[1] != '/';
}

/* Read maps in /proc/PID/maps format from a file into as (exported for tests). */
int addr_space__load_maps_file(struct addr_space *as, const char *path);
/* Insert m, trimming whatever it overlaps, as the kernel would. */
int addr_space__insert(struct addr_space *as, const struct mapping *m);
const struct mapping *addr_space__find(const struct addr_space *as, uint64_t addr);

#endif
