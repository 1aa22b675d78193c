// SPDX-License-Identifier: GPL-2.0
#include "unwind/debugframe.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/userfile.h"
#include "unwind/cfi.h"

static int cmp_entry(const void *a, const void *b)
{
	const struct frame_index_entry *x = a, *y = b;

	return (x->start > y->start) - (x->start < y->start);
}

/*
 * libunwind 1.6 reads a version 4 CIE (clang's, DWARF 5) as if it were
 * version 3, without its address_size and segment_size bytes, and then
 * misreads every field after them. Such a CIE is rewritten as version 3:
 * those two bytes removed (when they say 8 and 0), two DW_CFA_nop appended
 * so that nothing moves. A CIE with augmentation data is left alone.
 * cie[hdr..end) is the CIE after its length and id.
 */
static void downgrade_cie(unsigned char *cie, size_t hdr, size_t end)
{
	size_t p = hdr;

	if (end < hdr || end - hdr < 4 || cie[p] != 4 || cie[p + 1] != 0 /* augmentation "" */)
		return;
	p += 2;		/* version, empty augmentation string */
	if (cie[p] != 8 || cie[p + 1] != 0)
		return;
	memmove(cie + p, cie + p + 2, end - p - 2);
	cie[end - 2] = 0;
	cie[end - 1] = 0;
	cie[hdr] = 3;
}

struct frame_entry {
	size_t len;		/* the whole entry */
	size_t hdr;		/* length and id */
	bool fde;		/* libunwind takes it for an FDE */
	bool cie;		/* a CIE as libunwind parses one */
};

/*
 * The .debug_frame entry at off. 64-bit DWARF (length 0xffffffff) has 8-byte
 * lengths and CIE pointers. Returns 0, or -1 at the end and where the
 * framing is lost (a zero length ends the section too).
 */
static int frame_entry(const unsigned char *d, size_t size, size_t off, struct frame_entry *e)
{
	uint32_t len32;
	uint64_t len, id = 0;
	unsigned int id_size = 4;

	if (size - off < 4)
		return -1;
	memcpy(&len32, d + off, 4);
	if (!len32)
		return -1;
	e->hdr = 4;
	len = len32;
	if (len32 == 0xffffffff) {
		if (size - off < 12)
			return -1;
		memcpy(&len, d + off + 4, 8);
		e->hdr = 12;
		id_size = 8;
	}
	if (len > size - off - e->hdr || len < id_size)
		return -1;
	e->len = e->hdr + len;
	memcpy(&id, d + off + e->hdr, id_size);
	e->hdr += id_size;
	/* libunwind's is_cie_id for .debug_frame, and the id its parse_cie expects */
	e->fde = !(id == 0xffffffff || (id_size == 8 && id == UINT64_MAX));
	e->cie = id == (id_size == 8 ? UINT64_MAX : 0xffffffff);
	return 0;
}

/*
 * One index entry per FDE that passes the checks. .debug_frame FDEs point
 * to their CIE by section offset and hold absolute addresses of the file's
 * address size (8 here). CIEs are repaired for libunwind first, since FDEs
 * are checked as libunwind will read them.
 */
static int build_index(struct debug_frame *df)
{
	struct cfi_section s;
	struct frame_entry e;
	size_t off, cap = 0;

	for (off = 0; !frame_entry(df->copy, df->size, off, &e); off += e.len)
		if (e.cie)
			downgrade_cie(df->copy + off, e.hdr, e.len);
	if (df->size - off >= 4 && memcmp(df->copy + off, "\0\0\0\0", 4))
		df->bad_fdes++;		/* framing lost: what follows is not read */
	cfi__init(&s, df->copy, df->size, 0, CFI_DEBUG_FRAME);
	for (off = 0; !frame_entry(df->copy, df->size, off, &e); off += e.len) {
		struct cfi_fde f;
		int err;

		if (!e.fde)
			continue;
		err = cfi__check_fde(&s, off, &f);
		if (err == -E2BIG)
			return -ENOENT;	/* hostile: nothing of it is used */
		if (err) {
			df->bad_fdes++;
			continue;
		}
		/* 0: an FDE of code the linker discarded. */
		if (!f.pc_begin || f.pc_begin > INT32_MAX || off > INT32_MAX)
			continue;
		/* One spare entry: libunwind 1.6 reads the one after the entry it finds. */
		if (df->nr_index + 1 >= cap) {
			size_t ncap = cap ? cap * 2 : 256;
			void *p = realloc(df->index, ncap * sizeof(*df->index));

			if (!p)
				return -ENOMEM;
			df->index = p;
			cap = ncap;
		}
		df->index[df->nr_index].start = (int32_t)f.pc_begin;
		df->index[df->nr_index++].fde = (int32_t)off;
	}
	if (!df->nr_index)
		return -ENOENT;
	qsort(df->index, df->nr_index, sizeof(*df->index), cmp_entry);
	memset(&df->index[df->nr_index], 0, sizeof(*df->index));
	return 0;
}

int debug_frame__load(struct debug_frame *df, const struct unwind_image *img,
		      const char *debug_path)
{
	struct unwind_image dbg;
	unsigned int bad;
	int fd, err;

	memset(df, 0, sizeof(*df));
	/* A copy, to repair it for libunwind (downgrade_cie) and to outlive the file. */
	err = unwind_image__copy_section(img, ".debug_frame", &df->copy, &df->size);
	if (err && err != -ENOMEM && debug_path) {
		uint64_t size;

		/* Found by a name a binary's owner chose: a regular file, never a FIFO. */
		fd = userfile__open(debug_path, false, USERFILE_MAX_SIZE, &size);
		if (fd < 0)
			return -ENOENT;
		err = unwind_image__open_fd(&dbg, fd);
		close(fd);
		if (err)
			return -ENOENT;
		err = unwind_image__copy_section(&dbg, ".debug_frame", &df->copy, &df->size);
		unwind_image__close(&dbg);
	}
	if (err) {
		memset(df, 0, sizeof(*df));
		return err == -ENOMEM ? err : -ENOENT;
	}
	df->data = df->copy;
	err = build_index(df);
	if (err) {
		bad = df->bad_fdes;
		debug_frame__free(df);
		df->bad_fdes = bad;
	}
	return err;
}

void debug_frame__free(struct debug_frame *df)
{
	free(df->index);
	free(df->copy);
	memset(df, 0, sizeof(*df));
}
