// SPDX-License-Identifier: GPL-2.0
#include "unwind/image.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* DWARF pointer encodings used by .eh_frame_hdr (LSB "Exception Frame Header"). */
#define DW_EH_PE_omit 0xff
#define DW_EH_PE_absptr 0x00
#define DW_EH_PE_udata4 0x03
#define DW_EH_PE_sdata4 0x0b
#define DW_EH_PE_udata8 0x04
#define DW_EH_PE_sdata8 0x0c
#define DW_EH_PE_datarel 0x30

/* The file offset of ELF vaddr, or -1 outside the file-backed part of a segment. */
static int64_t file_offset(const struct unwind_image *img, uint64_t vaddr, uint64_t len)
{
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];

		if (vaddr >= ph->p_vaddr && vaddr + len <= ph->p_vaddr + ph->p_filesz) {
			uint64_t off = vaddr - ph->p_vaddr + ph->p_offset;

			return off + len <= img->size ? (int64_t)off : -1;
		}
	}
	return -1;
}

static unsigned int encoded_size(uint8_t enc)
{
	switch (enc & 0x0f) {
	case DW_EH_PE_udata4:
	case DW_EH_PE_sdata4:
		return 4;
	case DW_EH_PE_absptr:
	case DW_EH_PE_udata8:
	case DW_EH_PE_sdata8:
		return 8;
	default:
		return 0;	/* uleb128 and friends: not used by linkers for this header */
	}
}

/* Find .eh_frame_hdr through PT_GNU_EH_FRAME and check its table is searchable. */
static void find_table(struct unwind_image *img, const Elf64_Phdr *hdr_ph)
{
	uint64_t v = hdr_ph->p_vaddr, count = 0;
	int64_t off = file_offset(img, v, 4);
	const unsigned char *h;
	unsigned int ptr_size, count_size;

	if (off < 0)
		return;
	h = img->data + off;
	/* version 1; eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (h[0] != 1 || h[2] == DW_EH_PE_omit ||
	    h[3] != (DW_EH_PE_datarel | DW_EH_PE_sdata4))
		return;
	ptr_size = encoded_size(h[1]);
	count_size = encoded_size(h[2]);
	if (!ptr_size || !count_size)
		return;
	off = file_offset(img, v + 4 + ptr_size, count_size);
	if (off < 0)
		return;
	memcpy(&count, img->data + off, count_size);	/* little-endian */
	img->eh_frame_hdr = v;
	img->table = v + 4 + ptr_size + count_size;
	img->fde_count = count;
	/* Each entry is two sdata4: initial location and FDE address. */
	img->has_table = count > 0 && file_offset(img, img->table, count * 8) >= 0;
}

static int parse(struct unwind_image *img)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->data;
	const Elf64_Phdr *hdr_ph = NULL;

	if (img->size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > img->size ||
	    (img->size - eh->e_phoff) / sizeof(Elf64_Phdr) < eh->e_phnum)
		return -ENOEXEC;
	for (unsigned int i = 0; i < eh->e_phnum; i++) {
		const Elf64_Phdr *ph = (const Elf64_Phdr *)(img->data + eh->e_phoff) + i;

		if (ph->p_type == PT_LOAD && img->nr_loads < IMAGE_MAX_LOADS)
			img->loads[img->nr_loads++] = *ph;
		else if (ph->p_type == PT_GNU_EH_FRAME)
			hdr_ph = ph;
	}
	if (!img->nr_loads)
		return -ENOEXEC;
	if (hdr_ph)
		find_table(img, hdr_ph);
	return 0;
}

int unwind_image__open_fd(struct unwind_image *img, int fd)
{
	struct stat st;
	void *p;
	int err;

	memset(img, 0, sizeof(*img));
	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		return -ENOEXEC;
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	img->data = p;
	img->size = st.st_size;
	img->mapped = true;
	err = parse(img);
	if (err)
		unwind_image__close(img);
	return err;
}

int unwind_image__from_memory(struct unwind_image *img, const void *data, size_t size)
{
	memset(img, 0, sizeof(*img));
	img->data = data;
	img->size = size;
	return parse(img);
}

void unwind_image__close(struct unwind_image *img)
{
	if (img->mapped)
		munmap((void *)img->data, img->size);
	memset(img, 0, sizeof(*img));
}

int unwind_image__bias(const struct unwind_image *img, uint64_t start, uint64_t pgoff,
		       uint64_t *bias)
{
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];
		/* The mapping starts at pgoff, the segment's offset rounded down to a page. */
		uint64_t first = ph->p_offset & ~(uint64_t)0xfff;

		if (!(ph->p_flags & PF_X) || pgoff < first || pgoff >= ph->p_offset + ph->p_filesz)
			continue;
		*bias = start - (pgoff - ph->p_offset + ph->p_vaddr);
		return 0;
	}
	return -ENOENT;
}

int unwind_image__read(const struct unwind_image *img, uint64_t vaddr, uint64_t *val)
{
	/*
	 * libunwind reads aligned words: the last one of a segment may stick out
	 * past its file-backed end. Those bytes read as zero, as in memory.
	 */
	for (unsigned int i = 0; i < img->nr_loads; i++) {
		const Elf64_Phdr *ph = &img->loads[i];
		uint64_t off, n;

		if (vaddr < ph->p_vaddr || vaddr >= ph->p_vaddr + ph->p_filesz)
			continue;
		off = vaddr - ph->p_vaddr + ph->p_offset;
		if (off >= img->size)
			return -EFAULT;
		n = ph->p_vaddr + ph->p_filesz - vaddr;
		if (n > 8)
			n = 8;
		if (n > img->size - off)
			n = img->size - off;
		*val = 0;
		memcpy(val, img->data + off, n);
		return 0;
	}
	return -EFAULT;
}

const unsigned char *unwind_image__section(const struct unwind_image *img, const char *name,
					   size_t *size)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img->data;
	const Elf64_Shdr *sh, *strtab;

	if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr) || eh->e_shoff > img->size ||
	    (img->size - eh->e_shoff) / sizeof(Elf64_Shdr) < eh->e_shnum ||
	    eh->e_shstrndx >= eh->e_shnum)
		return NULL;
	sh = (const Elf64_Shdr *)(img->data + eh->e_shoff);
	strtab = &sh[eh->e_shstrndx];
	if (strtab->sh_offset > img->size || strtab->sh_size > img->size - strtab->sh_offset)
		return NULL;
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		const char *n = (const char *)img->data + strtab->sh_offset + sh[i].sh_name;

		if (sh[i].sh_name >= strtab->sh_size || sh[i].sh_type == SHT_NOBITS ||
		    strnlen(n, strtab->sh_size - sh[i].sh_name) == strtab->sh_size - sh[i].sh_name ||
		    strcmp(n, name))
			continue;
		if (sh[i].sh_offset > img->size || sh[i].sh_size > img->size - sh[i].sh_offset)
			return NULL;
		*size = sh[i].sh_size;
		return img->data + sh[i].sh_offset;
	}
	return NULL;
}

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
 */
static void downgrade_cie(unsigned char *cie, size_t hdr, size_t end)
{
	size_t p = hdr;

	if (end - p < 4 || cie[p] != 4 || cie[p + 1] != 0 /* augmentation "" */)
		return;
	p += 2;		/* version, empty augmentation string */
	if (cie[p] != 8 || cie[p + 1] != 0)
		return;
	memmove(cie + p, cie + p + 2, end - p - 2);
	cie[end - 2] = 0;
	cie[end - 1] = 0;
	cie[hdr] = 3;
}

/*
 * One entry per FDE. .debug_frame FDEs point to their CIE by section offset
 * and hold absolute addresses of the file's address size (8 here); 64-bit
 * DWARF (length 0xffffffff) has 8-byte lengths and CIE pointers.
 */
static int build_index(struct debug_frame *df)
{
	size_t off = 0, cap = 0;

	while (df->size - off >= 4) {
		uint32_t len32, id32;
		uint64_t len, id, start, hdr;
		bool is_cie;

		memcpy(&len32, df->data + off, 4);
		if (!len32)
			break;
		if (len32 == 0xffffffff) {
			if (df->size - off < 20)
				break;
			memcpy(&len, df->data + off + 4, 8);
			memcpy(&id, df->data + off + 12, 8);
			is_cie = id == UINT64_MAX;
			hdr = 20;
			len += 12;
		} else {
			if (df->size - off < 8)
				break;
			len = (uint64_t)len32 + 4;
			memcpy(&id32, df->data + off + 4, 4);
			is_cie = id32 == 0xffffffff;
			hdr = 8;
		}
		if (len > df->size - off)
			break;
		if (is_cie)
			downgrade_cie(df->copy + off, hdr, len);
		if (!is_cie && len >= hdr + 16) {
			memcpy(&start, df->data + off + hdr, 8);
			/* 0: an FDE of code the linker discarded. */
			if (start && start <= INT32_MAX && off <= INT32_MAX) {
				if (df->nr_index == cap) {
					size_t ncap = cap ? cap * 2 : 256;
					void *p = realloc(df->index, ncap * sizeof(*df->index));

					if (!p)
						return -ENOMEM;
					df->index = p;
					cap = ncap;
				}
				df->index[df->nr_index].start = (int32_t)start;
				df->index[df->nr_index++].fde = (int32_t)off;
			}
		}
		off += len;
	}
	if (!df->nr_index)
		return -ENOENT;
	qsort(df->index, df->nr_index, sizeof(*df->index), cmp_entry);
	return 0;
}

int debug_frame__load(struct debug_frame *df, const struct unwind_image *img,
		      const char *debug_path)
{
	struct unwind_image dbg;
	int fd, err;

	memset(df, 0, sizeof(*df));
	df->data = unwind_image__section(img, ".debug_frame", &df->size);
	if (!df->data && debug_path) {
		fd = open(debug_path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -ENOENT;
		err = unwind_image__open_fd(&dbg, fd);
		close(fd);
		if (err)
			return -ENOENT;
		df->data = unwind_image__section(&dbg, ".debug_frame", &df->size);
		/* Keep the debug file mapped: df->data points into it. */
		df->map = (void *)dbg.data;
		df->map_size = dbg.size;
		if (!df->data) {
			debug_frame__free(df);
			return -ENOENT;
		}
	}
	if (!df->data)
		return -ENOENT;
	/* A copy, to repair it for libunwind (downgrade_cie) and to outlive the mapping. */
	df->copy = malloc(df->size ? df->size : 1);
	if (!df->copy) {
		debug_frame__free(df);
		return -ENOMEM;
	}
	memcpy(df->copy, df->data, df->size);
	df->data = df->copy;
	if (df->map) {
		munmap(df->map, df->map_size);
		df->map = NULL;
	}
	err = build_index(df);
	if (err)
		debug_frame__free(df);
	return err;
}

void debug_frame__free(struct debug_frame *df)
{
	free(df->index);
	free(df->copy);
	if (df->map)
		munmap(df->map, df->map_size);
	memset(df, 0, sizeof(*df));
}
