/* SPDX-License-Identifier: GPL-2.0 */
/*
 * An ELF file (or the vdso) as the unwinder reads it: memory by ELF virtual
 * address through its PT_LOAD headers, and where .eh_frame_hdr's binary
 * search table is.
 *
 * The files are untrusted: any user can run a crafted binary under a root
 * profiler, and truncate or rewrite it while the profiler holds it. Nothing
 * is mapped (a truncated mapping faults); .eh_frame_hdr's search table is
 * copied and checked once; .eh_frame is read an FDE at a time when a lookup
 * needs one (unwind/fde.c), and libunwind is shown only the bytes of that
 * FDE and its CIE as they were checked (unwind/cfi.h): the rest of
 * .eh_frame is never handed out. Anything else is read with pread, where a
 * file that shrank reads short instead of faulting.
 */
#ifndef UNWIND_IMAGE_H
#define UNWIND_IMAGE_H

#include <elf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IMAGE_MAX_LOADS 16
/* Larger unwind tables (.eh_frame, .debug_frame) are refused rather than copied. */
#define IMAGE_MAX_TABLE (256u << 20)
/* Words an FDE's indirect pointers make libunwind read (a personality): 1 in real files. */
#define IMAGE_FDE_WORDS 4

/* Our copy of a part of an image, by ELF vaddr. */
struct image_copy {
	uint64_t vaddr;
	size_t size;
	unsigned char *data;	/* padded with zeros to a multiple of 8 */
};

/* A word that an indirect pointer of a checked FDE makes libunwind read (a personality). */
struct image_word {
	uint64_t vaddr;
	uint64_t val;
};

/*
 * One FDE of .eh_frame and its CIE, as read from the file and checked for a
 * lookup: what libunwind may read of the tables until the next lookup.
 */
struct image_fde {
	uint64_t index;			/* its entry in the search table */
	uint64_t entry;			/* ELF vaddr of that entry (in the copied table) */
	struct image_copy fde, cie;	/* their data follow the struct, in one allocation */
	struct image_word words[IMAGE_FDE_WORDS];
	unsigned int nr_words;
	size_t bytes;			/* allocated */
};

struct image_state;

struct unwind_image {
	const unsigned char *data;	/* an image in memory (the vdso), else NULL */
	size_t size;			/* of data, or of the file when it was opened */
	int fd;				/* our own descriptor of the file, or -1 */
	uint64_t dev, ino;
	uint64_t shoff;			/* section headers, if any */
	unsigned int shnum, shstrndx;
	Elf64_Phdr loads[IMAGE_MAX_LOADS];
	unsigned int nr_loads;
	/* .eh_frame_hdr, if it has a table libunwind can search (datarel sdata4) */
	bool has_table;
	uint64_t eh_frame_hdr;		/* ELF vaddr */
	uint64_t table;			/* ELF vaddr of the first entry */
	uint64_t fde_count;		/* entries, sorted as libunwind compares them */
	struct image_copy hdr_copy;	/* .eh_frame_hdr and its table */
	uint64_t eh_frame, eh_size;	/* .eh_frame, by ELF vaddr: in the file, not copied */
	bool bad_table;			/* .eh_frame_hdr or .eh_frame unusable as a whole */
	struct image_state *state;	/* what reads change */
};

/*
 * Read the ELF file behind fd (the fd may be closed afterwards). Returns 0,
 * -ENOEXEC if it is no ELF64 file for this machine, -EBADMSG if its headers
 * are inconsistent or its segments are not all in the file (it shrank), or
 * another -errno.
 */
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
/*
 * Read the 8 bytes at ELF vaddr (file-backed part only): from the checked
 * tables (the search table, and fde's FDE, CIE and words if fde is not
 * NULL) where they cover any of them (bytes beside them read as zero), else
 * from the file, but never from its unwind tables. Returns 0 or -EFAULT.
 */
int unwind_image__read(const struct unwind_image *img, const struct image_fde *fde,
		       uint64_t vaddr, uint64_t *val);
/* The same from the checked tables only: -EFAULT unless they cover one of the bytes. */
int unwind_image__table_read(const struct unwind_image *img, const struct image_fde *fde,
			     uint64_t vaddr, uint64_t *val);
/*
 * len bytes at ELF vaddr from the file, all inside one PT_LOAD's file-backed
 * part. Returns 0, or -EFAULT (outside, or the file is shorter now).
 */
int unwind_image__pread(const struct unwind_image *img, uint64_t vaddr, void *buf, size_t len);
/* Whether the file was found shorter than when it was opened: its image is stale. */
bool unwind_image__shrunk(const struct unwind_image *img);

/* The address (sh_addr) of section name. Returns 0, -ENOENT or -ENOMEM. */
int unwind_image__section_addr(const struct unwind_image *img, const char *name,
			       uint64_t *vaddr);
/* The contents of section name in the image, or NULL. Kept until the image is closed. */
const unsigned char *unwind_image__section(const struct unwind_image *img, const char *name,
					   size_t *size);
/*
 * Where section name lies in the file: its offset and size, where it is
 * stored whole (not compressed), at most IMAGE_MAX_TABLE, inside the file,
 * and the file is still the size it was. 0, -ENOENT, -EBADMSG or -ENOMEM.
 */
int unwind_image__section_place(const struct unwind_image *img, const char *name,
				uint64_t *off, uint64_t *size);
/*
 * Section name copied into a new buffer of the caller's, padded with zeros
 * to a multiple of 8 and 8 more. Returns 0, -ENOENT, -EBADMSG (compressed,
 * too large, or the file shrank) or -ENOMEM.
 */
int unwind_image__copy_section(const struct unwind_image *img, const char *name,
			       unsigned char **out, size_t *size);

#endif
