// SPDX-License-Identifier: GPL-2.0
#include "core/ksym.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ksym {
	uint64_t addr;
	const char *name;
	const char *module;
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char **strings;		/* every name and module string we own */
	size_t nr_strings;
	bool restricted;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const char *intern(struct ksyms *ks, const char *s, size_t *cap)
{
	char *copy;

	if (ks->nr_strings == *cap) {
		size_t ncap = *cap ? *cap * 2 : 1024;
		char **tmp = realloc(ks->strings, ncap * sizeof(*tmp));

		if (!tmp)
			return NULL;
		ks->strings = tmp;
		*cap = ncap;
	}
	copy = strdup(s);
	if (copy)
		ks->strings[ks->nr_strings++] = copy;
	return copy;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	size_t cap = 0, str_cap = 0, len = 0;
	const char *last_module = NULL;
	bool any_nonzero = false, any = false;
	char *line = NULL;
	FILE *f;

	if (!ks)
		return NULL;
	f = fopen(path, "re");
	if (!f) {
		int err = errno;

		free(ks);
		errno = err;
		return NULL;
	}
	while (getline(&line, &len, f) > 0) {
		char type, name[512], module[128] = "";
		uint64_t addr;
		int n = sscanf(line, "%" SCNx64 " %c %511s [%127[^]]]", &addr, &type, name, module);

		if (n < 3)
			continue;
		any = true;
		if (addr)
			any_nonzero = true;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		/* Padding and CFI stubs sit in front of the real function. */
		if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
			continue;
		if (ks->nr == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct ksym *tmp = realloc(ks->syms, ncap * sizeof(*tmp));

			if (!tmp)
				goto nomem;
			ks->syms = tmp;
			cap = ncap;
		}
		ks->syms[ks->nr].addr = addr;
		ks->syms[ks->nr].name = intern(ks, name, &str_cap);
		if (!ks->syms[ks->nr].name)
			goto nomem;
		ks->syms[ks->nr].module = NULL;
		if (module[0]) {
			if (!last_module || strcmp(last_module, module))
				last_module = intern(ks, module, &str_cap);
			if (!last_module)
				goto nomem;
			ks->syms[ks->nr].module = last_module;
		}
		ks->nr++;
	}
	free(line);
	fclose(f);
	ks->restricted = any && !any_nonzero;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_ksym);
	return ks;

nomem:
	free(line);
	fclose(f);
	ksyms__free(ks);
	errno = ENOMEM;
	return NULL;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; i < ks->nr_strings; i++)
		free(ks->strings[i]);
	free(ks->strings);
	free(ks->syms);
	free(ks);
}

bool ksyms__restricted(const struct ksyms *ks)
{
	return ks->restricted;
}

const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *sym_off,
			  const char **module)
{
	size_t lo = 0, hi = ks->nr;

	if (ks->restricted)
		return NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	*sym_off = addr - ks->syms[lo - 1].addr;
	*module = ks->syms[lo - 1].module;
	return ks->syms[lo - 1].name;
}
