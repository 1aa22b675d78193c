// SPDX-License-Identifier: GPL-2.0
/*
 * An address space's mappings: sorted, disjoint, inserted as the kernel
 * would map them, shared after a fork until one side changes, and looked up
 * by address.
 */
#include "core/proc/proctrack_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>

/* Paths of a tracker's spaces are held in its pool; a space made elsewhere owns them. */
static void mapping_free(const struct addr_space *as, struct mapping *m)
{
	if (as->files)
		file_table__unpool_path(as->files, m->path);
	else
		free(m->path);
	m->path = NULL;
}

/* Drop as's hold on its array of mappings (shared after a fork until one side changes). */
void addr_space__release_maps(struct addr_space *as)
{
	if (as->maps_refs && --*as->maps_refs) {
		as->maps = NULL;	/* another space still reads it */
	} else {
		for (size_t i = 0; i < as->nr_maps; i++)
			mapping_free(as, &as->maps[i]);
		free(as->maps);
		free(as->maps_refs);
	}
	as->maps_refs = NULL;
	as->maps = NULL;
	as->nr_maps = as->cap_maps = 0;
}

/* as's mappings become maps (sorted, disjoint, its own): nr of them in room for cap. */
void addr_space__adopt_maps(struct addr_space *as, struct mapping *maps, size_t nr, size_t cap)
{
	addr_space__release_maps(as);
	as->maps = maps;
	as->nr_maps = nr;
	as->cap_maps = cap;
	as->generation++;
}

void addr_space__free(struct addr_space *as)
{
	addr_space__release_maps(as);
	free(as);
}

/* path as the tracker keeps it (its pool), or a copy a space made elsewhere owns. */
static char *keep_path(const struct addr_space *as, const char *path)
{
	if (!path)
		path = "";
	return as->files ? file_table__pool_path(as->files, path) : strdup(path);
}

static int copy_mapping(const struct addr_space *as, struct mapping *dst,
			const struct mapping *src)
{
	*dst = *src;
	dst->path = keep_path(as, src->path);
	return dst->path ? 0 : -ENOMEM;
}

static int cmp_mapping(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* Room for more mappings in an array as alone writes (copied first if shared). */
static int own_maps(struct addr_space *as, size_t more)
{
	bool shared = as->maps_refs && *as->maps_refs > 1;
	size_t need = as->nr_maps + more, cap = as->cap_maps;
	struct mapping *maps;

	if (!shared && need <= cap)
		return 0;
	if (need > cap)
		cap = need < 16 ? 16 : need + need / 2;
	if (shared) {
		/* Paths are the pool's: copying the array copies the mappings, each a hold more. */
		maps = malloc(cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
		memcpy(maps, as->maps, as->nr_maps * sizeof(*maps));
		for (size_t i = 0; i < as->nr_maps; i++)
			file_table__pool_path(as->files, maps[i].path);
		--*as->maps_refs;
		as->maps_refs = NULL;
	} else {
		maps = realloc(as->maps, cap * sizeof(*maps));
		if (!maps)
			return -ENOMEM;
	}
	as->maps = maps;
	as->cap_maps = cap;
	return 0;
}

/* The first mapping that ends after addr (binary search). */
static size_t first_ending_after(const struct addr_space *as, uint64_t addr)
{
	size_t lo = 0, hi = as->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (as->maps[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int addr_space__insert(struct addr_space *as, const struct mapping *m)
{
	struct mapping piece[3];	/* what replaces the overlapped run: head, m, tail */
	size_t lo, hi, n = 0;
	int err;

	if (m->end <= m->start)
		return -EINVAL;
	/* The run [lo, hi) of mappings that m overlaps, found in O(log n). */
	lo = first_ending_after(as, m->start);
	for (hi = lo; hi < as->nr_maps && as->maps[hi].start < m->end; hi++)
		;
	err = own_maps(as, 2);
	if (err)
		return err;
	/* Keep the parts of the run outside [m->start, m->end), as the kernel would. */
	if (lo < hi && as->maps[lo].start < m->start) {
		err = copy_mapping(as, &piece[n], &as->maps[lo]);
		if (err)
			return err;
		piece[n++].end = m->start;
	}
	err = copy_mapping(as, &piece[n++], m);
	if (!err && lo < hi && as->maps[hi - 1].end > m->end) {
		const struct mapping *old = &as->maps[hi - 1];

		err = copy_mapping(as, &piece[n], old);
		if (!err) {
			piece[n].pgoff += m->end - old->start;
			piece[n++].start = m->end;
		}
	}
	if (err) {
		while (n)
			mapping_free(as, &piece[--n]);
		return err;
	}
	for (size_t i = lo; i < hi; i++)
		mapping_free(as, &as->maps[i]);
	memmove(&as->maps[lo + n], &as->maps[hi], (as->nr_maps - hi) * sizeof(*as->maps));
	memcpy(&as->maps[lo], piece, n * sizeof(*piece));
	as->nr_maps = as->nr_maps - (hi - lo) + n;
	as->generation++;
	return 0;
}

const struct mapping *addr_space__find(const struct addr_space *as, uint64_t addr)
{
	size_t i = first_ending_after(as, addr);

	if (i < as->nr_maps && as->maps[i].start <= addr)
		return &as->maps[i];
	return NULL;
}

/*
 * Read maps in /proc/PID/maps format: all lines first, sorted once, then
 * put in place. /proc lists a process's mappings sorted and disjoint, so
 * this is linear but for the sort; a file that lists overlaps (it is
 * another format's) is inserted one mapping at a time.
 */
int addr_space__load_maps_file(struct addr_space *as, const char *path)
{
	FILE *f = fopen(path, "re");
	struct mapping *got = NULL;
	size_t nr = 0, cap = 0;
	char *line = NULL;
	size_t len = 0;
	bool disjoint = true;
	int err = 0;

	if (!f)
		return -errno;
	while (!err && getline(&line, &len, f) > 0) {
		struct mapping m = { 0 };
		char perms[8], *file;
		unsigned int maj, min;
		int off = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %7s %" SCNx64 " %x:%x %" SCNu64 " %n",
			   &m.start, &m.end, perms, &m.pgoff, &maj, &min, &m.ino, &off) < 7)
			continue;
		if (!strchr(perms, 'x') || m.end <= m.start)
			continue;
		file = line + off;
		file[strcspn(file, "\n")] = '\0';
		m.dev = makedev(maj, min);
		m.exec = true;
		if (nr == cap) {
			struct mapping *tmp = realloc(got, (cap = cap ? 2 * cap : 64) * sizeof(*got));

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			got = tmp;
		}
		err = copy_mapping(as, &got[nr], &(struct mapping){ .start = m.start,
								   .end = m.end,
								   .pgoff = m.pgoff,
								   .dev = m.dev,
								   .ino = m.ino,
								   .exec = true,
								   .path = file });
		if (!err)
			nr++;
	}
	free(line);
	fclose(f);
	if (nr)
		qsort(got, nr, sizeof(*got), cmp_mapping);
	for (size_t i = 1; i < nr; i++)
		disjoint &= got[i - 1].end <= got[i].start;
	if (!err && disjoint && !as->nr_maps) {
		/* Kept as long as the process: without the doubling's room (64 for cc1's 10). */
		struct mapping *fit = nr ? realloc(got, nr * sizeof(*got)) : NULL;

		addr_space__adopt_maps(as, fit ? fit : got, nr, nr);
		return 0;
	}
	for (size_t i = 0; i < nr; i++) {
		if (!err)
			err = addr_space__insert(as, &got[i]);
		mapping_free(as, &got[i]);
	}
	free(got);
	return err;
}

/* Whether cur maps m as m says (same place, file and offset). */
bool addr_space__maps_same(const struct addr_space *cur, const struct mapping *m)
{
	const struct mapping *c = addr_space__find(cur, m->start);

	return c && c->start == m->start && c->end == m->end && c->pgoff == m->pgoff &&
	       c->dev == m->dev && c->ino == m->ino;
}

/* Whether m overlaps a mapping of cur that is of another file or offset. */
bool addr_space__maps_other(const struct addr_space *cur, const struct mapping *m)
{
	for (size_t i = first_ending_after(cur, m->start);
	     i < cur->nr_maps && cur->maps[i].start < m->end; i++) {
		const struct mapping *c = &cur->maps[i];

		if (c->dev != m->dev || c->ino != m->ino ||
		    c->pgoff - c->start != m->pgoff - m->start)
			return true;
	}
	return false;
}
