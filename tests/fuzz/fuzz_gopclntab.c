// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as a Go binary's .gopclntab section,
 * which whoever built the binary controls; walked by go_pclntab__for_each.
 * Every name handed out must lie inside the input and end before a NUL
 * there, every range must be non-empty.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/gopclntab.h"

struct bounds {
	const uint8_t *data;
	size_t size;
};

static int check(uint64_t addr, uint64_t size, const char *name, size_t len, void *arg)
{
	const struct bounds *b = arg;
	const uint8_t *p = (const uint8_t *)name;

	(void)addr;
	if (!size || !len || p < b->data || p + len >= b->data + b->size || p[len] != '\0' ||
	    memchr(name, '\0', len))
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct bounds b = { data, size };
	/* A copy of exactly size bytes, so that AddressSanitizer sees a read past it. */
	uint8_t *copy = malloc(size ? size : 1);

	if (!copy)
		return 0;
	memcpy(copy, data, size);
	b.data = copy;
	go_pclntab__for_each(copy, size, 0x401000, check, &b);
	free(copy);
	return 0;
}
