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
 * so that a shallow thread costs one system call, not one a sample.
 */
#ifndef PERFRING_STACKFILL_H
#define PERFRING_STACKFILL_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "backend-perfring/decode.h"

#define STACK_FILL_TOPS 256
#define STACK_FILL_MAX 65536	/* a record is at most 64 KiB */

struct stack_fill {
	/* Where each thread's stack was found to end (a read there failed), by tid. */
	struct {
		pid_t tid;
		uint64_t end;
	} tops[STACK_FILL_TOPS];
	unsigned char *buf;	/* STACK_FILL_MAX bytes, allocated at the first read */
	bool off;		/* the reads were refused (no permission): none tried again */
	uint64_t filled;	/* copies that got more bytes */
	uint64_t bytes;		/* how many bytes in all */
	uint64_t refused;	/* reads that failed for another reason than the stack's end */
};

/*
 * Reads the bytes that follow ds's copy in its process, up to room, into
 * sf->buf; returns how many (0: none). regs_mask is the attr's
 * sample_regs_user.
 */
size_t stack_fill__read(struct stack_fill *sf, const struct decoded_sample *ds, uint64_t regs_mask,
			size_t room);
/* Says in -v what was read (what: "perf"). */
void stack_fill__report(const struct stack_fill *sf, const char *what);
void stack_fill__fini(struct stack_fill *sf);

#endif
