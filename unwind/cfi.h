/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounds-checked reader of DWARF call frame information (.eh_frame and
 * .debug_frame) that decides whether libunwind may be shown an FDE.
 *
 * libunwind 1.6 trusts these tables: it follows CIE pointers and lengths
 * without bounds, reads .debug_frame straight from our memory, reads an
 * augmentation string up to a NUL wherever that is, and runs expressions
 * whose jumps can loop forever. An FDE passes only if everything libunwind
 * 1.6.2 reads to find, parse and run it (src/dwarf/Gfde.c, Gparser.c,
 * Gexpr.c) lies inside the entries it names, read the way libunwind reads
 * it, and if running it ends in bounded time and memory.
 */
#ifndef UNWIND_CFI_H
#define UNWIND_CFI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfi_kind {
	/* Read by libunwind through our accessors; CIE pointers are relative to themselves. */
	CFI_EH_FRAME,
	/* Read by libunwind from our memory; CIE pointers are offsets in the section. */
	CFI_DEBUG_FRAME,
};

#define CFI_CIE_CACHE 16
#define CFI_MAX_WINDOWS 2

/* Bytes of the section held in memory: size of them from section offset off. */
struct cfi_window {
	uint64_t off;
	const unsigned char *data;
	size_t size;
};

struct cfi_cie {
	uint64_t off;
	int err;		/* 0: usable */
	bool used;
	bool sized;		/* 'z': FDEs have an augmentation length */
	bool abi_marker;	/* 'S': libunwind reads 4 more bytes after an FDE's LSDA */
	bool signal;		/* 'S': a signal frame's */
	uint8_t fde_enc;
	uint8_t lsda_enc;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;	/* the return address column */
	uint64_t insn, end;	/* its initial instructions: section offsets [insn, end) */
};

struct cfi_section {
	/*
	 * The whole section, or the entries one lookup needs (an FDE and its
	 * CIE): an entry must lie in one window, and what is in none is not read.
	 */
	struct cfi_window windows[CFI_MAX_WINDOWS];
	unsigned int nr_windows;
	uint64_t vaddr;		/* where offset 0 is: pc-relative and aligned pointers */
	enum cfi_kind kind;
	/* Bytes left to decode: FDEs may overlap or share a large CIE; real tables use ~1x. */
	uint64_t budget;
	/*
	 * For .eh_frame: called with the ELF vaddr of each word an indirect
	 * pointer (DW_EH_PE_indirect) makes libunwind read. Nonzero refuses the FDE.
	 */
	int (*indirect)(void *ctx, uint64_t vaddr);
	void *ctx;
	struct cfi_cie cies[CFI_CIE_CACHE];
};

struct cfi_fde {
	uint64_t end;		/* offset just past the FDE */
	uint64_t pc_begin;	/* as stored; for .debug_frame an absolute address */
	uint64_t pc_range;
	/* What the table compiler (unwind/tables) runs: the instructions and their CIE's. */
	uint64_t insn;		/* the FDE's instructions: section offsets [insn, end) */
	uint64_t cie_insn, cie_end;
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;	/* of DW_CFA_set_loc's operand */
	bool signal;
};

/*
 * A reader of one entry, for those who run what cfi__check_fde checked:
 * every read fails past end, and failure sticks.
 */
struct cfi_cur {
	const struct cfi_section *s;
	const struct cfi_window *w;	/* the window that holds the entry */
	uint64_t pos;			/* section offsets: w->off <= pos <= end */
	uint64_t end;			/* <= w->off + w->size */
	bool bad;
};

void cfi__init(struct cfi_section *s, const void *data, size_t size, uint64_t vaddr,
	       enum cfi_kind kind);
/* The same over n (at most CFI_MAX_WINDOWS) windows of a section at vaddr. */
void cfi__init_windows(struct cfi_section *s, const struct cfi_window *w, unsigned int n,
		       uint64_t vaddr, enum cfi_kind kind);

/*
 * Check the FDE at offset off. Returns 0 if libunwind may use it, -EBADMSG if
 * not, -E2BIG once the section's budget is spent (the section is hostile).
 */
int cfi__check_fde(struct cfi_section *s, uint64_t off, struct cfi_fde *fde);

/* A reader of section offsets [pos, end), cut at the end of the window that holds pos. */
struct cfi_cur cfi__cur(const struct cfi_section *s, uint64_t pos, uint64_t end);
/* n (at most 8) bytes, little-endian; ULEB128; SLEB128; a pointer of encoding enc. */
uint64_t cfi__get(struct cfi_cur *c, unsigned int n);
uint64_t cfi__uleb(struct cfi_cur *c);
int64_t cfi__sleb(struct cfi_cur *c);
uint64_t cfi__pointer(struct cfi_cur *c, uint8_t enc);

#endif
