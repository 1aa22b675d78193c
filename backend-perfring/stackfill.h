/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rest of a stack copy the kernel cut short, read from the process by
 * the reader thread right after the sample.
 *
 * The kernel copies sample_stack_user bytes from the user sp in the
 * interrupt, where it cannot take a page fault: the copy ends at the first
 * page that is not in memory. A frame with a large buffer it never fills
 * (GNU sort's key comparison has 8.6 KB of locals) leaves such pages
 * between the leaf and its callers in a process that has not yet been that
 * deep, so that the copy ended there and the unwind with it: sort's stacks
 * were whole in 0.16-0.72 of its samples on 3.10-4.9 in the kernel matrix,
 * about half on this host, however large the copy asked for (perf
 * --call-graph dwarf stops there too). The reader reads the rest of the
 * asked-for bytes from the process's memory (process_vm_readv, which
 * faults such a page in as the zero page it is), tens of microseconds to a
 * few milliseconds after the sample: what lies there is the callers'
 * frames, which a thread keeps until it returns to them. The read maps the
 * zero page where a page was never touched (its bytes are zeros all the
 * same), so that the kernel's next copies of that stack go through it: a
 * process costs a few reads, not one a sample (sort: 4-5 a run, and 0.998
 * of its samples whole, as the bpf backend's in-kernel walk).
 *
 * Most copies that end short end at the top of the thread's stack, where
 * nothing more can be read: a failed read there is remembered per thread,
 * so that a shallow thread costs one system call, not one a sample; so is a
 * thread whose memory this user may not read (a setuid child).
 *
 * The read may block: the process owns what lies past its stack (a range
 * registered with userfaultfd and never served, a FUSE file whose server
 * never answers), and a root profiler must not hang on it. The reads are
 * made by a thread of their own, which the reader waits for
 * STACK_FILL_WAIT_MS at most, holding nothing it needs; one that does not
 * return by then is left where it is, and no copy is completed until it
 * has returned: a read that is only slow (an emulated guest's: on 3.10
 * under TCG one late read left half of sort's samples short for the rest
 * of the run) is then taken up again, STACK_FILL_MAX_LATE times a run at
 * most. One still out at the end keeps its memory (the process's exit ends
 * it), and a warning says so.
 */
#ifndef PERFRING_STACKFILL_H
#define PERFRING_STACKFILL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend-perfring/decode.h"

#define STACK_FILL_TOPS 256
#define STACK_FILL_MAX 65536	/* a record is at most 64 KiB */
#define STACK_FILL_WAIT_MS 50
/*
 * Late reads a run takes up again after: then the completion stops for
 * the run. A process that serves its faults just past the wait would
 * otherwise hold the real-time reader 50 ms a read, run-long.
 */
#define STACK_FILL_MAX_LATE 8
/* tops[].end of a thread whose memory may not be read: none is that address. */
#define STACK_FILL_REFUSED UINT64_MAX

struct stack_filler;		/* the thread that reads (stackfill.c) */

struct stack_fill {
	/* Where each thread's stack was found to end (a read there failed), by tid. */
	struct {
		pid_t tid;
		uint64_t end;
	} tops[STACK_FILL_TOPS];
	struct stack_filler *filler;	/* started at the first read */
	bool stuck;		/* a read has not returned: none more until it has */
	pid_t stuck_pid;	/* whose */
	uint64_t late;		/* reads that did not return within STACK_FILL_WAIT_MS */
	uint64_t skipped;	/* copies left short while one was out */
	uint64_t filled;	/* copies that got more bytes */
	uint64_t bytes;		/* how many bytes in all */
	uint64_t refused;	/* reads that failed for another reason than the stack's end */
};

/*
 * Reads the bytes that follow ds's copy in its process, up to room;
 * returns how many (0: none) and where they are in *bytes, valid until the
 * next call. regs_mask is the attr's sample_regs_user.
 */
size_t stack_fill__read(struct stack_fill *sf, const struct decoded_sample *ds, uint64_t regs_mask,
			size_t room, const unsigned char **bytes);
/* Says in -v what was read (what: "perf"). */
void stack_fill__report(const struct stack_fill *sf, const char *what);
void stack_fill__fini(struct stack_fill *sf);

#endif
