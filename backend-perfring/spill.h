/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Records the reader thread could not hold within its budget, kept in an
 * unlinked file until a drain reads them back, oldest first (reader.c says
 * when). A main thread that reads a large binary's tables (400 ms for
 * libLLVM's symbols here) outlasts what the rings and the budget hold at a
 * dwarf sample rate; perf record writes everything to a file for the same
 * reason. The file is made at the first record spilled, in $TMPDIR or
 * /tmp; the reader appends and the drainer reads under the reader's lock,
 * the drainer's pread outside it (appends only go past what it reads).
 */
#ifndef PERFRING_SPILL_H
#define PERFRING_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct spill {
	int fd;			/* -1 until a record is spilled */
	uint64_t write_off;	/* the end of what was written */
	uint64_t read_off;	/* what the drainer has read */
	uint64_t bytes;		/* spilled in all */
	uint64_t peak;		/* most bytes the file held */
	int err;		/* the first error making or writing it: nothing more spills */
};

void spill__init(struct spill *sp);
void spill__fini(struct spill *sp);
/* Whether records wait in the file. */
bool spill__pending(const struct spill *sp);
/*
 * Append one record of len bytes. Returns 0, or -ENOSPC when the file holds
 * its most already, or the -errno of making or writing it.
 */
int spill__write(struct spill *sp, const void *rec, size_t len);
/*
 * Read the records from read_off on, at most max bytes of whole records,
 * into out; reading one larger than max alone. Returns the bytes read (0:
 * none wait) or -errno. The caller advances with spill__consumed.
 */
long spill__read(struct spill *sp, uint64_t from, uint64_t to, void *out, size_t max);
/* The drainer has read up to off: once all is read, the file is emptied. */
void spill__consumed(struct spill *sp, uint64_t off);

#endif
