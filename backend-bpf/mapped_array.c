// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/mapped_array.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

void mapped_array__init(struct mapped_array *m, int fd, size_t size, uint32_t max)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);
	long page = sysconf(_SC_PAGESIZE);
	void *p;

	memset(m, 0, sizeof(*m));
	m->fd = fd;
	memset(&info, 0, sizeof(info));
	if (fd < 0 || page <= 0 || bpf_obj_get_info_by_fd(fd, &info, &len) ||
	    info.type != BPF_MAP_TYPE_ARRAY || !(info.map_flags & BPF_F_MMAPABLE) ||
	    info.value_size != size || info.max_entries != max || !max)
		return;
	/* Mapped once here: a kernel that takes the flag but not the mapping writes by syscalls. */
	p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		return;
	munmap(p, (size_t)page);
	m->stride = (size + 7) & ~(size_t)7;
	m->page = (size_t)page;
	m->max = max;
	m->ok = true;
}

/*
 * The most a window maps at once: the kernel maps all of its pages at the
 * mmap, and a large table's rows in one window (a compile loop's cc1,
 * libLLVM's 817,666 rows: 6.2 MiB at 8 bytes a value) counted whole in the
 * profiler's peak RSS while they were written.
 */
#define MAPPED_ARRAY_WINDOW (256u << 10)

static size_t page_up(size_t x, size_t page)
{
	return (x + page - 1) & ~(page - 1);
}

int mapped_array__write(const struct mapped_array *m, const uint32_t *keys, uint32_t first,
			const void *values, size_t size, uint32_t n)
{
	uint32_t hi = 0;
	size_t off = 0, len = 0, end;
	char *win = NULL;

	if (!n)
		return 0;
	if (!m->ok || size > m->stride)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = keys ? keys[i] : first + i;

		if (k >= m->max || (!keys && k < first))
			return -E2BIG;
		hi = k > hi ? k : hi;
	}
	/* Not past the highest key's page: the map may end there. */
	end = page_up(((size_t)hi + 1) * m->stride, m->page);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = keys ? keys[i] : first + i;
		size_t at = (size_t)k * m->stride;

		if (!win || at < off || at + size > off + len) {
			if (win)
				munmap(win, len);
			off = at & ~(m->page - 1);
			len = end - off < MAPPED_ARRAY_WINDOW ? end - off : MAPPED_ARRAY_WINDOW;
			if (len < page_up(at + size, m->page) - off)
				len = page_up(at + size, m->page) - off;
			win = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, m->fd, (off_t)off);
			if (win == MAP_FAILED)
				return -errno;
		}
		memcpy(win + (at - off), (const char *)values + (size_t)i * size, size);
	}
	munmap(win, len);
	return 0;
}
