// SPDX-License-Identifier: GPL-2.0
#include "core/sym/ksym.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/userfile.h"

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offsets into the text */
	uint32_t module;	/* 0: the core kernel */
	unsigned int rank;	/* among symbols at one address: lowest wins */
};

/* Why an alias loses a tie, worst first; then by its leading underscores. */
enum {
	KSYM_MARKER = 8 << 8,	/* a section boundary, not a function */
	KSYM_PI_ALIAS = 4 << 8,	/* __pi_memcpy: memcpy's copy for early boot code */
	KSYM_WEAK = 2 << 8,
	KSYM_LOCAL = 1 << 8,
};

/* A symbol once the table is built: the rank has done its work. */
struct kentry {
	uint64_t addr;
	uint32_t name;
	uint32_t module;
};

struct ksyms {
	struct ksym *syms;	/* while loading */
	struct kentry *table;	/* then: sorted, one per address */
	size_t nr;
	char *text;		/* the kept names and module names, NUL-terminated */
	size_t text_len;	/* bytes of text: the names read, then those pooled */
	bool restricted;
};

/*
 * kallsyms is about 10 MB with modules; the path can be given on the command
 * line, so it is opened as any other file a user might control.
 */
#define KSYMS_MAX_SIZE (256UL << 20)
/*
 * Read a chunk at a time, keeping only the names of text symbols: the whole
 * file in memory was 5 MB of pages touched once (here ~27 us of CPU each),
 * the names kept 1.5 MB. A line longer than a chunk is no kallsyms line.
 */
#define KSYMS_CHUNK (64UL << 10)

static int cmp_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Of two aliases (one address), whether x names it better than y. */
static bool better_alias(const struct ksym *x, const struct ksym *y)
{
	if (x->rank != y->rank)
		return x->rank < y->rank;
	return x->name > y->name;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !memcmp(s + n - m, suffix, m);
}

/*
 * Linker-script labels of text sections: _stext, _etext, _sinittext,
 * __sched_text_start, __irqentry_text_end, ..., and their __pi_ copies
 * (position-independent aliases, 6.10+).
 */
static bool is_section_marker(const char *name)
{
	if (!strncmp(name, "__pi_", 5))
		name += 5;
	if (!strcmp(name, "_text") || !strcmp(name, "_stext") || !strcmp(name, "_etext") ||
	    !strcmp(name, "_sinittext") || !strcmp(name, "_einittext"))
		return true;
	return !strncmp(name, "__", 2) &&
	       (ends_with(name, "_text_start") || ends_with(name, "_text_end"));
}

static unsigned int ksym_rank(char type, const char *name)
{
	unsigned int rank = strspn(name, "_");

	if (rank > 255)
		rank = 255;
	if (!strncmp(name, "__pi_", 5))
		rank |= KSYM_PI_ALIAS;
	if (is_section_marker(name))
		rank |= KSYM_MARKER;
	if (type == 'w' || type == 'W')
		rank |= KSYM_WEAK;
	if (type == 't' || type == 'w')
		rank |= KSYM_LOCAL;
	return rank;
}

/*
 * By address: kallsyms lists the kernel's own symbols in that order, then
 * each module's and BPF's, so only the tail is sorted and merged in (a
 * sort of the whole was a fifth of loading it). 0 or -ENOMEM.
 */
static int sort_by_addr(struct ksyms *ks)
{
	size_t head = 1, nr_tail, i, j, out;
	struct ksym *tail;

	while (head < ks->nr && ks->syms[head - 1].addr <= ks->syms[head].addr)
		head++;
	if (head >= ks->nr)
		return 0;
	nr_tail = ks->nr - head;
	tail = malloc(nr_tail * sizeof(*tail));
	if (!tail)
		return -ENOMEM;
	memcpy(tail, ks->syms + head, nr_tail * sizeof(*tail));
	qsort(tail, nr_tail, sizeof(*tail), cmp_addr);
	/* From the end, so the head is never written over before it is read. */
	i = head;
	j = nr_tail;
	out = ks->nr;
	while (j) {
		if (i && ks->syms[i - 1].addr > tail[j - 1].addr)
			ks->syms[--out] = ks->syms[--i];
		else
			ks->syms[--out] = tail[--j];
	}
	free(tail);
	return 0;
}

/* One symbol per address: the best of its aliases. 0 or -ENOMEM. */
static int sort_ksyms(struct ksyms *ks)
{
	size_t out = 0;
	int err = sort_by_addr(ks);

	if (err)
		return err;
	for (size_t i = 0; i < ks->nr; i++) {
		if (!out || ks->syms[out - 1].addr != ks->syms[i].addr)
			ks->syms[out++] = ks->syms[i];
		else if (better_alias(&ks->syms[i], &ks->syms[out - 1]))
			ks->syms[out - 1] = ks->syms[i];
	}
	ks->nr = out;
	return 0;
}

static bool is_text_type(char t)
{
	return t == 't' || t == 'T' || t == 'w' || t == 'W';
}

/*
 * The file is about 10 MB, most of it addresses, data symbols and the
 * padding stubs: keep only the names of the symbols kept, each module's
 * name once (a module's symbols are listed together), and let the file go.
 */
static int compact_names(struct ksyms *ks)
{
	size_t need = 1, at = 1;
	const char *last_mod = NULL;
	uint32_t last_mod_off = 0;
	char *pool;

	for (size_t i = 0; i < ks->nr; i++) {
		need += strlen(ks->text + ks->syms[i].name) + 1;
		if (ks->syms[i].module)
			need += strlen(ks->text + ks->syms[i].module) + 1;
	}
	if (need > UINT32_MAX)
		return -EFBIG;
	pool = malloc(need);
	if (!pool)
		return -ENOMEM;
	pool[0] = '\0';	/* offset 0: no module */
	for (size_t i = 0; i < ks->nr; i++) {
		struct ksym *k = &ks->syms[i];
		const char *mod = k->module ? ks->text + k->module : NULL;
		size_t n = strlen(ks->text + k->name) + 1;

		memcpy(pool + at, ks->text + k->name, n);
		k->name = (uint32_t)at;
		at += n;
		if (!mod) {
			k->module = 0;
			continue;
		}
		if (!last_mod || strcmp(mod, last_mod)) {
			n = strlen(mod) + 1;
			memcpy(pool + at, mod, n);
			last_mod = mod;
			last_mod_off = (uint32_t)at;
			at += n;
		}
		k->module = last_mod_off;
	}
	free(ks->text);
	ks->text = pool;
	/* Give back what the pool does not use: the symbols array had room to grow too. */
	pool = realloc(ks->text, at);
	if (pool)
		ks->text = pool;
	ks->text_len = at;
	return 0;
}

/*
 * The symbols as lookups need them, 16 bytes each, in the array that held
 * them (each entry is written over bytes already read), shrunk to size.
 */
static void make_table(struct ksyms *ks)
{
	char *bytes = (char *)ks->syms;
	void *tmp;

	for (size_t i = 0; i < ks->nr; i++) {
		const struct ksym k = ks->syms[i];
		const struct kentry e = { .addr = k.addr, .name = k.name, .module = k.module };

		memcpy(bytes + i * sizeof(e), &e, sizeof(e));
	}
	ks->syms = NULL;
	tmp = realloc(bytes, (ks->nr ? ks->nr : 1) * sizeof(struct kentry));
	ks->table = tmp ? tmp : (void *)bytes;
}

struct ksym_reader {
	struct ksyms *ks;
	size_t cap;		/* entries of ks->syms */
	size_t text_cap;
	uint32_t last_mod;	/* the module name appended last, 0 if none */
	bool any, any_nonzero;
};

/* Append n bytes and a NUL to the names; their offset, or -ENOMEM. */
static long text_add(struct ksym_reader *r, const char *s, size_t n)
{
	struct ksyms *ks = r->ks;
	long off = (long)ks->text_len;

	if (ks->text_len + n + 1 > r->text_cap) {
		size_t ncap = r->text_cap * 2 + n + 1;
		char *tmp = realloc(ks->text, ncap);

		if (!tmp)
			return -ENOMEM;
		ks->text = tmp;
		r->text_cap = ncap;
	}
	memcpy(ks->text + off, s, n);
	ks->text[off + n] = '\0';
	ks->text_len += n + 1;
	return off;
}

/* A hex digit's value plus one; 0 for any other byte. */
static const unsigned char hex_digit[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7,
	['7'] = 8, ['8'] = 9, ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14,
	['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15,
	['F'] = 16,
};

/* The address at p, up to 16 hex digits: where they end (p if none). */
static char *parse_addr(char *p, const char *end, uint64_t *addr)
{
	uint64_t v = 0;
	char *q = p;

	/* strtoull was 30% of loading; kallsyms has no sign, prefix or space here. */
	for (; q < end && q - p < 16 && hex_digit[(unsigned char)*q]; q++)
		v = v << 4 | (uint64_t)(hex_digit[(unsigned char)*q] - 1);
	*addr = v;
	return q;
}

/* One line, NUL-terminated at end: "ffffffff81000000 T name\t[module]". 0 or -ENOMEM. */
static int parse_line(struct ksym_reader *r, char *p, char *end)
{
	struct ksyms *ks = r->ks;
	char *name, *mod = NULL, *q;
	long name_off, mod_off = 0;
	uint64_t addr;
	char type;

	q = parse_addr(p, end, &addr);
	if (q == p || q + 3 > end || q[0] != ' ' || q[2] != ' ')
		return 0;
	type = q[1];
	name = q + 3;
	r->any = true;
	r->any_nonzero |= addr != 0;
	if (!is_text_type(type) || !*name)
		return 0;
	q = memchr(name, '\t', (size_t)(end - name));
	if (q) {
		*q = '\0';
		mod = memchr(q + 1, '[', (size_t)(end - q - 1));
		if (mod) {
			char *close;

			mod++;
			close = memchr(mod, ']', (size_t)(end - mod));

			if (close)
				*close = '\0';
		}
	}
	/* Padding and CFI stubs sit in front of the real function. */
	if (!strncmp(name, "__pfx_", 6) || !strncmp(name, "__cfi_", 6))
		return 0;
	if (ks->nr == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 1024;
		struct ksym *tmp = realloc(ks->syms, ncap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		ks->syms = tmp;
		r->cap = ncap;
	}
	name_off = text_add(r, name, strlen(name));
	if (name_off < 0)
		return (int)name_off;
	/* A module's symbols are listed together: its name once a run. */
	if (mod && r->last_mod && !strcmp(ks->text + r->last_mod, mod)) {
		mod_off = r->last_mod;
	} else if (mod) {
		mod_off = text_add(r, mod, strlen(mod));
		if (mod_off < 0)
			return (int)mod_off;
		r->last_mod = (uint32_t)mod_off;
	}
	ks->syms[ks->nr].addr = addr;
	ks->syms[ks->nr].name = (uint32_t)name_off;
	ks->syms[ks->nr].module = (uint32_t)mod_off;
	ks->syms[ks->nr].rank = ksym_rank(type, name);
	ks->nr++;
	return 0;
}

/* Every line of fd, a chunk at a time. 0 or -errno (-EFBIG past KSYMS_MAX_SIZE). */
static int read_lines(struct ksym_reader *r, int fd)
{
	char *buf = malloc(KSYMS_CHUNK + 1);
	size_t have = 0, total = 0;
	bool skipping = false;	/* the rest of a line longer than a chunk */
	int err = 0;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + have, KSYMS_CHUNK - have);
		char *p = buf, *end, *nl;

		if (n < 0) {
			if (errno == EINTR)
				continue;
			err = -errno;
			break;
		}
		total += (size_t)n;
		if (total > KSYMS_MAX_SIZE) {
			err = -EFBIG;
			break;
		}
		have += (size_t)n;
		end = buf + have;
		while (!err && (nl = memchr(p, '\n', end - p))) {
			*nl = '\0';
			if (!skipping)
				err = parse_line(r, p, nl);
			skipping = false;
			p = nl + 1;
		}
		if (err)
			break;
		if (n == 0) {
			/* The last line, without its newline. */
			*end = '\0';
			if (p < end && !skipping)
				err = parse_line(r, p, end);
			break;
		}
		have = (size_t)(end - p);
		if (have == KSYMS_CHUNK) {
			skipping = true;
			have = 0;
		} else {
			memmove(buf, p, have);
		}
	}
	free(buf);
	return err;
}

struct ksyms *ksyms__load(const char *path)
{
	struct ksyms *ks = calloc(1, sizeof(*ks));
	struct ksym_reader r = { .ks = ks };
	uint64_t size;
	int fd, err;

	if (!ks)
		return NULL;
	fd = userfile__open(path, false, UINT64_MAX, &size);
	if (fd < 0) {
		err = fd;
		goto err_out;
	}
	/* Offset 0 of the names: no name or module starts there. */
	err = text_add(&r, "", 0) < 0 ? -ENOMEM : read_lines(&r, fd);
	close(fd);
	if (err)
		goto err_out;
	ks->restricted = r.any && !r.any_nonzero;
	/* Aliases go first, so that the names kept are only the symbols'. */
	err = sort_ksyms(ks);
	if (!err)
		err = compact_names(ks);
	if (err)
		goto err_out;
	make_table(ks);
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
	free(ks->table);
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

		if (ks->table[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	*sym_off = addr - ks->table[lo - 1].addr;
	*module = ks->table[lo - 1].module ? ks->text + ks->table[lo - 1].module : NULL;
	return ks->text + ks->table[lo - 1].name;
}

size_t ksyms__bytes(const struct ksyms *ks)
{
	return ks ? sizeof(*ks) + ks->nr * sizeof(struct kentry) + ks->text_len : 0;
}
