// SPDX-License-Identifier: GPL-2.0
/*
 * .eh_frame read through a window of the file (tables_internal.h's
 * eh_window), not copied whole: libLLVM's is 5 MB, half of what its
 * compile held at its peak. The entries are read in order, then the FDEs
 * again in address order, which follows the section's order but for a few
 * jumps (a function's cold part, another input's text): a window of
 * EH_CHUNK bytes is read again only at those. The CIEs an FDE names lie
 * anywhere before it; each is read once into a slot of its own. What the
 * window cannot serve within EH_READ_LIMIT times the section (an order
 * made to defeat it) is served from a copy of the section after all.
 */
#include "unwind/tables/tables_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define EH_CHUNK (256u << 10)
/* An entry longer than this is skipped (the libunwind path's bound, unwind/fde.h). */
#define EH_MAX_ENTRY (1u << 20)
#define EH_READ_LIMIT 4

void eh_window__open(struct eh_window *w, const struct unwind_image *img, uint64_t vaddr,
		     uint64_t size)
{
	memset(w, 0, sizeof(*w));
	w->img = img;
	w->vaddr = vaddr;
	w->size = size;
}

void eh_window__close(struct eh_window *w)
{
	free(w->chunk);
	for (unsigned int i = 0; i < EH_CIE_SLOTS; i++)
		free(w->cie[i].data);
	memset(w, 0, sizeof(*w));
}

/*
 * Section bytes [off, off + len) in the chunk, read into it if they are not:
 * a chunk of EH_CHUNK bytes from off (or len, if more), or the whole section
 * once the reads pass their limit. False if they are outside the section or
 * the file is shorter now.
 */
static bool in_chunk(struct eh_window *w, uint64_t off, uint64_t len)
{
	uint64_t at = off, n = len > EH_CHUNK ? len : EH_CHUNK;

	if (off > w->size || len > w->size - off)
		return false;
	if (off >= w->at && off + len <= w->at + w->len)
		return true;
	if (w->bytes_read > EH_READ_LIMIT * w->size + EH_CHUNK) {
		at = 0;
		n = w->size;
	}
	if (n > w->size - at)
		n = w->size - at;
	if (n > w->cap) {
		unsigned char *p = realloc(w->chunk, n);

		if (!p)
			return false;
		w->chunk = p;
		w->cap = n;
	}
	w->len = 0;
	if (unwind_image__pread(w->img, w->vaddr + at, w->chunk, n))
		return false;
	w->at = at;
	w->len = n;
	w->bytes_read += n;
	return true;
}

static struct cfi_window chunk_window(const struct eh_window *w)
{
	return (struct cfi_window){ .off = w->at, .data = w->chunk, .size = w->len };
}

/* n bytes at off, from the chunk if it holds them (it is not moved), else from the file. */
static bool read_at(struct eh_window *w, uint64_t off, void *buf, size_t n)
{
	if (off > w->size || n > w->size - off)
		return false;
	if (off >= w->at && off + n <= w->at + w->len) {
		memcpy(buf, w->chunk + (off - w->at), n);
		return true;
	}
	return !unwind_image__pread(w->img, w->vaddr + off, buf, n);
}

/*
 * The length of the entry at off, its header included, if it fits in the
 * section: 0 at a terminator, where unreadable, or past the end.
 */
static uint64_t entry_len(struct eh_window *w, uint64_t off, bool *dwarf64)
{
	uint32_t len32;
	uint64_t len;

	if (!read_at(w, off, &len32, 4))
		return 0;
	*dwarf64 = len32 == 0xffffffff;
	if (!*dwarf64)
		len = len32 ? (uint64_t)len32 + 4 : 0;
	else if (!read_at(w, off + 4, &len, 8) || !len || len > w->size)
		len = 0;
	else
		len += 12;
	return len <= w->size - off ? len : 0;
}

/* The CIE entry at off in a slot (read there if no slot holds it): its window, or size 0. */
static struct cfi_window cie_window(struct eh_window *w, uint64_t off)
{
	struct cfi_window none = { 0 };
	struct eh_cie_slot *slot;
	unsigned char *p;
	bool dwarf64;
	uint64_t len;

	for (unsigned int i = 0; i < EH_CIE_SLOTS; i++)
		if (w->cie[i].data && w->cie[i].off == off)
			return (struct cfi_window){ .off = off, .data = w->cie[i].data,
						    .size = w->cie[i].len };
	len = entry_len(w, off, &dwarf64);
	if (!len || len > EH_MAX_ENTRY)
		return none;
	slot = &w->cie[w->next_cie++ % EH_CIE_SLOTS];
	p = realloc(slot->data, len);
	if (!p)
		return none;
	slot->data = p;
	slot->off = off;
	slot->len = 0;
	if (!read_at(w, off, p, len))
		return none;
	slot->len = len;
	return (struct cfi_window){ .off = off, .data = p, .size = len };
}

int eh_window__entry(struct eh_window *w, struct cfi_section *s, uint64_t off, uint64_t *next,
		     bool *fde)
{
	uint64_t len, id, id_pos, cie;
	bool dwarf64 = false;

	len = entry_len(w, off, &dwarf64);
	if (!len)
		return -1;
	*next = off + len;
	*fde = false;
	/* Past what any real entry takes: skipped, not read. */
	if (len > EH_MAX_ENTRY)
		return 0;
	id_pos = off + (dwarf64 ? 12 : 4);
	if (len < id_pos - off + (dwarf64 ? 8 : 4) || !in_chunk(w, off, len))
		return -1;
	if (dwarf64) {
		memcpy(&id, w->chunk + (id_pos - w->at), 8);
		cie = id_pos - id;
	} else {
		uint32_t id32;

		memcpy(&id32, w->chunk + (id_pos - w->at), 4);
		id = id32;
		cie = id_pos - (uint64_t)(int64_t)(int32_t)id32;
	}
	/*
	 * An FDE (a nonzero CIE pointer), and its CIE, whole in a slot, looked
	 * at first (it may also begin in the chunk and end past it); a CIE that
	 * cannot be read fails the FDE's checks.
	 */
	*fde = id != 0;
	s->windows[0] = *fde ? cie_window(w, cie) : (struct cfi_window){ 0 };
	s->windows[1] = chunk_window(w);
	s->nr_windows = 2;
	return 0;
}

int eh_window__fde(struct eh_window *w, struct cfi_section *s, uint64_t insn, uint64_t end,
		   const struct cfi_window *cie)
{
	if (end < insn || !in_chunk(w, insn, end - insn))
		return -EFAULT;
	s->windows[0] = *cie;
	s->windows[1] = chunk_window(w);
	s->nr_windows = 2;
	return 0;
}
