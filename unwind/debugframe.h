/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The .debug_frame of a binary (or of its debug file), for code that has no
 * .eh_frame: copied, its CIEs repaired for libunwind 1.6, every FDE checked
 * (unwind/cfi.h) before it enters the search table libunwind is given.
 * Untrusted input, as every file of unwind/image.h.
 */
#ifndef UNWIND_DEBUGFRAME_H
#define UNWIND_DEBUGFRAME_H

#include <stddef.h>
#include <stdint.h>

#include "unwind/image.h"

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
	struct frame_index_entry *index;	/* sorted by start; a zeroed entry follows */
	size_t nr_index;
	unsigned int bad_fdes;		/* FDEs left out (also when none is left) */
};

/*
 * .debug_frame of img, else of the debug file at debug_path (may be NULL),
 * with a search table over those of its FDEs that pass the checks. Returns
 * 0, -ENOENT if there is none or no FDE passes, or -ENOMEM.
 */
int debug_frame__load(struct debug_frame *df, const struct unwind_image *img,
		      const char *debug_path);
void debug_frame__free(struct debug_frame *df);

#endif
