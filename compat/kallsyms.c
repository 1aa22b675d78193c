// SPDX-License-Identifier: GPL-2.0
#include "compat/kallsyms.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * One pass over the file: the kernel formats /proc/kallsyms anew for every
 * read (0.2-1 s under emulation, a tenth of that on hardware), and the
 * symbolizer reads it once more before sampling. kallsyms is mostly sorted,
 * not always (modules, aliases): the end is the least text address above
 * the start, among all of them, so the addresses are kept until the file
 * has been read.
 */
int kallsyms__range(const char *path, const char *name, uint64_t *start, uint64_t *end)
{
	FILE *f = fopen(path, "re");
	uint64_t *addrs = NULL;
	size_t n = 0, cap = 0;
	char line[512];
	int err = 0;

	*start = 0;
	*end = UINT64_MAX;
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char type, sym[256];
		uint64_t addr;

		if (sscanf(line, "%" SCNx64 " %c %255s", &addr, &type, sym) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (!*start && !strcmp(sym, name)) {
			*start = addr;
			continue;
		}
		if (n == cap) {
			size_t more = cap ? 2 * cap : 4096;
			uint64_t *p = realloc(addrs, more * sizeof(*p));

			if (!p) {
				err = -ENOMEM;
				break;
			}
			addrs = p;
			cap = more;
		}
		addrs[n++] = addr;
	}
	fclose(f);
	if (!err && !*start)
		err = -ENOENT;
	for (size_t i = 0; !err && i < n; i++)
		if (addrs[i] > *start && addrs[i] < *end)
			*end = addrs[i];
	free(addrs);
	return err;
}
