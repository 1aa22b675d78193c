/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to core/model (scripts/check-includes.sh keeps it there): the
 * resolver's state, shared by its two rooms, and what frames.c offers
 * resolve.c. resolve.c calls frames.c; frames.c calls nothing of
 * resolve.c's.
 */
#ifndef CORE_MODEL_RESOLVE_INTERNAL_H
#define CORE_MODEL_RESOLVE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lib/hashmap.h"
#include "core/model/profile.h"
#include "core/model/resolve.h"
#include "core/proc/proctrack.h"
#include "core/sym/symbolize.h"

/*
 * One distinct frame: a Location in pprof's terms. Zeroed whole: padding is
 * hashed. A user frame is one per address of an address space, or, where
 * no writer prints addresses (spec.frames_by_file), one per offset into a
 * file, whatever the process: every compiler process maps cc1 and libc at
 * its own addresses, but names them alike.
 */
struct frame_key {
	/*
	 * A user frame's file's identity (by_file, from the symbolizer) or
	 * &vdso_space; NULL for other frames.
	 */
	const void *space;
	uint64_t ip;		/* as sampled; by_file: its offset into the file (or the vdso) */
	uint8_t kind;
	uint8_t caller;
	uint8_t by_file;
	uint8_t zero;		/* keys are hashed and compared whole: no unnamed padding */
	/*
	 * A user frame not by_file: its address space's id + 1 (not its
	 * address: images of ended processes are freed, and another may take
	 * the address); 0 for other frames.
	 */
	uint32_t space_id;
};

/*
 * The file identity of recently seen mappings, so that keying a frame by
 * its file costs a look here rather than the symbolizer's file check (a
 * stat) each time. Direct-mapped: bounded, whatever the number of processes.
 */
#define FILE_MEMO_SLOTS 1024

struct file_memo {
	uint32_t space_id;		/* space_id() of the address space */
	unsigned int generation;	/* of its maps */
	uint64_t start, end, pgoff;
	const void *file;		/* NULL: a free slot */
};

struct resolver {
	struct symbolizer *sym;
	struct resolve_spec spec;
	struct profile prof;		/* frames, mappings, stacks and strings so far */
	struct frame_key *keys;		/* frame i's key (inlined calls have none) */
	size_t cap_keys;
	struct idtable frames;		/* frame indexes by key */
	struct hashmap mappings;	/* struct mapping_key * -> index + 1 */
	/*
	 * Stacks by the frames they hold, so that the many stacks that differ
	 * only by pid (a new process each) share one run of stack_frames.
	 */
	struct idtable runs;
	struct file_memo memo[FILE_MEMO_SLOTS];
	/* Ids of the agg entries prepare left raw: their names were not final yet. */
	size_t *pending;
	size_t nr_pending, cap_pending;
	struct interp_ops interp;	/* .name NULL: interpreted frames are left out */
	struct interp_merge_counts interp_counts;	/* Python's stacks */
	struct interp_merge_counts interp_counts_other;	/* those whose ops->label names one (node) */
	bool oom;
};

/* frames.c */
void resolver__init_frames(struct resolver *r);
/* Free the frames' keys, index, mappings and memo (the profile keeps the frames). */
void resolver__forget_frames(struct resolver *r);
/* s in the profile's strings (NULL stays NULL); out of memory sets r->oom. */
const char *resolver__intern(struct resolver *r, const char *s);
/* Indexes of frames, resolved now if they have not been; -ENOMEM. */
int resolver__kernel_frame_index(struct resolver *r, uint64_t ip, unsigned int index);
int resolver__user_frame_index(struct resolver *r, const struct addr_space *as, uint64_t ip,
			       unsigned int index);
/* The placeholder of a missed kernel or user stack. */
int resolver__missed_frame_index(struct resolver *r, bool kernel);
/*
 * A frame with no address (an interpreter's, a marker): one per kind,
 * name, file and line, whatever the process. -ENOMEM.
 */
int resolver__named_frame_index(struct resolver *r, enum frame_kind kind, const char *name,
				const char *file, const char *module, uint32_t line,
				uint32_t first_line);
/* mixed.c: a stack's interpreted frames put among its native user frames (idx[from..n)). */
int resolver__mix_interp(struct resolver *r, const struct agg_stack *st, uint32_t *idx,
			 unsigned int from, unsigned int n);
/* Whether a user frame's name is final (see frames.c). */
bool resolver__user_frame_final(const struct addr_space *as, uint64_t ip, unsigned int index);

#endif
