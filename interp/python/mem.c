// SPDX-License-Identifier: GPL-2.0
/*
 * Readers of another address space: a live process (its /proc/PID/mem
 * handle, or process_vm_readv by pid), an
 * image of address ranges (tests, fuzzing), and a page snapshot over either
 * for one walk.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core/lib/usermem.h"
#include "interp/python/pyint.h"

int py_mem__read(const struct py_mem *mem, uint64_t addr, void *buf, size_t len)
{
	return user_mem__read(mem->read, mem->ctx, addr, buf, len, PY_MEM_MAX_READ);
}

/* ---- a live process ---- */

static int proc_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_proc_mem *pm = ctx;
	ssize_t n;

	if (pm->by_pid) {
		struct iovec local = { .iov_base = buf, .iov_len = len };
		struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };

		n = process_vm_readv(pm->pid, &local, 1, &remote, 1, 0);
		if (n < 0)
			return errno == ENOMEM ? -EFAULT : -errno;
	} else if (pm->fd < 0) {
		return -ESRCH;	/* closed: its process ended */
	} else {
		/* Offsets are signed: no user address is that high. */
		if (addr > (uint64_t)INT64_MAX - len)
			return -EFAULT;
		n = pread(pm->fd, buf, len, (off_t)addr);
		/*
		 * The handle holds the address space it was opened on, never
		 * another's: once that one is gone (the process exited or
		 * exec'd), reads give nothing. An unmapped page fails with EIO.
		 */
		if (n == 0)
			return -ESRCH;
		if (n < 0)
			return errno == EIO || errno == ENOMEM ? -EFAULT : -errno;
	}
	/* A read cut short by an unmapped page is no read: its bytes would be half of a struct. */
	return (size_t)n == len ? 0 : -EFAULT;
}

void py_proc_mem__init(struct py_proc_mem *pm, pid_t pid)
{
	pm->pid = pid;
	pm->fd = -1;
	pm->by_pid = true;
	pm->mem.read = proc_read;
	pm->mem.ctx = pm;
}

int py_proc_mem__open(struct py_proc_mem *pm, pid_t pid)
{
	char path[64];

	py_proc_mem__init(pm, pid);
	pm->by_pid = false;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	pm->fd = open(path, O_RDONLY | O_CLOEXEC);
	return pm->fd < 0 ? -errno : 0;
}

void py_proc_mem__use_fd(struct py_proc_mem *pm, pid_t pid, int fd)
{
	py_proc_mem__init(pm, pid);
	pm->by_pid = false;
	pm->fd = fd;
}

void py_proc_mem__close(struct py_proc_mem *pm)
{
	if (pm->fd >= 0)
		close(pm->fd);
	pm->fd = -1;
}

/* ---- an image ---- */

struct image_range {
	uint64_t addr;
	size_t len;
	uint8_t *data;
};

struct py_image {
	struct image_range *ranges;	/* sorted by addr, disjoint */
	size_t nr, cap;
};

struct py_image *py_image__new(void)
{
	return calloc(1, sizeof(struct py_image));
}

void py_image__free(struct py_image *img)
{
	if (!img)
		return;
	for (size_t i = 0; i < img->nr; i++)
		free(img->ranges[i].data);
	free(img->ranges);
	free(img);
}

/* The index of the first range ending after addr. */
static size_t image_find(const struct py_image *img, uint64_t addr)
{
	size_t lo = 0, hi = img->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct image_range *r = &img->ranges[mid];

		if (r->addr + r->len <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int py_image__add(struct py_image *img, uint64_t addr, const void *data, size_t len)
{
	struct image_range *r;
	size_t at;

	if (!len || addr + len < addr)
		return -EINVAL;
	at = image_find(img, addr);
	if (at < img->nr && img->ranges[at].addr < addr + len)
		return -EEXIST;
	if (img->nr == img->cap) {
		size_t ncap = img->cap ? 2 * img->cap : 16;
		struct image_range *tmp = realloc(img->ranges, ncap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		img->ranges = tmp;
		img->cap = ncap;
	}
	r = &img->ranges[at];
	memmove(r + 1, r, (img->nr - at) * sizeof(*r));
	r->data = malloc(len);
	if (!r->data) {
		memmove(r, r + 1, (img->nr - at) * sizeof(*r));
		return -ENOMEM;
	}
	memcpy(r->data, data, len);
	r->addr = addr;
	r->len = len;
	img->nr++;
	return 0;
}

static int image_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	const struct py_image *img = ctx;
	size_t at = image_find(img, addr);
	const struct image_range *r;

	if (at == img->nr)
		return -EFAULT;
	r = &img->ranges[at];
	if (addr < r->addr || addr + len > r->addr + r->len)
		return -EFAULT;
	memcpy(buf, r->data + (addr - r->addr), len);
	return 0;
}

void py_image__mem(struct py_image *img, struct py_mem *mem)
{
	mem->read = image_read;
	mem->ctx = img;
}

/* ---- a page snapshot ---- */

/* The slot holding page, read now if no slot does. */
static int snap_page(struct py_snap *s, uint64_t page, const uint8_t **data)
{
	unsigned int i;

	for (i = 0; i < PY_SNAP_PAGES; i++)
		if (s->pages[i].addr == page)
			break;
	if (i == PY_SNAP_PAGES) {
		i = s->next;
		s->next = (s->next + 1) % PY_SNAP_PAGES;
		s->pages[i].addr = page;
		s->syscalls++;
		s->pages[i].err = py_mem__read(s->under, page, s->pages[i].data, PY_SNAP_PAGE_SIZE);
	}
	*data = s->pages[i].data;
	return s->pages[i].err;
}

/*
 * Memory is mapped by whole pages: a page that reads as a whole holds every
 * smaller read in it. One that does not is read again exactly (an image's
 * ranges need not be pages; a process's page that failed fails again).
 */
static int snap_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_snap *s = ctx;
	uint64_t start = addr;
	uint8_t *out = buf;

	while (len) {
		uint64_t page = addr & ~(uint64_t)(PY_SNAP_PAGE_SIZE - 1);
		size_t in = addr - page, n = PY_SNAP_PAGE_SIZE - in;
		const uint8_t *data;
		int err;

		if (n > len)
			n = len;
		err = snap_page(s, page, &data);
		if (err == -EFAULT) {
			s->syscalls++;
			return py_mem__read(s->under, start, buf, (size_t)(addr - start) + len);
		}
		if (err)
			return err;
		memcpy(out, data + in, n);
		out += n;
		addr += n;
		len -= n;
	}
	return 0;
}

void py_snap__reset(struct py_snap *s)
{
	for (unsigned int i = 0; i < PY_SNAP_PAGES; i++)
		s->pages[i].addr = UINT64_MAX;
	s->next = 0;
}

void py_snap__init(struct py_snap *s, const struct py_mem *under)
{
	s->under = under;
	s->syscalls = 0;
	s->mem.read = snap_read;
	s->mem.ctx = s;
	py_snap__reset(s);
}
