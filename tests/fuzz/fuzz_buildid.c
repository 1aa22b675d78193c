// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as an ELF file whose build-id the
 * process tracker reads (core/proc/buildid.h) from every binary a process
 * maps, anyone's. The reader sees exactly the input's bytes; a build-id it
 * returns must fit and lie in the input.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/proc/buildid.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A copy of exactly size bytes, so that AddressSanitizer sees a read past it. */
	uint8_t *copy = malloc(size ? size : 1);
	struct build_id bid;
	int ret;

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	ret = build_id__read_mem(copy, size, &bid);
	if (ret < 0 || ret > 1 || (ret == 1 && (!bid.size || bid.size > BUILD_ID_MAX)) ||
	    (ret == 0 && bid.size))
		abort();
	if (ret == 1 && !memmem(copy, size, bid.data, bid.size))
		abort();
	free(copy);
	return 0;
}
