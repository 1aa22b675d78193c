// SPDX-License-Identifier: GPL-2.0
#include "compat/cpus.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int push_cpu(int **cpus, int *cnt, int *cap, int cpu)
{
	if (*cnt == *cap) {
		int new_cap = *cap ? *cap * 2 : 16;
		int *tmp = realloc(*cpus, new_cap * sizeof(**cpus));

		if (!tmp)
			return -ENOMEM;
		*cpus = tmp;
		*cap = new_cap;
	}
	(*cpus)[(*cnt)++] = cpu;
	return 0;
}

int cpus__parse_list(const char *list, int **cpus)
{
	const char *p = list;
	int cnt = 0, cap = 0, err;
	*cpus = NULL;

	while (*p && *p != '\n') {
		char *end;
		long first, last;

		if (!isdigit((unsigned char)*p))
			goto malformed;
		first = strtol(p, &end, 10);
		last = first;
		p = end;
		if (*p == '-') {
			p++;
			if (!isdigit((unsigned char)*p))
				goto malformed;
			last = strtol(p, &end, 10);
			p = end;
		}
		if (last < first || last > 1 << 20)
			goto malformed;
		for (long cpu = first; cpu <= last; cpu++) {
			err = push_cpu(cpus, &cnt, &cap, (int)cpu);
			if (err)
				goto err_out;
		}
		if (*p == ',')
			p++;
		else if (*p && *p != '\n')
			goto malformed;
	}
	if (cnt == 0)
		goto malformed;
	return cnt;

malformed:
	err = -EINVAL;
err_out:
	free(*cpus);
	*cpus = NULL;
	return err;
}

int cpus__online(int **cpus)
{
	char buf[4096];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int err;

	*cpus = NULL;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		err = ferror(f) ? -EIO : -EINVAL;
		fclose(f);
		return err;
	}
	fclose(f);
	return cpus__parse_list(buf, cpus);
}
