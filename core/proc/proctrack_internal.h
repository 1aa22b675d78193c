/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to core/proc (scripts/check-includes.sh keeps it there): the
 * tracker's state, which its rooms share, and what each room offers the
 * others. Calls between rooms go one way (README.md): no two call each
 * other.
 */
#ifndef CORE_PROC_PROCTRACK_INTERNAL_H
#define CORE_PROC_PROCTRACK_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/lib/hashmap.h"
#include "core/proc/proctrack.h"
#include "core/proc/retire.h"

struct proc {
	pid_t pid;
	struct addr_space *as;
};

struct thread_comm {
	pid_t tid;
	char comm[TASK_COMM_LEN];
	uint64_t seq;		/* the tracker's comm counter when set: dates it against an exit */
	int64_t began_wall_ns;	/* read from /proc: when the thread read began (0: not known) */
};

struct file_table {
	struct hashmap files;	/* open_file -> open_file */
	unsigned int nr_open;
	unsigned int max_open;
	/*
	 * The paths of the tracker's mappings, each kept once (string ->
	 * struct pooled_path, counted): a mapping costs its 56 bytes, not its
	 * path again, and address spaces can share their arrays.
	 */
	struct hashmap paths;
	struct hashmap by_build_id;	/* bid_entry -> itself */
};

struct proctrack {
	struct file_table files;
	struct hashmap procs;		/* pid -> struct proc */
	struct hashmap comms;		/* tid -> struct thread_comm */
	struct hashmap kinds;		/* pid -> KIND_USER or KIND_KERNEL (pid is the key) */
	struct addr_space *all;		/* every space ever made, for freeing */
	/* Images that ended and still hold their mappings: settled, then released. */
	struct addr_space **ended;
	size_t nr_ended, cap_ended;
	/* Released images, to be freed (proctrack__free_released). */
	struct addr_space **released;
	size_t nr_released, cap_released;
	/* What a pid whose image was freed points at: released, mapping nothing. */
	struct addr_space *gone;
	uint64_t newest_time;		/* of the execs, forks and exits applied */
	/*
	 * Threads that exited and pids whose image was freed: their entries
	 * (comm, kind, the pid's) go a grace later (proctrack__settle).
	 */
	struct retire_queue retiring;
	uint64_t comm_seq;		/* counts comms set, to tell a reused tid's from the old one's */
	/*
	 * The latest time a forgotten pid's process may have run: a sample
	 * dated before it and before every image its pid has now may be a
	 * forgotten process's, so it is late, not the current one's.
	 */
	uint64_t forgot_until;
	struct proctrack_counts counts;
	int64_t record_wall_ns;		/* of the record being applied; 0: now */
	int64_t clock_to_wall_ns;	/* record time to wall clock (0: not known) */
	char comm_unknown[TASK_COMM_LEN];	/* proctrack__comm_at's placeholder */
	/* The backend's watcher of exits and forks not applied yet (handover.c), or NULL. */
	proctrack_handover_fn handover;
	void *handover_ctx;
	unsigned int next_id;
};

/* files.c: bytes of the file table (entries, pooled paths), for proctrack__counts_bytes. */
size_t file_table__bytes(const struct file_table *ft);

/* addrspace.c */
void addr_space__free(struct addr_space *as);
/* Drop as's hold on its array of mappings (shared after a fork until one side changes). */
void addr_space__release_maps(struct addr_space *as);
/* as's mappings become maps (sorted, disjoint, its own): nr of them in room for cap. */
void addr_space__adopt_maps(struct addr_space *as, struct mapping *maps, size_t nr, size_t cap);
/* Whether cur maps m as m says (same place, file and offset). */
bool addr_space__maps_same(const struct addr_space *cur, const struct mapping *m);
/* Whether m overlaps a mapping of cur that is of another file or offset. */
bool addr_space__maps_other(const struct addr_space *cur, const struct mapping *m);

/* files.c */
void file_table__init(struct file_table *ft);
void file_table__fini(struct file_table *ft);
/*
 * path in ft's pool (added if new), held once more, or NULL when out of
 * memory; each hold is let go by file_table__unpool_path.
 */
char *file_table__pool_path(struct file_table *ft, const char *path);
/* Let go of a hold on pooled path (as file_table__pool_path returned it): the last frees it. */
void file_table__unpool_path(struct file_table *ft, const char *path);
size_t file_table__pooled_paths(const struct file_table *ft);
/*
 * Open the binary of m, mapped by image as, now, while its process may
 * still be alive, and learn what identifies it (rec: the build-id of an
 * mmap record of 5.12+, or NULL).
 */
void proctrack__open_binary(struct proctrack *pt, const struct addr_space *as, struct mapping *m,
			    const struct build_id *rec);

/* procfs.c */
/* What /proc/PID/status says of a process; uid (uid_t)-1 and tgid 0 where it is gone. */
struct proc_status {
	uid_t uid;	/* real */
	pid_t tgid;	/* pid itself for a process; another for a thread's id */
	char state;	/* 'Z' for a zombie, 'X' dead */
};

void procfs__read_status(pid_t pid, struct proc_status *st);
/* The real uid of a running process (/proc/PID/status), or (uid_t)-1. */
uid_t procfs__read_uid(pid_t pid);
bool procfs__read_comm(pid_t pid, pid_t tid, char *buf, size_t len, int64_t *began_wall_ns);
enum { KIND_USER = 1, KIND_KERNEL };
/* Whether pid is a kernel thread, from /proc/PID/stat; a process gone is taken for a user one. */
int procfs__read_kind(pid_t pid);

/* lifetime.c */
struct proc *proctrack__find_proc(struct proctrack *pt, pid_t pid);
/* A new image of pid from time on, named as /proc names the process now. */
int proctrack__read_image_start(struct proctrack *pt, pid_t pid, uint64_t time);
/* The image pids whose own was freed point at (made once); NULL when out of memory. */
struct addr_space *proctrack__gone_space(struct proctrack *pt);
/* Append as to a growing list of images; 0 or -ENOMEM. */
int image_list__push(struct addr_space ***list, size_t *nr, size_t *cap, struct addr_space *as);

/* comm.c */
struct thread_comm *proctrack__find_comm(struct proctrack *pt, pid_t tid);
/*
 * tid's comm as /proc gave it when its process was first seen (began: when
 * that thread began), kept unless one is known: the name of its samples
 * from then on, whoever has the tid when they are read. 0 or -ENOMEM.
 */
int proctrack__keep_read_comm(struct proctrack *pt, pid_t tid, const char *comm, int64_t began);

#endif
