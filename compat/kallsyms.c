// SPDX-License-Identifier: GPL-2.0
#include "compat/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/*
 * The lowest text-symbol address above after (after 0: the address of
 * name instead), in one pass over the file.
 */
static int scan(const char *path, const char *name, uint64_t after, uint64_t *out)
{
	FILE *f = fopen(path, "re");
	char line[512];

	if (!f)
		return -errno;
	*out = after ? UINT64_MAX : 0;
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (!after && !strcmp(sym, name)) {
			*out = addr;
			break;
		}
		/* kallsyms is mostly sorted, not always (modules, aliases): the minimum. */
		if (after && addr > after && addr < *out)
			*out = addr;
	}
	fclose(f);
	return 0;
}

int kallsyms__range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	int err = scan(path, name, 0, start);

	if (err)
		return err;
	if (!*start)
		return -ENOENT;
	return scan(path, name, *start, end);
}
