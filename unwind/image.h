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

/* One entry of a .debug_frame search table (libunwind's struct table_entry). */
struct frame_index_entry {
	int32_t start;		/* the FDE's initial location, an ELF vaddr */
	int32_t fde;		/* the FDE's offset in .debug_frame */
};

/* A .debug_frame section, for code that has no .eh_frame. */
struct debug_frame {
	const unsigned char *data;	/* our copy of the section */
	size_t size;
	unsigned char *copy;
	struct frame_index_entry *index;	/* sorted by start */
	size_t nr_index;
	void *map;		/* the debug file's mmap, while loading */
	size_t map_size;
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
/* Read the 8 bytes at ELF vaddr (file-backed part only). Returns 0 or -EFAULT. */
int unwind_image__read(const struct unwind_image *img, uint64_t vaddr, uint64_t *val);

/* The contents of section name in the image, or NULL. */
const unsigned char *unwind_image__section(const struct unwind_image *img, const char *name,
					   size_t *size);

/*
 * .debug_frame of img, else of the debug file at debug_path (may be NULL),
 * with a search table over its FDEs. Returns 0 or -ENOENT.
 */
int debug_frame__load(struct debug_frame *df, const struct unwind_image *img,
		      const char *debug_path);
void debug_frame__free(struct debug_frame *df);

#endif
