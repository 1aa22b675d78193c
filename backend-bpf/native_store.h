/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The user-space store behind the in-kernel unwinder (issue 45): it fills
 * the maps of bpf/native_maps.h. Per process, the 64 KiB pages of its
 * executable file mappings (native_pages), then native_procs[tgid]; per
 * distinct file (by identity: device, inode, ctime, build-id), its table
 * compiled once by unwind/tables/ and loaded as one contiguous range of
 * native_rows, its page index and its rules, interned host-wide into
 * native_rules. Tables no process maps any more are dropped and their rows
 * reused. Everything a process maps is hostile input; a table that does
 * not fit the budget is not loaded at all (its code is NO_TABLE).
 */
#ifndef BPFBACKEND_NATIVE_STORE_H
#define BPFBACKEND_NATIVE_STORE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpf/native_maps.h"

struct proctrack;

/* The maps, created (or loaded) by the caller. */
struct native_maps_fds {
	int procs;	/* HASH: __u32 tgid -> struct native_proc (bpf/native_maps.h) */
	int pages;	/* HASH: struct native_page_key -> struct native_page */
	int index;	/* HASH: struct native_index_key -> struct native_range */
	int rows;	/* ARRAY: __u32 */
	int rules;	/* ARRAY: struct native_rule */
	int unknown;	/* HASH: __u32 tgid -> __u32 (any value): processes to (re)read */
	int epoch;	/* ARRAY of one __u32: bumped after pages changed (native_cache's entries go) */
};

struct native_store_opts {
	uint64_t budget_bytes;		/* rows + rules + index; 0: 64 MiB */
	unsigned int max_rows, max_rules;	/* the ARRAY maps' sizes; 0: the defaults below */
	/*
	 * A run of a few processes (-p, -L, a command and its children): the
	 * NATIVE_FEW_ sizes, not the host's. The kernel allocates every map
	 * whole at its creation (the program's hash maps must be preallocated,
	 * and an ARRAY is): 52 MiB for the host's sizes, 19 ms of a run's CPU.
	 */
	bool few;
	/* How long a loaded table no process maps is kept: 0, NATIVE_TABLE_GRACE_MS; < 0, none. */
	int grace_ms;
};

#define NATIVE_DEFAULT_BUDGET (64ull << 20)
#define NATIVE_TABLE_GRACE_MS 10000
#define NATIVE_DEFAULT_ROWS (4u << 20)		/* 32 MiB: ~280 libcs, 8 libLLVMs */
#define NATIVE_DEFAULT_RULES (1u << 16)		/* a row's rule is a u16 */
#define NATIVE_DEFAULT_INDEX (1u << 16)		/* 64 KiB pages of code: 4 GiB */
#define NATIVE_DEFAULT_PAGES (1u << 17)		/* ~150 a process */
#define NATIVE_DEFAULT_PROCS (1u << 14)
#define NATIVE_DEFAULT_UNKNOWN 4096
/* A row is 8 bytes in the kernel (an ARRAY rounds a value up to 8): 8 MiB, ~70 libcs, 2 libLLVMs. */
#define NATIVE_FEW_ROWS (1u << 20)
#define NATIVE_FEW_INDEX (1u << 14)
#define NATIVE_FEW_PAGES (1u << 14)		/* ~150 processes */
#define NATIVE_FEW_PROCS (1u << 12)
/*
 * The tables of files one user (not root) owns may take this share at most
 * of each of rows, rules, index entries and the budget: copies of large
 * libraries, or a crafted file of 65,535 distinct rules, cannot leave
 * every other process without tables.
 */
#define NATIVE_OWNER_SHARE 4
/* A process with more native_pages entries than this is refused (-E2BIG): hostile. */
#define NATIVE_MAX_PROC_PAGES (1u << 14)

/* max_entries of each map, for the loader before load (from the same opts as the store). */
struct native_map_sizes {
	unsigned int procs, pages, index, rows, rules, unknown;
};
void native_store__map_sizes(const struct native_store_opts *o, struct native_map_sizes *out);

struct native_store_stats {
	unsigned int tables;		/* distinct files (and the vdso) known, loaded or not */
	unsigned int tables_loaded;	/* of them, with rows in native_rows */
	unsigned int tables_fp;		/* of them, walked by frame pointers instead */
	unsigned int tables_idle;	/* of them, mapped by no process: kept for a grace */
	unsigned int compiled;		/* compiles, all tables */
	unsigned int taken_again;	/* kept tables a process mapped again: compiles saved */
	uint64_t rows;			/* native_rows in use */
	unsigned int rules;		/* native_rules in use (slot 0 included) */
	unsigned int index;		/* native_index entries */
	unsigned int pages;		/* native_pages entries */
	uint64_t bytes;			/* rows * 4 + rules * 12 + index * 16 */
	unsigned int processes;
	unsigned int budget_refusals;	/* tables not loaded: rows, rules, index or bytes */
	unsigned int owner_refusals;	/* of them, over their owner's share (NATIVE_OWNER_SHARE) */
	uint64_t compile_ns;		/* unwind_table__compile, all tables */
	unsigned int trust_refusals;	/* files refused by the trust rules (not the file mapped) */
	unsigned int rate_limited;	/* poll_unknown re-reads put off */
	unsigned int deferred;		/* pids a poll over its budget left to a later one */
	/* Reads that left a process out (it is walked by frame pointers, unmarked): */
	unsigned int too_big;		/* more mappings or page entries than NATIVE_MAX_PROC_PAGES */
	unsigned int no_room;		/* native_pages full */
	unsigned int failed;		/* anything else but its exit (memory, a map write) */
	unsigned int swept;		/* processes dropped by a sweep: exited, or their pid reused */
	unsigned int copies_only;	/* processes left to stack copies (copies_only) */
	unsigned int execs;		/* processes read again by a sweep: they ran exec */
	bool mapped;			/* rows and rules written in place (BPF_F_MMAPABLE, 5.5+) */
};

enum native_way {
	NATIVE_WAY_TABLE,	/* rows loaded */
	NATIVE_WAY_FP,		/* keeps frame pointers: walked by rbp */
	NATIVE_WAY_NONE,	/* no usable table: NO_TABLE (frame pointers, marked) */
};

struct native_binary_info {
	enum native_way way;
	const char *why;		/* a phrase for -v */
	unsigned int table;		/* its table id */
	unsigned int processes;		/* mapping it now */
	uint32_t functions, rbp_frames;	/* unwind_table__fp_share */
	uint64_t code_bytes, rbp_bytes;
	uint32_t rows, rules;		/* the compiled table's */
	uint64_t bytes;			/* what it takes in the maps (0 unless loaded) */
	uint64_t compile_ns;
};

struct native_store;

struct native_store *native_store__new(const struct native_maps_fds *fds,
				       const struct native_store_opts *o, struct proctrack *pt);
/* Read its maps, load tables, fill native_pages, then native_procs[tgid]. 0 or -errno (-ESRCH). */
int native_store__add_process(struct native_store *s, pid_t tgid);
/* Its mappings changed (dlopen, exec): read again, add and remove pages. */
int native_store__refresh_process(struct native_store *s, pid_t tgid);
/* Delete its entries; tables no process maps any more are dropped. */
void native_store__remove_process(struct native_store *s, pid_t tgid);
/*
 * Read and empty native_unknown: add each tgid not known, refresh each
 * known one. A pid is read again NATIVE_REREAD_MS after its last read at
 * the soonest, and NATIVE_REREAD_COST times that read's cost (its
 * compiling aside) at the soonest too, whether it was read or refused: a
 * process whose read is dear (many mappings) or fails (too many) cannot
 * keep the store busy by being noted at every sample. Returns how many
 * were read.
 */
#define NATIVE_REREAD_MS 100
#define NATIVE_REREAD_COST 10
/* The first reads of a tracked process come NATIVE_REREAD_EARLY_MS apart, whatever they cost. */
#define NATIVE_REREAD_EARLY 4
#define NATIVE_REREAD_EARLY_MS 10
/*
 * How long after a read that found new pages a sample whose leaf is in no
 * known mapping goes as a stack copy (struct native_proc): past a library's
 * compile under emulation (a few hundred ms), short of a JIT's life.
 */
#define NATIVE_LEAF_COPIES_NS 1000000000ull
/*
 * How far ahead a table's compile holds those windows while it runs
 * (native_hold.c): past libLLVM's compile under emulation. A longer
 * compile lets them lapse, counted as before.
 */
#define NATIVE_COMPILE_HOLD_NS 10000000000ull
/* Tests: a process read is not read again before this many ms (0: the rules above). */
extern unsigned int native_store__test_reread_ms;
/*
 * A poll reads for NATIVE_POLL_BUDGET_MS at most (a storm of pids, each
 * with thousands of mappings, would hold the run for minutes): the pids
 * it did not reach stay in native_unknown, pending, for a poll
 * NATIVE_POLL_GAP times the time spent later (native_store__pending).
 */
#define NATIVE_POLL_BUDGET_MS 50
#define NATIVE_POLL_GAP 4
int native_store__poll_unknown(struct native_store *s);
/* Whether pids left by a poll over its budget are due to be read now. */
bool native_store__pending(const struct native_store *s);
/* Whether a poll left pids noted for a later one, due or not. */
bool native_store__deferred(const struct native_store *s);
/*
 * Check every tracked process against /proc (the caller does this about
 * once a second): the exited and those whose pid is another's now are
 * dropped, those that ran exec read again. Returns how many changed.
 */
int native_store__sweep(struct native_store *s);
/*
 * The processes for which fn(ctx, tgid) says so are never loaded (one
 * loaded already is dropped at its next read): their native_procs entry
 * says copies_only, and the program sends their every sample to the run's
 * copies (first_copies.c), system-wide too. For Node.js, whose JavaScript
 * frames are read from the copy (issue 48: no in-kernel walk of V8's
 * frames yet).
 */
void native_store__copies_only(struct native_store *s, bool (*fn)(void *ctx, pid_t tgid),
			       void *ctx);
void native_store__stats(const struct native_store *s, struct native_store_stats *out);
void native_store__each_binary(const struct native_store *s,
			       void (*fn)(void *arg, const char *path,
					  const struct native_binary_info *info),
			       void *arg);
void native_store__free(struct native_store *s);

#endif
