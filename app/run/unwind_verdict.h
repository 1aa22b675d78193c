/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind: how each backend unwinds user stacks (the one place that
 * decides it), and under auto, per binary, which way and why: a binary
 * keeps frame pointers or not by its own unwind tables
 * (unwind_table__fp_share, compiled once per distinct file), a process
 * needs stack copies when any binary it maps does not. The words of -v's
 * line per binary are unwind/tables/verdict.h's, for every backend.
 */
#ifndef APP_RUN_UNWIND_VERDICT_H
#define APP_RUN_UNWIND_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "app/run/opts.h"
#include "core/backend/backend.h"
#include "unwind/tables/verdict.h"

/* A binary of the run's processes and its verdict, read once per file. */
struct unwind_binary {
	char *path;
	uint64_t dev, ino;
	struct unwind_verdict v;
	bool copies_seen;	/* seen in a process that takes copies: unwound from them */
	bool process_copies;	/* of them, one -p's choice made take copies */
	/*
	 * A Node.js binary (node_detect): its processes take copies, whatever
	 * their frame pointers, where JavaScript frames are wanted (--node):
	 * the walk of V8's frames reads them.
	 */
	bool node;
};

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
/*
 * Under --unwind auto, a backend's rings that did not fit the locked memory
 * this user may have (why): smaller stack copies (down to 4 KiB), then
 * frame pointers, in o and c (-v says each step). False: nothing smaller
 * to try, the failure stands, said alone.
 */
bool unwind_choice__shrink(struct run_opts *o, struct backend_config *c, const char *why);
/* Once the rings fit after shrinking: the warning that says what auto gave up (asked: bytes). */
void unwind_choice__warn_shrunk(const struct backend_config *c, unsigned int asked);

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
 * maps has unwind tables and keeps no frame pointers, or is Node's while
 * JavaScript frames are wanted, or its maps or a
 * binary could not be read (copies are never wrong). Each binary is
 * compiled once, each process decided once.
 */
bool unwind_verdicts__needs_copies(struct unwind_verdicts *v, pid_t tid);
/*
 * Whether process tgid maps a Node.js binary whose JavaScript frames are
 * wanted (--node): the bpf backend then takes its samples as copies
 * (backend_config.copies_for_interp), decided as needs_copies is.
 */
bool unwind_verdicts__runs_node(struct unwind_verdicts *v, pid_t tgid);
/* The binary of the file open at fd (path for -v), compiled once per dev/inode; NULL: ENOMEM. */
const struct unwind_binary *unwind_verdicts__binary(struct unwind_verdicts *v, int fd,
						    const char *path, uint64_t dev, uint64_t ino);
/* A binary the unwinder read for a stack copy (fd valid during the call): unwound from copies. */
void unwind_verdicts__copied(struct unwind_verdicts *v, int fd, const char *path, uint64_t dev,
			     uint64_t ino);
/* -v: one line per binary decided, which way and why. */
void unwind_verdicts__report(const struct unwind_verdicts *v);

#endif
