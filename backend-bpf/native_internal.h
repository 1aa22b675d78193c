/* SPDX-License-Identifier: GPL-2.0 */
/* What native_store.c, native_tables.c and native_procs.c share. */
#ifndef BPFBACKEND_NATIVE_INTERNAL_H
#define BPFBACKEND_NATIVE_INTERNAL_H

#include <elf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend-bpf/mapped_array.h"
#include "backend-bpf/native_parts.h"
#include "backend-bpf/native_store.h"
#include "core/lib/hashmap.h"
#include "core/proc/buildid.h"
#include "core/proc/proctrack.h"
#include "unwind/image.h"
#include "unwind/tables/tables.h"

/* A file as the maps know it: two mappings of one key share one table. */
struct table_key {
	uint64_t dev, ino;
	int64_t ctime_ns;
	struct build_id bid;
	bool vdso;
};

/* One distinct file (or the vdso): its way, and where its rows are when loaded. */
struct ntable {
	struct table_key key;
	uint32_t id;
	unsigned int refs;		/* processes mapping it */
	uint32_t mark;			/* the read that last counted it (one ref a process) */
	enum native_way way;
	char why[96];
	char *path;			/* the first path seen */
	uid_t owner;			/* the file's (0: root's, or the vdso) */
	Elf64_Phdr loads[IMAGE_MAX_LOADS];	/* for the load bias of each mapping */
	unsigned int nr_loads;
	struct unwind_fp_share fp;
	uint32_t nr_rows, nr_rules;	/* compiled */
	uint32_t first;			/* loaded: its rows in native_rows */
	uint32_t *rule_ids;		/* loaded: host-wide id of each of its rules */
	uint32_t *index_pages;		/* loaded: its native_index keys' pages */
	uint32_t nr_index;
	uint64_t bytes, compile_ns;
	bool no_room;			/* refused for the maps' room: tried again, not kept */
	bool kept;			/* refs 0, kept for s->grace_ms from idle_ms */
	int64_t idle_ms;
	uint64_t idle_seq;		/* the order tables were kept in: the oldest gives way first */
};

struct nproc {
	pid_t tgid;
	uint32_t gen;
	int64_t next_ms;		/* a poll reads it again from then on */
	uint64_t copies_until_ns;	/* native_proc's */
	/* Its start (/proc/PID/stat field 22) and executable when read: what a sweep compares. */
	uint64_t start_ticks;
	dev_t exe_dev;
	ino_t exe_ino;
	struct native_page_entry *entries;	/* in native_pages, sorted */
	size_t nr_entries;
	struct ntable **tables;		/* one reference each */
	size_t nr_tables;
	/*
	 * Left to stack copies (copies_only): nothing in the maps but its
	 * native_procs entry, which says so (the program sends its every
	 * sample as a copy, and notes it no more); a sweep takes it out with
	 * the process.
	 */
	bool copies_only;
};

struct native_store {
	struct native_maps_fds fds;
	struct mapped_array rows_mem, rules_mem;
	struct native_map_sizes sizes;
	uint64_t budget;
	struct proctrack *pt;
	struct native_ranges rows;
	struct native_rules rules;
	struct hashmap tables;		/* struct table_key -> struct ntable */
	struct ntable *vdso;
	struct hashmap owners;		/* uid_t -> struct owner_use: loaded tables of users' files */
	struct hashmap procs;		/* pid_t -> struct nproc */
	struct hashmap polled;		/* pid_t -> struct polled: not tracked, read recently */
	uint32_t next_table;
	uint32_t mark;
	uint32_t epoch;			/* native_epoch's */
	unsigned int index_used, pages_used;
	int64_t grace_ms;		/* how long a loaded table no process maps is kept */
	unsigned int idle;		/* tables kept so */
	uint64_t idle_seq;
	bool no_batch;			/* BPF_MAP_UPDATE_BATCH refused (before 5.6) */
	bool pending;			/* native_unknown holds pids a poll did not reach */
	int64_t next_poll_ms;		/* when they are due */
	struct native_store_stats st;
	/* Processes never loaded: their samples stay stack copies (native_store__copies_only). */
	bool (*copies_only)(void *ctx, pid_t tgid);
	void *copies_only_ctx;
	unsigned int nr_copies_only;	/* of procs, those */
	struct nproc *reading;		/* the tracked process a read is reading, if any */
};

/* native_tables.c */
void native_tables__init(struct native_store *s);
/*
 * The table of m (a mapping of process dirfd, tracked as as, NULL without a
 * tracker), with a reference: 0 with *out, or *out NULL where the file was
 * refused (trust rules, not a regular file). -ESRCH: the process is gone.
 */
int ntable__get(struct native_store *s, int dirfd, const struct addr_space *as,
		const struct mapping *m, struct ntable **out);
int ntable__get_vdso(struct native_store *s, struct ntable **out);
/*
 * A reference let go. A loaded table no process maps any more is kept for
 * s->grace_ms, and taken again by the next process that maps it (a compile
 * loop's cc1 exits and starts again many times a second: its 255,000 rows
 * were compiled each time), unless its room is needed first.
 */
void ntable__put(struct native_store *s, struct ntable *t);
/* Tables kept past their grace dropped. */
void ntable__drop_idle(struct native_store *s);
void ntable__free_all(struct native_store *s);
uint64_t native_store__bytes_used(const struct native_store *s);

/* native_hold.c: the processes' windows of copies held over a compile (begin returns its start). */
uint64_t native_hold__begin(struct native_store *s);
void native_hold__end(struct native_store *s, uint64_t t0);

/* native_procs.c */
void nproc__free_all(struct native_store *s);

#endif
