// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as an ELF image and its unwind tables,
 * read by the unwinder's image code (headers, .eh_frame_hdr search table,
 * .eh_frame FDEs read and checked one lookup at a time, .debug_frame
 * checks), then handed to libunwind the way the unwinder hands them:
 * lookups of the table's entries and unwind steps over a stack from the
 * input.
 *
 * Two oracles watch libunwind, which ASan does not instrument:
 * - lookups through .eh_frame_hdr read through our accessor, which aborts
 *   on any read outside the search table and the FDE, CIE and words the
 *   lookup checked: libunwind must parse nothing the checks did not see;
 * - .debug_frame, which libunwind reads from our memory unchecked, is put
 *   against a PROT_NONE page (after its end or before its start, the input
 *   chooses): a read outside it faults.
 * A hang (libunwind looping on a table) shows as a libFuzzer timeout.
 *
 * Input: an 8-byte header, then
 * - mode bit 0 clear: the contents of .eh_frame_hdr, .eh_frame and
 *   .debug_frame (lengths in the header), around which an ELF file is made
 *   (section headers, PT_LOAD, PT_GNU_EH_FRAME); .eh_frame starts gap bytes
 *   after .eh_frame_hdr, as in the binary a seed came from;
 * - mode bit 0 set: the ELF file itself;
 * then a sample: 8 bytes (frame pointer), the rest its stack.
 * Header: mode, gap, hdr_len (le16), eh_len (le16), df_len (le16).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/support/cfi_elf.h"
#include "unwind/debugframe.h"
#include "unwind/fde.h"
#include "unwind/image.h"
#include "unwind/libunwind-private.h"

#define BIAS 0x7f0000000000ull		/* where the image is "mapped" */
#define FAKE_SP 0x7ffd00000000ull
#define MAX_LOOKUPS 16
#define MAX_STEPS 8
#define MAX_STACK 512

struct harness {
	struct unwind_image img;
	struct image_fde *fde;	/* the last lookup's, as the unwinder's ctx->last_fde */
	bool has_df;
	struct lu_debug_frame_list fdesc;	/* over the guarded copy */
	bool strict;		/* lookups: every read must be of the checked copies */
	uint64_t ip, sp, bp;
	const unsigned char *stack;
	size_t stack_size;
};

static unw_addr_space_t uas;

static int find_proc_info(unw_addr_space_t as, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct harness *h = arg;
	unw_dyn_info_t di;
	int ret = -UNW_ENOINFO;

	uint64_t index;

	memset(&di, 0, sizeof(di));
	di.start_ip = 0;
	di.end_ip = ~(unw_word_t)0;
	image_fde__free(h->fde);
	h->fde = NULL;
	/* As the unwinder: the entry found, its FDE read and checked, a table of that one entry. */
	if (!image_fde__search(&h->img, ip - BIAS, &index) &&
	    !image_fde__read(&h->img, index, &h->fde)) {
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.u.rti.segbase = BIAS + h->img.eh_frame_hdr;
		di.u.rti.table_data = BIAS + h->fde->entry;
		di.u.rti.table_len = 8 / sizeof(unw_word_t);
		ret = dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, h);
	}
	if (ret != -UNW_ENOINFO || !h->has_df)
		return ret;
	di.format = UNW_INFO_FORMAT_TABLE;
	di.u.ti.segbase = BIAS;
	di.u.ti.table_data = (unw_word_t *)&h->fdesc;
	di.u.ti.table_len = sizeof(h->fdesc) / sizeof(unw_word_t);
	return dwarf_search_unwind_table(as, ip, &di, pi, need_unwind_info, h);
}

static void put_unwind_info(unw_addr_space_t as, unw_proc_info_t *pi, void *arg)
{
}

static int get_dyn_info_list_addr(unw_addr_space_t as, unw_word_t *addr, void *arg)
{
	return -UNW_ENOINFO;
}

static int access_mem(unw_addr_space_t as, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	struct harness *h = arg;

	if (write || addr < 4096)	/* as the unwinder's access_mem */
		return -UNW_EINVAL;
	if (!unwind_image__table_read(&h->img, h->fde, addr - BIAS, (uint64_t *)valp))
		return 0;
	if (h->strict) {
		fprintf(stderr, "libunwind read 0x%llx, outside the checked tables\n",
			(unsigned long long)(addr - BIAS));
		abort();
	}
	if (addr >= h->sp && addr - h->sp < h->stack_size && h->stack_size - (addr - h->sp) >= 8) {
		memcpy(valp, h->stack + (addr - h->sp), 8);
		return 0;
	}
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t as, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	struct harness *h = arg;

	if (write)
		return -UNW_EREADONLYREG;
	switch (reg) {
	case UNW_X86_64_RIP:
		*valp = h->ip;
		return 0;
	case UNW_X86_64_RSP:
		*valp = h->sp;
		return 0;
	case UNW_X86_64_RBP:
		*valp = h->bp;
		return 0;
	default:
		return -UNW_EBADREG;
	}
}

static int access_fpreg(unw_addr_space_t as, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t as, unw_cursor_t *c, void *arg)
{
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t as, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	return -UNW_EINVAL;
}

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/*
 * The checked .debug_frame against a PROT_NONE page: right after its padded
 * end, or right before its start. Returns the mapping to unmap, or NULL.
 */
static void *guard_copy(const struct debug_frame *df, bool at_start, size_t *map_size,
			char **copy)
{
	size_t page = getpagesize(), len = cfi_elf__align8(df->size);
	size_t pages = (len + page - 1) / page;
	char *map;

	*map_size = (pages + 2) * page;
	map = mmap(NULL, *map_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + page, pages * page, PROT_READ | PROT_WRITE)) {
		munmap(map, *map_size);
		return NULL;
	}
	*copy = at_start ? map + page : map + page + pages * page - len;
	memcpy(*copy, df->data, df->size);
	/*
	 * libunwind reads the aligned word around each byte: the guard can be
	 * no closer than that. Padding of 0x80 lets a LEB128 that runs off
	 * the end run on into it.
	 */
	memset(*copy + df->size, 0x80, len - df->size);
	return map;
}

/* The ELF vaddr that the search table's entry i starts at (the table is checked and kept). */
static uint64_t entry_start(const struct unwind_image *img, uint64_t i)
{
	uint64_t w = 0;

	unwind_image__table_read(img, NULL, img->table + i * 8, &w);
	return img->eh_frame_hdr + (int64_t)(int32_t)w;
}

static void lookups(struct harness *h, const struct debug_frame *df, uint8_t delta)
{
	unw_proc_info_t pi;
	unw_dyn_info_t di;

	h->strict = true;
	for (uint64_t i = 0; i < h->img.fde_count && i < MAX_LOOKUPS; i++) {
		memset(&pi, 0, sizeof(pi));
		find_proc_info(uas, BIAS + entry_start(&h->img, i) + delta % 16, &pi, 0, h);
	}
	h->strict = false;
	for (size_t i = 0; h->has_df && i < df->nr_index && i < MAX_LOOKUPS; i++) {
		memset(&di, 0, sizeof(di));
		memset(&pi, 0, sizeof(pi));
		di.end_ip = ~(unw_word_t)0;
		di.format = UNW_INFO_FORMAT_TABLE;
		di.u.ti.segbase = BIAS;
		di.u.ti.table_data = (unw_word_t *)&h->fdesc;
		di.u.ti.table_len = sizeof(h->fdesc) / sizeof(unw_word_t);
		dwarf_search_unwind_table(uas, BIAS + (uint32_t)df->index[i].start + delta % 16,
					  &di, &pi, 0, h);
	}
}

static void steps(struct harness *h, uint64_t ip)
{
	unw_cursor_t c;
	unw_word_t v;

	h->ip = ip;
	h->sp = FAKE_SP;
	if (unw_init_remote(&c, uas, h) < 0)
		return;
	for (unsigned int i = 0; i < MAX_STEPS && unw_step(&c) > 0; i++)
		if (unw_get_reg(&c, UNW_X86_64_RIP, &v) || !v)
			break;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static unsigned char elf[1 << 17];
	struct harness h = { 0 };
	struct debug_frame df;
	const uint8_t *sample;
	size_t elf_size, hdr_len, eh_len, df_len, map_size = 0, sample_size;
	char *copy = NULL;
	void *map = NULL;
	uint8_t mode, gap;

	if (!uas) {
		uas = unw_create_addr_space(&accessors, 0);
		if (!uas)
			abort();
		unw_set_caching_policy(uas, UNW_CACHE_NONE);
	}
	if (size < 8)
		return 0;
	mode = data[0];
	gap = data[1] & 15;
	hdr_len = le16(data + 2);
	eh_len = le16(data + 4);
	df_len = le16(data + 6);
	data += 8;
	size -= 8;
	if (mode & 1) {
		/* The whole ELF file, its length in hdr_len's place */
		elf_size = hdr_len < size ? hdr_len : size;
		memcpy(elf, data, elf_size);
	} else {
		if (hdr_len > size || eh_len > size - hdr_len || df_len > size - hdr_len - eh_len)
			return 0;
		elf_size = cfi_elf__make(elf, sizeof(elf), &(struct cfi_elf){
			.hdr = data, .hdr_len = hdr_len, .gap = gap,
			.eh = data + hdr_len, .eh_len = eh_len,
			.df = data + hdr_len + eh_len, .df_len = df_len });
		if (!elf_size)
			return 0;
		hdr_len += eh_len + df_len;
	}
	sample = data + (mode & 1 ? elf_size : hdr_len);
	sample_size = size - (sample - data);
	if (unwind_image__from_memory(&h.img, elf, elf_size))
		return 0;

	/* Reads around the checked copies, as access_mem makes them. */
	if (h.img.fde_count)
		image_fde__read(&h.img, mode % h.img.fde_count, &h.fde);
	for (int i = -8; i < 8; i++) {
		uint64_t v;

		unwind_image__read(&h.img, h.fde, h.img.hdr_copy.vaddr + i, &v);
		unwind_image__read(&h.img, h.fde, h.img.eh_frame + h.img.eh_size + i, &v);
		if (h.fde) {
			const struct image_copy *c = &h.fde->fde;

			unwind_image__read(&h.img, h.fde, c->vaddr + c->size + i, &v);
			unwind_image__read(&h.img, h.fde, h.fde->cie.vaddr + i, &v);
		}
	}

	if (!debug_frame__load(&df, &h.img, NULL)) {
		map = guard_copy(&df, mode & 2, &map_size, &copy);
		if (map) {
			h.has_df = true;
			h.fdesc.debug_frame = copy;
			h.fdesc.debug_frame_size = df.size;
			h.fdesc.index = df.index;
			h.fdesc.index_size = df.nr_index * sizeof(df.index[0]);
		}
	}
	lookups(&h, &df, mode >> 4);

	if (sample_size >= 8) {
		memcpy(&h.bp, sample, 8);
		h.stack = sample + 8;
		h.stack_size = sample_size - 8 < MAX_STACK ? sample_size - 8 : MAX_STACK;
		if (h.img.fde_count)
			steps(&h, BIAS + entry_start(&h.img, h.bp % h.img.fde_count) + mode % 8);
		if (h.has_df)
			steps(&h, BIAS + (uint32_t)df.index[h.bp % df.nr_index].start + mode % 8);
	}

	if (map)
		munmap(map, map_size);
	if (h.has_df || df.copy)
		debug_frame__free(&df);
	image_fde__free(h.fde);
	unwind_image__close(&h.img);
	return 0;
}
