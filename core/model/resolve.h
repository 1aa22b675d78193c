/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Turns counted raw stacks (struct agg) into the resolved profile, once:
 * every distinct frame is symbolized one time, whatever the number of
 * stacks and writers that show it. Frames whose names can no longer change
 * are resolved while sampling goes on, a little after each drain, so the
 * report at the end has little left to do.
 */
#ifndef CORE_MODEL_RESOLVE_H
#define CORE_MODEL_RESOLVE_H

#include <stdbool.h>
#include <stdint.h>

#include "core/agg/agg.h"
#include "core/model/profile.h"
#include "core/sym/symbolize.h"

/* What a profile measures, which fixes its columns. */
enum profile_kind {
	PROFILE_ON_CPU,		/* samples (and CPU time, samples x period) */
	PROFILE_OFF_CPU,	/* microseconds switched out */
	PROFILE_WALL,		/* on-CPU and off-CPU microseconds, side by side */
};

/* What the profile's stacks and columns hold. */
struct resolve_spec {
	enum profile_kind kind;
	bool user_frames;	/* false with -K */
	bool kernel_frames;	/* false with -U */
	uint64_t period_ns;	/* what one on-CPU sample stands for */
	bool source_lines;	/* user frames get file, line and inlined calls from DWARF */
	bool inline_frames;	/* --inline: stacks hold the inlined calls as frames */
	/*
	 * No writer will print a user frame's address or mapping (not pprof,
	 * not -A): frames in files are one per file and offset, shared by
	 * every process that maps the file, and have no mapping.
	 */
	bool frames_by_file;
};

/* What is known of the run only at its end. */
struct resolve_meta {
	uint64_t start_ns;	/* wall clock at the start */
	uint64_t duration_ns;
	const char *title;	/* copied */
	const char *comment;	/* copied; may be NULL */
};

struct resolver;

/* What an interpreter's frame is called, as interp/ reads it from the process. */
struct interp_name {
	const char *name;	/* the function (its qualified name where the interpreter has one) */
	const char *file;	/* its source file, in full */
	const char *short_file;	/* the same as reports show it */
	uint32_t line;		/* of the frame's position; 0 when unknown */
	uint32_t first_line;	/* where the function starts */
};

/*
 * How the model places and names a stack's interpreted frames (struct
 * interp_frame, leaf first): the run gives it (app/run, over interp/).
 * Each is asked of the stack's image as.
 */
struct interp_ops {
	void *ctx;
	/*
	 * Before the frames of one stack are named (may be NULL): what is read
	 * for them is read from the process now, not from reads of earlier
	 * stacks (its memory may have changed since).
	 */
	void (*begin)(void *ctx, const struct addr_space *as);
	/*
	 * The name of f: 0, or -errno: -ESTALE when the code f ran is gone
	 * (freed, its memory maybe another's: [python: code object freed]),
	 * else unreadable ([python: unreadable]).
	 */
	int (*name)(void *ctx, const struct addr_space *as, const struct interp_frame *f,
		    struct interp_name *out);
	/* Whether f is a marker of the interpreter's, not a function (it is left out). */
	bool (*is_marker)(void *ctx, const struct addr_space *as, const struct interp_frame *f);
	/* Whether frames[i] is the last of what one eval loop call ran (see interp_merge.h). */
	bool (*run_end)(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
			unsigned int i, unsigned int n);
	/* The native_role (interp_merge.h) of the user frame at ip (as sampled), named name. */
	uint8_t (*role)(void *ctx, const struct addr_space *as, uint64_t ip, const char *name);
	bool keep_native;	/* --python raw: every native frame stays */
	/*
	 * Optional, where one run serves several interpreters: the one of
	 * image as, as markers name it ("python" when NULL: "[python:
	 * unreadable]"; a name also keeps its stacks' counts apart from
	 * Python's), and whether its native frames all stay (else keep_native
	 * says).
	 */
	const char *(*label)(void *ctx, const struct addr_space *as);
	bool (*raw)(void *ctx, const struct addr_space *as);
};

/*
 * sym must outlive the resolver; with source_lines or inline_frames, it is
 * told to read DWARF. NULL when out of memory.
 */
struct resolver *resolver__new(struct symbolizer *sym, const struct resolve_spec *spec);
void resolver__free(struct resolver *r);
/* Interpreted frames are named and placed with ops (copied); without, they are left out. */
void resolver__set_interp(struct resolver *r, const struct interp_ops *ops);
/* The ops set (all NULL: none), for a run that puts another interpreter's in front of them. */
void resolver__get_interp(const struct resolver *r, struct interp_ops *ops);

/* How many stacks had interpreted frames placed without an eval loop call among their native frames, etc. */
struct interp_merge_counts {
	uint64_t stacks;	/* stacks with interpreted frames */
	uint64_t no_eval;	/* placed under the native leaf: no eval loop call among the native frames */
	uint64_t mismatched;	/* more eval calls than runs of frames, or fewer */
	uint64_t unnamed;	/* frames that could not be named */
	uint64_t freed;		/* frames whose code object was freed before naming */
	/* frames of a process that ended (or whose pid another took) before they were named */
	uint64_t ended;
};
void resolver__interp_counts(const struct resolver *r, struct interp_merge_counts *out);
/* The same of the stacks whose interpreter ops->label names (Node's): kept apart from Python's. */
void resolver__interp_counts_other(const struct resolver *r, struct interp_merge_counts *out);

/*
 * Resolve the stacks counted since the last call, for about budget_ms:
 * those whose frames' names are final (user frames in a file or the vdso
 * whose mapping is known, kernel frames) become profile stacks now, and
 * their raw forms are released from agg; of the others, the final frames
 * are resolved. JIT code waits for the end, when its perf map is complete.
 * One resolver takes an agg's stacks: they are no longer there for another.
 */
void resolver__prepare(struct resolver *r, struct agg *agg, int budget_ms);
/* Whether prepare has looked at every stack agg holds. */
bool resolver__caught_up(const struct resolver *r, const struct agg *agg);
/*
 * The stacks prepare left raw whose image is settled (its process ended
 * long ago: no mapping or perf-map line is still to come) become profile
 * stacks now, so that the image's mappings can go. Returns false when out
 * of memory: then nothing may be released.
 */
bool resolver__finish_settled(struct resolver *r, struct agg *agg);

/* Bytes the profile holds for its stacks so far, their frames included. */
size_t resolver__stack_bytes(const struct resolver *r);

/*
 * The profile of every stack in agg, with their values as they are now.
 * What the resolver built moves into it: call once. Returns 0, -ENOMEM, or
 * -EINTR (a signal), -EINVAL (agg's stacks were taken by another resolver);
 * out is freed by profile__fini() in every case.
 */
int resolver__build(struct resolver *r, const struct agg *agg, const struct resolve_meta *meta,
		    struct profile *out);

#endif
