// SPDX-License-Identifier: GPL-2.0
#include "unwind/fde.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "unwind/cfi.h"

/* One read takes most entries whole: cc1's FDEs are 44 bytes (p50), 160 (p99). */
#define FIRST_READ 256

/* A CIE or FDE of .eh_frame as read from the file. */
struct entry_read {
	uint64_t vaddr;
	uint64_t len;		/* the whole entry, length field included */
	uint64_t id_vaddr;	/* its CIE id / CIE pointer */
	uint64_t id;
	bool dwarf64;
	unsigned char *data;	/* len bytes: head, or allocated when larger */
	unsigned char head[FIRST_READ];
};

int image_fde__search(const struct unwind_image *img, uint64_t vaddr, uint64_t *index)
{
	const unsigned char *t;
	/* libunwind's remote_lookup takes ip - segbase as an int32_t, so do we. */
	int32_t rel = (int32_t)(vaddr - img->eh_frame_hdr), start;
	uint64_t lo = 0, hi = img->fde_count;

	if (!img->has_table)
		return -ENOENT;
	t = img->hdr_copy.data + (img->table - img->hdr_copy.vaddr);
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		memcpy(&start, t + mid * 8, 4);
		if (rel < start)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!hi)
		return -ENOENT;
	*index = hi - 1;
	return 0;
}

/* The entry at vaddr, all inside .eh_frame. Returns 0, -EBADMSG, -EFAULT or -ENOMEM. */
static int read_entry(const struct unwind_image *img, uint64_t vaddr, struct entry_read *e)
{
	uint64_t end = img->eh_frame + img->eh_size, n, len;
	unsigned int hdr = 4, id_size = 4;
	uint32_t len32;
	int err;

	if (vaddr < img->eh_frame || vaddr >= end)
		return -EBADMSG;
	n = end - vaddr < FIRST_READ ? end - vaddr : FIRST_READ;
	if (n < 8)
		return -EBADMSG;
	err = unwind_image__pread(img, vaddr, e->head, n);
	if (err)
		return err;
	memcpy(&len32, e->head, 4);
	len = len32;
	if (len32 == 0xffffffff) {
		if (n < 20)
			return -EBADMSG;
		memcpy(&len, e->head + 4, 8);
		hdr = 12;
		id_size = 8;
	}
	/* A zero length ends the section: no entry. */
	if (len < id_size || len > IMAGE_MAX_ENTRY || len > end - vaddr - hdr)
		return -EBADMSG;
	e->vaddr = vaddr;
	e->len = hdr + len;
	e->id_vaddr = vaddr + hdr;
	e->id = 0;
	memcpy(&e->id, e->head + hdr, id_size);
	e->dwarf64 = hdr == 12;
	if (e->len <= n) {
		e->data = e->head;
		return 0;
	}
	e->data = malloc(e->len);
	if (!e->data)
		return -ENOMEM;
	memcpy(e->data, e->head, n);
	err = unwind_image__pread(img, vaddr + n, e->data + n, e->len - n);
	if (err) {
		free(e->data);
		e->data = NULL;
	}
	return err;
}

static void entry_done(struct entry_read *e)
{
	if (e->data != e->head)
		free(e->data);
	e->data = NULL;
}

struct word_note {
	const struct unwind_image *img;
	struct image_fde *f;
};

/* cfi indirect callback: keep the word at vaddr, read from the file now. */
static int note_word(void *ctx, uint64_t vaddr)
{
	struct word_note *n = ctx;
	struct image_fde *f = n->f;
	uint64_t val = 0;

	for (unsigned int i = 0; i < f->nr_words; i++)
		if (f->words[i].vaddr == vaddr)
			return 0;
	if (f->nr_words == IMAGE_FDE_WORDS || unwind_image__pread(n->img, vaddr, &val, 8))
		return -EFAULT;
	f->words[f->nr_words].vaddr = vaddr;
	f->words[f->nr_words++].val = val;
	return 0;
}

/* The FDE and CIE in one allocation, and checked there: libunwind reads these very bytes. */
static int check(const struct unwind_image *img, uint64_t index, const struct entry_read *fe,
		 const struct entry_read *ce, struct image_fde **out)
{
	struct image_fde *f = malloc(sizeof(*f) + fe->len + ce->len);
	struct word_note note = { .img = img, .f = f };
	struct cfi_window w[2];
	struct cfi_section s;
	struct cfi_fde cf;
	int err;

	if (!f)
		return -ENOMEM;
	memset(f, 0, sizeof(*f));
	f->index = index;
	f->entry = img->table + index * 8;
	f->bytes = sizeof(*f) + fe->len + ce->len;
	f->fde.vaddr = fe->vaddr;
	f->fde.size = fe->len;
	f->fde.data = (unsigned char *)(f + 1);
	memcpy(f->fde.data, fe->data, fe->len);
	f->cie.vaddr = ce->vaddr;
	f->cie.size = ce->len;
	f->cie.data = f->fde.data + fe->len;
	memcpy(f->cie.data, ce->data, ce->len);
	w[0] = (struct cfi_window){ fe->vaddr - img->eh_frame, f->fde.data, fe->len };
	w[1] = (struct cfi_window){ ce->vaddr - img->eh_frame, f->cie.data, ce->len };
	cfi__init_windows(&s, w, 2, img->eh_frame, CFI_EH_FRAME);
	s.indirect = note_word;
	s.ctx = &note;
	err = cfi__check_fde(&s, w[0].off, &cf);
	if (err) {
		free(f);
		return -EBADMSG;
	}
	*out = f;
	return 0;
}

int image_fde__read(const struct unwind_image *img, uint64_t index, struct image_fde **out)
{
	struct entry_read fe = { 0 }, ce = { 0 };
	uint64_t cie;
	int32_t rel;
	int err;

	*out = NULL;
	if (!img->has_table || index >= img->fde_count)
		return -ENOENT;
	memcpy(&rel, img->hdr_copy.data + (img->table - img->hdr_copy.vaddr) + index * 8 + 4, 4);
	err = read_entry(img, img->eh_frame_hdr + (int64_t)rel, &fe);
	if (err)
		goto out;
	/* An FDE points back to its CIE; a CIE (id 0) is no FDE. */
	err = -EBADMSG;
	if (!fe.id)
		goto out;
	cie = fe.id_vaddr - (fe.dwarf64 ? fe.id : (uint64_t)(int64_t)(int32_t)fe.id);
	err = read_entry(img, cie, &ce);
	if (err)
		goto out;
	/* Two reads of the same bytes may differ (the file rewritten between them). */
	if (ce.vaddr < fe.vaddr + fe.len && fe.vaddr < ce.vaddr + ce.len) {
		err = -EBADMSG;
		goto out;
	}
	err = check(img, index, &fe, &ce, out);
out:
	entry_done(&fe);
	entry_done(&ce);
	return err;
}

void image_fde__free(struct image_fde *f)
{
	free(f);
}
