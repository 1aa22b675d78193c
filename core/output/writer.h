/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The report writers: one per format, each reading only the resolved
 * profile (core/model/profile.h). None includes another; text formats share
 * core/output/text.h. Each returns 0 or -errno (-EIO when out fails).
 */
#ifndef CORE_OUTPUT_WRITER_H
#define CORE_OUTPUT_WRITER_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include "core/model/profile.h"

/*
 * What a writer printed that the run's warnings must agree with. Stacks
 * that lost a part print a marker ([Missed User Stack]); the warning says
 * how many markers the report shows (bcc's count, one per stack printed
 * with its marker), and each format shows them in its own unit:
 * - bcc's report and folded stacks merge the stacks that print the same
 *   (two raw keys of one pid that differ only in how the stack was lost
 *   are one block; folded lines carry no pid, so processes merge too):
 *   one per marker of a merged block or line;
 * - a flame graph is drawn from those same merged stacks (flamegraph.pl's
 *   lines): one per marker ending a path of the graph;
 * - pprof writes every stack of the profile as a Sample of its own (its
 *   pid a label): one per Sample's marker, the profile's own count.
 */
struct writer_printed {
	uint64_t missed_stacks;
};

/* How frames print (bcc's -d, -a, -A); not every writer uses every one. */
struct writer_opts {
	bool delimited;		/* -d: "--" or "-" between kernel and user frames */
	bool annotations;	/* -a: "_[k]" after kernel frames */
	bool addresses;		/* -A: address, offset and module of each frame */
	bool offsets;		/* offcputime -s: name+0xOFF */
	bool raw_addresses;	/* offcputime's 2016 -v: "ADDR             name" (multi-line) */
	struct writer_printed *printed;	/* if not NULL, filled in by a writer that completes */
};

/* A writer that completed says how many missed-stack markers it printed. */
static inline void writer__printed_missed(const struct writer_opts *o, uint64_t n)
{
	if (o->printed)
		o->printed->missed_stacks = n;
}

/*
 * Flush out and tell how writing went: 0, or -errno of the failure (a full
 * disk is ENOSPC, not EIO). errno is cleared before writing starts.
 */
static inline int writer__flush(FILE *out)
{
	if (fflush(out) == EOF || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* bcc's multi-line report: kernel frames, user frames, "- comm (pid)", the count. */
int writer__bcc(FILE *out, const struct profile *p, const struct writer_opts *o);
/* Folded stacks, one "comm;root;...;leaf count" line each (flamegraph.pl's input). */
int writer__folded(FILE *out, const struct profile *p, const struct writer_opts *o);
/* An interactive flame graph in one self-contained SVG. */
int writer__svg(FILE *out, const struct profile *p, const struct writer_opts *o);
/* Two profiles compared (a differential profile): share changes by function and stack. */
int writer__diff(FILE *out, const struct profile *p, const struct writer_opts *o);
/* gzip'ed pprof profile.proto. */
int writer__pprof(FILE *out, const struct profile *p, const struct writer_opts *o);

#endif
