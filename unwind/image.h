/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ELF file (or the vdso) as the unwinder reads it: memory by ELF virtual
 * address through its PT_LOAD headers, and where .eh_frame_hdr's binary
 * search table is.
 */
#ifndef UNWIND_IMAGE_H
#define UNWIND_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_LOADS 16

struct unwind_image {
	const unsigned char *data;	/* the whole file */
	size_t size;
	bool mapped;			/* data is our mmap of the file */
	Elf64_Phdr loads[IMAGE_MAX_LOADS];
	unsigned int nr_loads;
	/* .eh_frame_hdr, if it has a table libunwind can search (datarel sdata4) */
	bool has_table;
	uint64_t eh_frame_hdr;		/* ELF vaddr */
	uint64_t table;			/* ELF vaddr of the first entry */
	uint64_t fde_count;
};

/* Map the ELF file behind fd (the fd may be closed afterwards). Returns 0 or -errno. */
int unwind_image__open_fd(struct unwind_image *img, int fd);
/* An ELF image already in memory (the vdso); not copied, must outlive img. */
int unwind_image__from_memory(struct unwind_image *img, const void *data, size_t size);
void unwind_image__close(struct unwind_image *img);

/*
 * The load bias of a mapping of the executable segment at file offset pgoff
 * placed at start: run-time address = ELF vaddr + bias. Returns 0 or -ENOENT.
 */
int unwind_image__bias(const struct unwind_image *img, uint64_t start, uint64_t pgoff,
		       uint64_t *bias);
/* Whether vaddr is inside one of the image's loaded segments. */
bool unwind_image__contains(const struct unwind_image *img, uint64_t vaddr);
/* Read the 8 bytes at ELF vaddr (file-backed part only). Returns 0 or -EFAULT. */
int unwind_image__read(const struct unwind_image *img, uint64_t vaddr, uint64_t *val);

#endif
