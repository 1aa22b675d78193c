// SPDX-License-Identifier: GPL-2.0
/*
 * Tests only, until the store (backend-bpf/native_store) lands: a minimal
 * filler of the native unwinder's maps (bpf/native_maps.h), so that the
 * program can be run on real processes. For each process noted, every
 * executable file mapping of /proc/PID/maps gets its table compiled
 * (unwind/tables, once a path) and its pages entered: TABLE for a 64 KiB
 * page inside one mapping, SPLIT and 4 KiB pages at a mapping's ends,
 * NO_TABLE where the file has no tables. Rules are appended, not
 * interned; nothing is ever removed. Not what the product does.
 */
#include "tests/seams/native_filler.h"

#include <bpf/bpf.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwind/image.h"
#include "unwind/tables/tables.h"

#define MAX_FILES 64

static struct {
	char path[256];
	uint32_t table;		/* 0: none */
	uint32_t kind;
	uint64_t base;
	int has;
} files[MAX_FILES];
static int nr_files;
static uint32_t next_row, next_rule = 1;	/* rule 0 is NONE: slot 0 of native_rules */

/* The table of path, loaded into the maps once: its id, 0 if it has none. */
static uint32_t load_table(const struct native_maps_fds *fds, const char *path,
			   struct unwind_image *img)
{
	struct unwind_table *t;
	uint32_t id = (uint32_t)nr_files + 1;

	for (int i = 0; i < nr_files; i++)
		if (!strcmp(files[i].path, path))
			return files[i].table;
	if (nr_files == MAX_FILES)
		return 0;
	snprintf(files[nr_files].path, sizeof(files[0].path), "%s", path);
	files[nr_files].table = 0;
	nr_files++;
	if (unwind_table__compile(img, &t))
		return 0;
	if (next_rule + t->nr_rules > 65536) {
		unwind_table__free(t);
		return 0;
	}
	for (uint32_t r = 1; r < t->nr_rules; r++) {
		__u32 slot = next_rule + r - 1;

		bpf_map_update_elem(fds->rules, &slot, &t->rules[r], BPF_ANY);
	}
	/* One call where the kernel has batches (5.6): a row a call took tens of ms for libc. */
	if (t->nr_rows) {
		__u32 *keys = calloc(t->nr_rows, sizeof(*keys)), *vals = calloc(t->nr_rows, sizeof(*vals));
		__u32 count = t->nr_rows;

		for (uint32_t i = 0; keys && vals && i < t->nr_rows; i++) {
			uint32_t rule = t->rows[i].rule ? next_rule + t->rows[i].rule - 1 : 0;

			keys[i] = next_row + i;
			vals[i] = rule << 16 | t->rows[i].addr;
		}
		if (keys && vals && bpf_map_update_batch(fds->rows, keys, vals, &count, NULL))
			for (uint32_t i = 0; i < t->nr_rows; i++)
				bpf_map_update_elem(fds->rows, &keys[i], &vals[i], BPF_ANY);
		free(keys);
		free(vals);
	}
	for (uint32_t p = 0; p < t->nr_pages; p++) {
		struct native_index_key k = { id, (uint32_t)(t->base >> 16) + p };
		struct native_range r = { next_row + t->pages[p], t->pages[p + 1] - t->pages[p] };

		if (r.nr)
			bpf_map_update_elem(fds->index, &k, &r, BPF_ANY);
	}
	next_row += t->nr_rows;
	next_rule += t->nr_rules - 1;
	unwind_table__free(t);
	files[nr_files - 1].table = id;
	return id;
}

static void put_page(const struct native_maps_fds *fds, uint32_t pid, int small, uint64_t page,
		     uint64_t bias, uint32_t table, uint32_t kind)
{
	struct native_page_key k = { .tgid = pid, .small = (uint32_t)small, .page = page };
	struct native_page v = { .bias = bias, .table = table, .kind = kind };

	bpf_map_update_elem(fds->pages, &k, &v, BPF_ANY);
}

static void add_mapping(const struct native_maps_fds *fds, uint32_t pid, uint64_t start,
			uint64_t end, uint64_t pgoff, const char *path)
{
	struct unwind_image img;
	uint64_t bias = 0, lo = start >> 16, hi = (end - 1) >> 16;
	uint32_t table = 0, kind;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return;
	if (unwind_image__open_fd(&img, fd)) {
		close(fd);
		return;
	}
	close(fd);
	if (!unwind_image__bias(&img, start, pgoff, &bias))
		table = load_table(fds, path, &img);
	unwind_image__close(&img);
	kind = table ? NATIVE_PAGE_TABLE : NATIVE_PAGE_NO_TABLE;
	for (uint64_t p = lo; p <= hi; p++) {
		uint64_t ps = p << 16, pe = ps + (1 << 16);

		if (ps >= start && pe <= end) {
			put_page(fds, pid, 0, p, bias, table, kind);
			continue;
		}
		put_page(fds, pid, 0, p, 0, 0, NATIVE_PAGE_SPLIT);
		for (uint64_t q = (ps > start ? ps : start) >> 12; q < (pe < end ? pe : end) >> 12; q++)
			put_page(fds, pid, 1, q, bias, table, kind);
	}
}

void native_filler__add(const struct native_maps_fds *fds, int pid)
{
	char path[64], line[512], file[256], perms[8];
	unsigned long long start, end, pgoff;
	__u32 key = (__u32)pid, one = 1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %255s", &start, &end, perms, &pgoff,
			   file) < 4)
			continue;
		if (perms[2] != 'x' || file[0] != '/')
			continue;
		add_mapping(fds, (uint32_t)pid, start, end, pgoff, file);
	}
	fclose(f);
	bpf_map_update_elem(fds->procs, &key, &one, BPF_ANY);
}
