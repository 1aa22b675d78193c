// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the folded-stacks reader of profile --diff
 * (core/input/folded.c), then the comparison of what it read with itself
 * and the folded writer of the comparison: any text a user hands to --diff.
 *
 * Seeds: this tool's folded output (with -d and -a), FlameGraph's
 * stackcollapse conventions (_[k], fractional counts, CRLF).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/input/read.h"
#include "core/lib/log.h"
#include "core/model/diff.h"
#include "core/output/writer.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	log_set_verbosity(-1);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct writer_opts wo = { .delimited = true };
	struct errmsg em = { "" };
	struct profile p, d;
	FILE *null;

	if (profile__read_folded((const char *)data, size, &p, &em)) {
		profile__fini(&p);
		return 0;
	}
	if (!profile__diff(&p, &p, &d)) {
		null = fopen("/dev/null", "w");
		if (null) {
			writer__folded(null, &d, &wo);
			fclose(null);
		}
	}
	profile__fini(&d);
	profile__fini(&p);
	return 0;
}
