/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolizes counted stacks, merges those that print the same, sorts them
 * by count (ascending, ties by text) and prints bcc's multi-line or folded
 * format.
 */
#ifndef CORE_REPORT_H
#define CORE_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/agg.h"
#include "core/symbolize.h"

struct report_opts {
	bool folded;		/* -f */
	bool delimited;		/* -d */
	bool annotations;	/* -a */
	bool addresses;		/* -A */
	bool user_only;		/* -U */
	bool kernel_only;	/* -K */
};

struct report_stats {
	uint64_t stacks;		/* lines or blocks printed */
	uint64_t samples;		/* sum of their counts */
	uint64_t missing_stacks;	/* bcc's "stack traces could not be displayed" */
	bool stack_map_collision;	/* a missed stack was -EEXIST */
};

/* One printed stack (folded line or multi-line block, without its count). */
struct printed_stack {
	char *text;
	uint64_t count;
};

/* The merged stacks, sorted by count then text. */
struct printed_stacks {
	struct printed_stack *stacks;
	size_t nr;
	uint64_t total;
};

/*
 * Stacks formatted while sampling goes on, so that the report at the end
 * has little left to do. Used by one report, with the same options.
 */
struct report_cache {
	struct hashmap merged;		/* text -> struct printed_stack */
};

void report_cache__init(struct report_cache *rc);
void report_cache__free(struct report_cache *rc);
/*
 * Format the stacks counted since the last call, for about budget_ms: those
 * that will print the same at the end (not JIT code, whose perf map may
 * still grow).
 */
void report__prepare(struct report_cache *rc, struct agg *agg, struct symbolizer *sym,
		     const struct report_opts *opts, int budget_ms);

/*
 * Symbolize, format and merge agg's stacks, starting from cache (may be
 * NULL), which is emptied. Returns 0 or -errno.
 */
int report__collect(const struct agg *agg, struct symbolizer *sym, const struct report_opts *opts,
		    struct report_cache *cache, struct printed_stacks *list,
		    struct report_stats *stats);
void printed_stacks__free(struct printed_stacks *list);

/* Print the report of agg to out. Returns 0 or -errno. */
int report__print(FILE *out, const struct agg *agg, struct symbolizer *sym,
		  const struct report_opts *opts, struct report_cache *cache,
		  struct report_stats *stats);

/* bcc's WARNING lines for missed stacks (and a full hash table) on stderr. */
void report__print_warnings(FILE *err, const struct report_stats *stats, bool hash_full);

#endif
