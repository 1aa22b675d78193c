/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind: how each backend unwinds user stacks (the one place that
 * decides it), and under auto, per binary, which way and why: a binary
 * keeps frame pointers or not by its own unwind tables
 * (unwind_table__fp_share, compiled once per distinct file), a process
 * needs stack copies when any binary it maps does not. The words of -v's
 * line per binary are here, for every backend (the bpf side's table store
 * reports through unwind_binary__describe too).
 */
#ifndef APP_RUN_UNWIND_VERDICT_H
#define APP_RUN_UNWIND_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "app/run/opts.h"
#include "core/backend/backend.h"
#include "unwind/tables/tables.h"

/* How a binary's frames are unwound in a run. */
enum unwind_way {
	UNWIND_WAY_FP,		/* frame pointers, walked by the kernel */
	UNWIND_WAY_TABLES,	/* its .eh_frame tables, in the BPF program */
	UNWIND_WAY_COPIES,	/* .eh_frame over each sample's stack copy, in user space */
};

/* What a binary's unwind information says, read once per file. */
struct unwind_binary {
	char *path;
	uint64_t dev, ino;
	int err;		/* the compile's: 0, -ENOENT (no unwind tables), -EBADMSG... */
	struct unwind_fp_share share;
	uint32_t rows;		/* the compiled table's */
	uint64_t bytes;
	bool copies_seen;	/* seen in a process that takes copies: unwound from them */
};

/* What a binary's frames need: copies unless it keeps frame pointers or has no tables. */
bool unwind_binary__needs_tables(const struct unwind_binary *b);

/*
 * -v's words for b unwound by way, e.g. "frame pointers (52 of 53 functions
 * set up rbp)" or "copies (.eh_frame; 181 of 3713 functions set up rbp)".
 */
void unwind_binary__describe(const struct unwind_binary *b, enum unwind_way way, char *buf,
			     size_t len);

/*
 * The backend config's unwinding for o: dwarf (stack copies) and
 * native_unwind. --unwind auto asks for both: the perf backend copies
 * where a process needs it (needs_copies, set by unwind_verdicts__config),
 * the bpf backend unwinds in its program from tables where it can and takes
 * copies where it cannot (until that program exists: everywhere, as dwarf).
 */
void unwind_choice__config(const struct run_opts *o, struct backend_config *c);
/* -v's line for the mode of o on the backend of that name. */
void unwind_choice__print(const struct run_opts *o, const char *backend);

struct unwind_verdicts;

struct unwind_verdicts *unwind_verdicts__new(void);
void unwind_verdicts__free(struct unwind_verdicts *v);
/*
 * Under --unwind auto with copies (o), the per-process choice for the
 * backends that can make it: c's needs_copies.
 */
void unwind_verdicts__config(struct unwind_verdicts *v, const struct run_opts *o,
			     struct backend_config *c);
/*
 * Whether the process of thread tid needs stack copies: some binary it
 * maps has unwind tables and keeps no frame pointers, or its maps or a
 * binary could not be read (copies are never wrong). Each binary is
 * compiled once, each process decided once.
 */
bool unwind_verdicts__needs_copies(struct unwind_verdicts *v, pid_t tid);
/* The binary of the file open at fd (path for -v), compiled once per dev/inode; NULL: ENOMEM. */
const struct unwind_binary *unwind_verdicts__binary(struct unwind_verdicts *v, int fd,
						    const char *path, uint64_t dev, uint64_t ino);
/* A binary the unwinder read for a stack copy (fd valid during the call): unwound from copies. */
void unwind_verdicts__copied(struct unwind_verdicts *v, int fd, const char *path, uint64_t dev,
			     uint64_t ino);
/* -v: one line per binary decided, which way and why. */
void unwind_verdicts__report(const struct unwind_verdicts *v);

#endif
