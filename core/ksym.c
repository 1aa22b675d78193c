// SPDX-License-Identifier: GPL-2.0
#include "core/ksym.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offsets into the text */
	uint32_t module;	/* 0: the core kernel */
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *text;		/* the whole file, names NUL-terminated in place */
	bool restricted;
};

static int read_all(const char *path, char **buf, size_t *len)
{
	size_t cap = 1 << 20;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	*len = 0;
	/* Offset 0 is kept free so that a name offset of 0 can mean "none". */
	*buf = malloc(cap);
	if (!*buf) {
		close(fd);
		return -ENOMEM;
	}
	(*buf)[(*len)++] = '\0';
	while ((n = read(fd, *buf + *len, cap - *len - 1)) > 0) {
		*len += n;
		if (cap - *len < 65536) {
			char *tmp = realloc(*buf, cap * 2);

			if (!tmp) {
				close(fd);
				return -ENOMEM;
			}
			*buf = tmp;
			cap *= 2;
		}
	}
	close(fd);
	if (n < 0)
		return -errno;
	(*buf)[*len] = '\0';
	return 0;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/* Lines are "ffffffff81000000 T name\t[module]"; parsed in place. */
struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	bool any_nonzero = false, any = false;
	size_t len = 0, cap = 0;
	char *p, *end;
	int err;

	if (!ks)
		return NULL;
	err = read_all(path, &ks->text, &len);
	if (err)
		goto err_out;
	p = ks->text + 1;
	end = ks->text + len;
	while (p < end) {
		char *nl = memchr(p, '\n', end - p), *name, *mod = NULL, *q;
		uint64_t addr;
		char type;

		if (!nl)
			nl = end;
		*nl = '\0';
		addr = strtoull(p, &q, 16);
		if (q == p || q + 3 > nl || q[0] != ' ' || q[2] != ' ')
			goto next;
		type = q[1];
		name = q + 3;
		any = true;
		any_nonzero |= addr != 0;
		if (!is_text_type(type))
			goto next;
		q = strchr(name, '\t');
		if (q) {
			*q = '\0';
			mod = strchr(q + 1, '[');
			if (mod) {
				char *close = strchr(++mod, ']');

				if (close)
					*close = '\0';
			}
		}
		/* Padding and CFI stubs sit in front of the real function. */
		if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
			goto next;
		if (ks->nr == cap) {
			size_t ncap = cap ? cap * 2 : 65536;
			struct ksym *tmp = realloc(ks->syms, ncap * sizeof(*tmp));

			if (!tmp) {
				err = -ENOMEM;
				goto err_out;
			}
			ks->syms = tmp;
			cap = ncap;
		}
		ks->syms[ks->nr].addr = addr;
		ks->syms[ks->nr].name = (uint32_t)(name - ks->text);
		ks->syms[ks->nr].module = mod ? (uint32_t)(mod - ks->text) : 0;
		ks->nr++;
next:
		p = nl + 1;
	}
	ks->restricted = any && !any_nonzero;
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_ksym);
	return ks;

err_out:
	ksyms__free(ks);
	errno = -err;
	return NULL;
}

void ksyms__free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->text);
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
	*module = ks->syms[lo - 1].module ? ks->text + ks->syms[lo - 1].module : NULL;
	return ks->text + ks->syms[lo - 1].name;
}
