// SPDX-License-Identifier: GPL-2.0
/* profile: sample stack traces at a timed interval, report how often each was seen. */
#include <malloc.h>
#include <stddef.h>

#include "app/cli/cli.h"

int main(int argc, char **argv)
{
	/*
	 * Temporaries up to 32 MiB come from the heap, and up to 4 MiB of free
	 * heap top stays mapped: each new binary's symbol table is built in
	 * temporary arrays of several MB (libelf's sections, the name pool, the
	 * sort), and a page first touched costs ~27 us of CPU on a 2-CPU VM
	 * (64 MB memset: 27 us a page the first time, 0.1 us after). With
	 * mmap'd temporaries (a fixed 128 KiB threshold) every load faulted its
	 * pages in again: a 1 s system-wide run took 4,000-13,000 faults, 2,300
	 * this way, and 0.1-0.3 s less CPU. Fixed values: glibc's dynamic
	 * threshold would follow the largest block freed. What stays free
	 * between loads goes back at the loop's sweeps (malloc_trim).
	 */
	mallopt(M_MMAP_THRESHOLD, 32 << 20);
	mallopt(M_TRIM_THRESHOLD, 4 << 20);
	return cli__main(argc, argv, NULL);
}
