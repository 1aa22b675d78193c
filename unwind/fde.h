/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The FDE of .eh_frame that covers an address, found through the image's
 * copy of .eh_frame_hdr's search table and read from the file with its CIE
 * when a lookup needs it, then checked (unwind/cfi.h) as libunwind will
 * read it. A large binary's .eh_frame (cc1: 2.3 MB) is not kept in memory:
 * a lookup reads about a hundred bytes. The file may have been rewritten
 * since the table was copied: what is read is checked as it is, and
 * libunwind is shown only that (struct image_fde).
 */
#ifndef UNWIND_FDE_H
#define UNWIND_FDE_H

#include <stdint.h>

#include "unwind/image.h"

/* Larger CIEs or FDEs are refused (real ones: tens of bytes, cc1's largest FDE 20 KB). */
#define IMAGE_MAX_ENTRY (1u << 20)

/*
 * The index of the search table entry libunwind would pick for ELF vaddr:
 * the last one starting at or before it. Returns 0 or -ENOENT.
 */
int image_fde__search(const struct unwind_image *img, uint64_t vaddr, uint64_t *index);
/*
 * Read and check the FDE of entry index and its CIE. Returns 0 with *out
 * (freed with image_fde__free), -EBADMSG if they fail the checks, -EFAULT
 * if the file could not be read there (it shrank: unwind_image__shrunk) or
 * -ENOMEM.
 */
int image_fde__read(const struct unwind_image *img, uint64_t index, struct image_fde **out);
void image_fde__free(struct image_fde *f);

#endif
