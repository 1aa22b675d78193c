/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the report goes: standard output, or --output FILE, checked before
 * sampling so that a bad path fails at once, and written safely in shared
 * directories such as /tmp. The report is written to a file with no name
 * in FILE's directory (O_TMPFILE; else a temporary file beside FILE) and
 * put at FILE at the end, so a failed or killed run leaves no partial
 * report; a symlink at FILE is refused, and an existing FIFO, directory or
 * another user's file is never replaced. A character device (/dev/null, a
 * terminal) is written in place. A finished report whose name was taken
 * meanwhile, or whose directory refuses it, is never lost: it goes beside
 * FILE under a fresh name, else to standard output (or, if that is a
 * terminal, a fresh file in $TMPDIR), and the error says where.
 */
#ifndef APP_RUN_OUTFILE_H
#define APP_RUN_OUTFILE_H

#include <stdbool.h>
#include <stdio.h>

#include "core/lib/log.h"

struct outfile {
	FILE *f;		/* where writers write */
	char *path;		/* --output, or NULL for standard output */
	char *tmp_path;		/* renamed to path at the end; NULL when writing in place */
	bool anonymous;		/* an O_TMPFILE, linked at path at the end */
};

/* path NULL: standard output. Returns 0 or -errno with a reason in err. */
int outfile__open(struct outfile *o, const char *path, struct errmsg *err);
/*
 * Flush and move the report into place. Returns 0 or -errno with a reason,
 * which ends with where the report is when it was written elsewhere.
 */
int outfile__commit(struct outfile *o, struct errmsg *err);
/* Give up: close, and remove the temporary file. Safe after commit and on a zeroed struct. */
void outfile__discard(struct outfile *o);

#endif
