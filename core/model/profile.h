/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The resolved profile: what every writer reads, and all it reads. Shaped
 * like pprof's profile.proto: stacks (samples) of frames (locations) with
 * their symbols (functions) and mappings, and one value per column (sample
 * type). Self-contained: its strings live in its own pool, so a profile can
 * come from a run or from a file.
 */
#ifndef CORE_MODEL_PROFILE_H
#define CORE_MODEL_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/lib/hashmap.h"

#define PROFILE_MAX_COLUMNS 3

enum frame_kind {
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_MISSED,		/* a stack the kernel could not store: a placeholder */
	FRAME_INLINE,		/* a function inlined where the next frame (toward the root) is */
	/*
	 * An interpreter's frame (Python): a function of the program the
	 * interpreter runs, with no address of its own; name, file and line
	 * from its code object, module its file as reports show it.
	 */
	FRAME_INTERP,
};

struct profile_mapping {
	uint64_t start, limit;	/* [start, limit) */
	uint64_t offset;	/* file offset of start */
	const char *file;	/* path, "[kernel.kallsyms]", "//anon", ... */
	const char *build_id;	/* hex, or NULL */
};

struct profile_frame {
	uint64_t address;	/* as sampled: a caller's frame holds a return address */
	uint64_t offset;	/* of the looked-up address into the function */
	const char *name;	/* the function; NULL when unknown */
	const char *module;	/* file base name or kernel module; NULL when unknown */
	uint32_t mapping;	/* 1 + index into profile.mappings, 0 for none */
	uint8_t kind;		/* enum frame_kind */
	bool caller;		/* not the leaf: looked up at address - 1 */
	/*
	 * Functions inlined at this address (from DWARF): the nr_inline frames
	 * just before this one in profile.frames, innermost first, of kind
	 * FRAME_INLINE and the same address. Stacks hold them only with --inline;
	 * pprof writes them as a Location's extra Lines whether or not.
	 */
	uint8_t nr_inline;
	const char *file;	/* source file of the address in this function; NULL if unknown */
	uint32_t line;		/* its line there, 0 if unknown */
	const char *func_file;	/* where the function is defined; NULL if unknown */
	uint32_t func_line;	/* the line it starts at (pprof's start_line), 0 if unknown */
};

struct profile_stack {
	const char *comm;
	pid_t pid;
	pid_t tid;		/* 0 unless threads are kept apart */
	uint32_t first;		/* index into profile.stack_frames */
	uint16_t nr_kernel;	/* kernel frames, leaf first, then */
	uint16_t nr_user;	/* user frames, leaf first */
	bool kernel_missed;	/* the kernel part is one FRAME_MISSED frame */
	bool user_missed;
	/* Of the missed parts, withheld by the kernel on purpose (perf_event_paranoid): not lost. */
	bool kernel_withheld;
	bool user_withheld;
	bool collision;		/* a part was missed to a stack-map collision (-EEXIST) */
	bool map_full;		/* a part was missed because the stack map was full (-ENOMEM) */
	uint64_t values[PROFILE_MAX_COLUMNS];
};

struct profile_column {
	const char *type;	/* "samples", "cpu", "off-cpu" (pprof's sample types) */
	const char *unit;	/* "count", "nanoseconds", "microseconds" */
	bool in_text;		/* summed into the one number text formats print */
};

struct profile {
	struct profile_column columns[PROFILE_MAX_COLUMNS];
	unsigned int nr_columns;
	unsigned int period_column;	/* pprof's period_type */
	bool differential;		/* two profiles compared: columns "base" and "new" */
	uint64_t period;		/* in that column's unit, per sample; 0 if none */

	struct profile_frame *frames;
	size_t nr_frames, cap_frames;
	uint32_t *stack_frames;		/* each stack's frame indexes, one run per stack */
	size_t nr_stack_frames, cap_stack_frames;
	struct profile_stack *stacks;
	size_t nr_stacks, cap_stacks;
	struct profile_mapping *mappings;
	size_t nr_mappings, cap_mappings;

	uint64_t start_ns;		/* wall clock at the start */
	uint64_t duration_ns;
	const char *title;		/* one line, for flame graphs */
	const char *comment;		/* what was profiled, for pprof */

	struct hashmap strings;		/* the pool: string -> itself */
};

void profile__init(struct profile *p);
void profile__fini(struct profile *p);

/* s copied into the profile's pool (the same pointer for equal strings); NULL when out of memory. */
const char *profile__intern(struct profile *p, const char *s);

/* Append; return the new index, or -ENOMEM. */
int profile__add_frame(struct profile *p, const struct profile_frame *f);
int profile__add_mapping(struct profile *p, const struct profile_mapping *m);
/* A stack of nr frames (indexes into frames, kernel leaf..root then user leaf..root). */
int profile__add_stack(struct profile *p, const struct profile_stack *s, const uint32_t *frames,
		       unsigned int nr);

static inline const struct profile_frame *profile__frame(const struct profile *p,
							 const struct profile_stack *s,
							 unsigned int i)
{
	return &p->frames[p->stack_frames[s->first + i]];
}

/*
 * The module that names a user frame no symbol named in folded stacks, flame
 * graphs and pprof, printed "[module]": the base name of the file holding its
 * address ("[libcrypto.so.3]"), as FlameGraph's stackcollapse-perf.pl names
 * perf's "[unknown] (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)" and pprof a
 * Location without Lines. NULL for a frame with a name, and for one no file
 * holds (anonymous or JIT memory, an address outside every mapping, a marker):
 * "[unknown]" as in bcc's report.
 */
static inline const char *profile_frame__unnamed_module(const struct profile_frame *f)
{
	return f->kind == FRAME_USER && !f->name ? f->module : NULL;
}

/*
 * A stack whose frames are already in stack_frames: s->first and the
 * s->nr_kernel + s->nr_user frames from there (another stack's run).
 */
int profile__add_stack_run(struct profile *p, const struct profile_stack *s);

/* The number text formats print for a stack: the sum of the in_text columns. */
uint64_t profile__text_value(const struct profile *p, const struct profile_stack *s);

/* Whether a stack's kernel (user) part was lost: missed, and not withheld on purpose. */
static inline bool profile_stack__kernel_lost(const struct profile_stack *s)
{
	return s->kernel_missed && !s->kernel_withheld;
}

static inline bool profile_stack__user_lost(const struct profile_stack *s)
{
	return s->user_missed && !s->user_withheld;
}

/*
 * Missed parts of stacks (bcc's "stack traces could not be displayed"), and
 * whether any was a collision (-EEXIST) or a full map (-ENOMEM).
 */
uint64_t profile__missed_stacks(const struct profile *p, bool *collision, bool *map_full);

#endif
