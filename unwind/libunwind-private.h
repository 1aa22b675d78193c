/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this code needs of libunwind 1.6 beyond its public headers: shared by
 * the unwinder and the fuzz target that drives libunwind over checked tables.
 */
#ifndef UNWIND_LIBUNWIND_PRIVATE_H
#define UNWIND_LIBUNWIND_PRIVATE_H

#include <libunwind.h>
#include <stddef.h>

#include "unwind/debugframe.h"

/* Exported by libunwind but not declared in its headers. */
extern int UNW_OBJ(dwarf_search_unwind_table)(unw_addr_space_t as, unw_word_t ip,
					       unw_dyn_info_t *di, unw_proc_info_t *pi,
					       int need_unwind_info, void *arg);
#define dwarf_search_unwind_table UNW_OBJ(dwarf_search_unwind_table)

/*
 * libunwind 1.6's struct unw_debug_frame_list (its include/dwarf.h), which a
 * UNW_INFO_FORMAT_TABLE table points to. Not in the public headers, but
 * dwarf_search_unwind_table reads .debug_frame only through it, from our
 * memory: only checked FDEs may be in its index (debug_frame__load).
 */
struct lu_debug_frame_list {
	unw_word_t start;
	unw_word_t end;
	unw_word_t load_offset;
	char *debug_frame;
	size_t debug_frame_size;
	struct frame_index_entry *index;
	size_t index_size;		/* bytes */
	struct lu_debug_frame_list *next;
};

#endif
