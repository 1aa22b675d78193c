/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks from a register + stack snapshot, unwound with libunwind's
 * remote API over .eh_frame of the binaries a process has mapped. The only
 * code that includes libunwind.h.
 */
#ifndef UNWIND_UNWIND_H
#define UNWIND_UNWIND_H

#include <stddef.h>
#include <stdint.h>

#include "core/proc/proctrack.h"

struct unwinder;

/* The user registers a step can depend on (x86-64: what the CFI of normal code uses). */
struct unwind_regs {
	uint64_t ip;
	uint64_t sp;
	uint64_t bp;
};

struct unwind_stats {
	uint64_t stacks;	/* unwind calls */
	uint64_t steps;		/* frames produced after the leaf */
	uint64_t cached_steps;	/* of which replayed from the step cache */
	uint64_t truncated;	/* cut at the maximum depth (marker frame added) */
	uint64_t dump_exhausted;	/* stopped at the end of the stack copy */
	uint64_t bad_images;	/* skipped: malformed headers or tables, or the file shrank */
	uint64_t bad_fdes;	/* FDEs left out when looked up: they fail the checks */
	uint64_t fde_lookups;	/* FDEs libunwind was given */
	uint64_t fde_reads;	/* of which read from the file (the rest from the FDE cache) */
	uint64_t median_ns;	/* per unwind call, from a log-scale histogram */
	size_t images;		/* files whose images (unwind tables) are held now */
	uint64_t images_dropped;	/* images freed while their file was idle */
	uint64_t images_reloaded;	/* of those, read again when libunwind next asked */
	size_t table_bytes;	/* unwind tables held (copies, indexes) and the step cache */
};

struct unwinder *unwinder__new(void);
void unwinder__free(struct unwinder *u);

/*
 * Unwind one user stack. stack is a copy of user memory starting at regs->sp.
 * ips receives the frames leaf first: the leaf's ip, then return addresses.
 * When the stack is deeper than max, the last slot holds STACK_TRUNCATED_IP.
 * di: the leaf's rdi where sampled, else NULL (glibc's vfork keeps its
 * return address there while the parent waits, and its CFI says so).
 * Returns the number of frames (at least 1 when regs->ip is non-zero).
 */
unsigned int unwinder__unwind(struct unwinder *u, const struct addr_space *as,
			      const struct unwind_regs *regs, const uint64_t *di, const void *stack,
			      size_t stack_size, uint64_t *ips, unsigned int max);
/*
 * The same with the copy in nr pieces where they arrived, not joined
 * first: pieces[i] holds the lens[i] bytes (8 or more) that follow the
 * pieces before it; stack_size cuts the copy. Fastest when the first
 * pieces have the same size (the rest are searched).
 */
unsigned int unwinder__unwind_pieces(struct unwinder *u, const struct addr_space *as,
				     const struct unwind_regs *regs, const uint64_t *di,
				     const unsigned char *const *pieces, const uint32_t *lens,
				     unsigned int nr, size_t stack_size, uint64_t *ips,
				     unsigned int max);

/*
 * Free the images (descriptor, unwind tables, .debug_frame) of files that
 * libunwind has not asked for in idle_ms; a later unwind through one reads
 * it again. The step cache stays: it depends on the file's contents, not on
 * our copy of them. The clock is read here, once per call; lookups until
 * the next call count as made at this one. Returns how many were freed.
 */
unsigned int unwinder__drop_idle(struct unwinder *u, int64_t idle_ms);

/*
 * Free everything the unwinder holds but its counts (images, step and FDE
 * caches): sampling is over and the last samples are unwound, before the
 * report is built. A later unwind gives the leaf only.
 */
void unwinder__release(struct unwinder *u);
void unwinder__stats(const struct unwinder *u, struct unwind_stats *st);
/* -v: what unwinding cost; a warning when stack copies were too short. */
void unwinder__report(const struct unwinder *u);
/*
 * fn is told of each file the unwinder reads for the first time (not again
 * when read anew after an idle drop): its descriptor, valid during the
 * call, and the mapping it was found by (-v's verdicts per binary).
 */
typedef void (*unwinder_file_fn)(void *ctx, int fd, const struct mapping *m);
void unwinder__on_file(struct unwinder *u, unwinder_file_fn fn, void *ctx);

#endif
