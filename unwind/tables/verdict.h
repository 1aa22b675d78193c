/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind auto's verdict on one binary, from its own unwind tables:
 * whether a frame-pointer walk through it is complete (it keeps frame
 * pointers: unwind_table__fp_share) or it needs its tables; and -v's words
 * for how a run unwinds it, one place for every backend (the run's per-task
 * choice on perf, the bpf backend's table store).
 */
#ifndef UNWIND_TABLES_VERDICT_H
#define UNWIND_TABLES_VERDICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "unwind/image.h"
#include "unwind/tables/tables.h"

/* How a binary's frames are unwound in a run. */
enum unwind_way {
	UNWIND_WAY_FP,		/* frame pointers, walked by the kernel */
	UNWIND_WAY_TABLES,	/* its .eh_frame tables, in the BPF program */
	UNWIND_WAY_COPIES,	/* .eh_frame over each sample's stack copy, in user space */
};

/* What a binary's unwind information says. */
struct unwind_verdict {
	/* 0; -ENOENT: no unwind tables; -EBADMSG: unusable; else why it was not read */
	int err;
	struct unwind_fp_share share;
	uint32_t rows;		/* its compiled table's */
	uint64_t bytes;
};

/* The verdict on img: its tables compiled (then freed), their fp share. Returns out->err. */
int unwind_verdict__of_image(const struct unwind_image *img, struct unwind_verdict *out);
/* The same for the file open at fd (the fd stays the caller's). */
int unwind_verdict__of_fd(int fd, struct unwind_verdict *out);

/*
 * Whether its frames need the tables (or a stack copy to unwind them
 * over): it has tables and keeps no frame pointers, or it could not be read
 * (copies are never wrong). A binary without tables is walked by frame
 * pointers whatever a run does.
 */
bool unwind_verdict__needs_tables(const struct unwind_verdict *v);

/* "N of M functions set up rbp": the words every -v line gives a binary's share in. */
void unwind_verdict__share_words(const struct unwind_fp_share *share, char *buf, size_t len);

/*
 * -v's words for a binary unwound by way, e.g. "frame pointers (52 of 53
 * functions set up rbp)", ".eh_frame tables (14662 rows, 72528 bytes; 93
 * of 3713 functions set up rbp)", "copies (.eh_frame over each sample's
 * stack copy; ...)".
 */
void unwind_verdict__describe(const struct unwind_verdict *v, enum unwind_way way, char *buf,
			      size_t len);

#endif
