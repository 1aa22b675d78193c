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
#include "core/agg/sample.h"

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

/* One address space: a process between two execs. Never freed before the tracker. */
struct addr_space {
	struct file_table *files;	/* the tracker's open binaries; NULL outside a tracker */
	pid_t pid;
	unsigned int id;	/* unique per tracker, for stable ordering */
	char comm[TASK_COMM_LEN];	/* the process's comm when this image began */
	struct addr_space *older;	/* the same pid's image before its last exec */
	struct mapping *maps;	/* sorted by start, non-overlapping */
	size_t nr_maps;
	size_t cap_maps;
	unsigned int generation;	/* changes whenever maps do (for caches of unwind steps) */
	struct addr_space *next_all;
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
 * The address space of pid that ran under comm: samples counted in the
 * kernel carry no time, but an exec usually changes comm. Falls back to the
 * current one.
 */
struct addr_space *proctrack__addr_space_for_comm(struct proctrack *pt, pid_t pid,
						  const char *comm);

/* Read the mappings of every process now, so that those that exit later still symbolize. */
int proctrack__snapshot(struct proctrack *pt, bool (*wanted)(pid_t pid, void *ctx), void *ctx);

/* True once pid has an address space (seen in a sample or a record). */
bool proctrack__knows(struct proctrack *pt, pid_t pid);

/* An mmap of pid (PERF_RECORD_MMAP/MMAP2); only executable mappings matter. */
int proctrack__mmap(struct proctrack *pt, pid_t pid, const struct mapping *m);
/* pid called exec (now named comm): later samples belong to a new, empty address space. */
int proctrack__exec(struct proctrack *pt, pid_t pid, const char *comm);
/* A new process pid forked from ppid: it starts with a copy of ppid's mappings. */
int proctrack__fork(struct proctrack *pt, pid_t pid, pid_t ppid);

/* Whether pid is a kernel thread (PF_KTHREAD in /proc/PID/stat), read once. */
bool proctrack__is_kernel_thread(struct proctrack *pt, pid_t pid);

/* Thread comm: cached, else /proc/PID/task/TID/comm, else ":TID". */
const char *proctrack__comm(struct proctrack *pt, pid_t pid, pid_t tid);
int proctrack__set_comm(struct proctrack *pt, pid_t tid, const char *comm);
/* A new thread tid inherits ptid's comm. */
int proctrack__inherit_comm(struct proctrack *pt, pid_t tid, pid_t ppid, pid_t ptid);

/*
 * The binary behind a mapping, opened when the mapping was first seen (so a
 * binary deleted, replaced, or visible only inside a container since still
 * reads): an fd owned by the tracker, or -1.
 */
int file_table__fd(const struct file_table *ft, const struct mapping *m);
/*
 * The same fd if the tracker has one (*owned false), else m's path opened
 * now and checked to be the file mapped (*owned true: close it). -1 if neither.
 */
int file_table__open(const struct file_table *ft, const struct mapping *m, bool *owned);

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
