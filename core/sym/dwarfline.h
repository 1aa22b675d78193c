/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Source lines and inlined calls at an address, from a file's DWARF, read by
 * elfutils' libdw: what `addr2line -f -i` prints. dwarfline.c is the only
 * file that includes libdw's headers. libdw is only ever given files opened
 * here, never a path: a file that needs a dwz supplement (.gnu_debugaltlink)
 * gets it opened safely from the debug root, and split DWARF (.dwo files,
 * whose paths the binary names) is not followed.
 */
#ifndef CORE_SYM_DWARFLINE_H
#define CORE_SYM_DWARFLINE_H

#include <stddef.h>
#include <stdint.h>

/* Frames of one address at most: the deepest inline chains of C++ code stay well below. */
#define DWARF_MAX_FRAMES 16

/* One function at an address: an inlined one, or the one that holds the code. */
struct src_frame {
	const char *function;	/* demangled and short as perf prints it; NULL when unnamed */
	const char *file;	/* the address's file, or the call site of the function inside */
	uint32_t line;		/* 0 when unknown */
	const char *decl_file;	/* where the function is defined; NULL when unknown */
	uint32_t decl_line;
};

struct dwarf_lines;

/*
 * The DWARF of the ELF file open at fd, which is taken (closed by
 * dwarf_lines__free, or now on failure). debug_root is where a dwz
 * supplement is looked up by build-id. NULL with errno set: ENOENT when the
 * file has no usable DWARF.
 */
struct dwarf_lines *dwarf_lines__open(int fd, const char *debug_root);
void dwarf_lines__free(struct dwarf_lines *dl);

/*
 * The functions at vaddr (an address as the file's DWARF states it):
 * innermost inlined call first, the function whose code it is last, each
 * with the file and line the address stands at in it. A chain longer than
 * max keeps its innermost frames and its last one. Returns how many (0 when
 * no compilation unit covers vaddr). The strings live as long as dl.
 */
unsigned int dwarf_lines__lookup(struct dwarf_lines *dl, uint64_t vaddr, struct src_frame *out,
				 unsigned int max);

/* Compilation units with addresses, for tests and -v. */
size_t dwarf_lines__units(const struct dwarf_lines *dl);

#endif
