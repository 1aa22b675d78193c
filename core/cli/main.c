// SPDX-License-Identifier: GPL-2.0
/* profile: sample stack traces at a timed interval, report how often each was seen. */
#include <malloc.h>
#include <stddef.h>

#include "core/cli/cli.h"

int main(int argc, char **argv)
{
	/*
	 * Buffers of 128 KiB or more come from mmap and go back to the system
	 * when freed. glibc would raise that threshold to the largest block
	 * freed so far, and later large blocks would come from the heap and
	 * stay resident when freed: a symbol table is built in temporary
	 * arrays of several MB each time a new binary is seen, all run long.
	 */
	mallopt(M_MMAP_THRESHOLD, 128 << 10);
	return cli__main(argc, argv, NULL);
}
