/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the rooms of the unwinder share, and no one else: the unwinder and
 * what one unwind call sees. unwind.c makes the unwinder and reports on it;
 * walk.c walks a stack, replaying cached steps and running libunwind for new
 * ones; accessors.c answers libunwind's questions from the stack copy and
 * the images; imagecache.c keeps the images of the files processes map, by
 * file, and drops those idle.
 */
#ifndef UNWIND_UNWIND_INTERNAL_H
#define UNWIND_UNWIND_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "core/lib/hashmap.h"
#include "unwind/debugframe.h"
#include "unwind/fde.h"
#include "unwind/image.h"
#include "unwind/libunwind-private.h"
#include "unwind/unwind.h"

#define MAX_STEP_READS 4		/* stack words a cached step may depend on */
/*
 * The step cache's size: from 2^STEP_CACHE_FIRST_BITS entries, doubled up
 * to 2^STEP_CACHE_BITS while it pays (steps_grow in walk.c).
 */
#define STEP_CACHE_FIRST_BITS 10
#define STEP_CACHE_BITS 15
#define HIST_BUCKETS 1000		/* 100 ns each */
#define FDE_CACHE_BITS 12
/* Checked FDEs kept between lookups: about 7,000 of cc1's size (148 bytes each, its CIE too). */
#define FDE_CACHE_BYTES (1u << 20)
/* A larger one is kept only for the lookup that read it. */
#define FDE_CACHE_MAX_ENTRY 4096

struct stack_read {
	uint64_t addr;
	uint64_t val;
};

struct step_key {
	uint64_t ip, sp, bp;
	unsigned int space_id;
	unsigned int space_gen;
	/*
	 * The frame was interrupted, not calling: the leaf, or the frame a
	 * signal trampoline returns to. libunwind looks such an ip up itself,
	 * a caller's at ip - 1 (the call).
	 */
	bool exact;
};

/*
 * 120 bytes, up to 32768 of them: the stack words a step read are kept by their
 * offset from the frame's sp (any CFI reads near it), not by address.
 */
struct step_entry {
	struct step_key key;
	bool valid;
	bool end;		/* the outermost frame: no caller */
	bool next_exact;	/* this frame is a signal trampoline: next was interrupted */
	uint8_t nr_reads;
	int32_t read_off[MAX_STEP_READS];	/* address - key.sp */
	struct unwind_regs next;
	uint64_t read_val[MAX_STEP_READS];
};

struct image_key {
	uint64_t dev, ino;	/* ino 0 is the vdso */
};

/*
 * One file's image: its descriptor, the copy of its search table, and of its
 * .debug_frame. Dropped whole when idle: nothing outside one unwind call
 * points at it (the step cache is keyed by registers, libunwind's own cache
 * is off, the FDE cache by the image's serial).
 */
struct image_entry {
	struct image_key key;
	uint64_t serial;	/* never reused: keys its FDEs in the FDE cache */
	uint64_t *refused;	/* search table entries whose FDE failed the checks, or NULL */
	int64_t used_ms;	/* u->now_ms when libunwind last asked for it */
	bool read_again;	/* dropped before: its refusals were counted the first time */
	bool ok;
	bool shrunk;		/* found shorter than when read: skipped from then on */
	struct unwind_image img;
	bool debug_frame_tried;
	bool has_debug_frame;
	struct debug_frame df;
	struct lu_debug_frame_list fdesc;
};

/* A checked FDE kept after its lookup: the FDEs of a binary's hot code, most of the time. */
struct fde_slot {
	uint64_t serial;	/* of its image_entry */
	struct image_fde *fde;	/* NULL: empty */
};

struct unwinder {
	unw_addr_space_t uas;
	uint64_t serials;	/* the last image_entry serial given */
	struct fde_slot *fdes;	/* 2^FDE_CACHE_BITS, direct-mapped by serial and index */
	size_t fde_bytes;	/* held by fdes[] */
	struct image_fde *fde_spare;	/* one too large to keep, until the next lookup */
	struct hashmap images;	/* struct image_key -> struct image_entry */
	/* The keys of images dropped while idle, to tell a file read again from a new one. */
	struct hashmap dropped;	/* struct image_key -> itself */
	/* CLOCK_MONOTONIC at the last sweep: a lookup stores it, reading no clock. */
	int64_t now_ms;
	struct image_entry vdso;
	bool vdso_tried;
	struct step_entry *steps;	/* 2^step_bits, direct-mapped; NULL once released */
	unsigned int step_bits;
	/* The steps run by libunwind and replayed when the cache's size was last weighed. */
	uint64_t weighed_run, weighed_replayed;
	size_t images_released;	/* images held when the unwinder was released */
	struct unwind_stats st;
	uint32_t hist[HIST_BUCKETS];
	unwinder_file_fn on_file;	/* told of each file read the first time, or NULL */
	void *on_file_ctx;
};

/* What the accessors of one unwind see (libunwind's arg). */
struct unwind_ctx {
	struct unwinder *u;
	const struct addr_space *as;
	const struct unwind_regs *regs;	/* where libunwind starts */
	/*
	 * The leaf's rdi, or NULL: libunwind is given it only while it starts
	 * at the leaf (at_leaf), where a caller's would be another frame's.
	 */
	const uint64_t *leaf_di;
	bool at_leaf;
	uint64_t copy_sp;		/* the sample's sp: where the stack copy starts */
	const unsigned char *stack;	/* the copy in one piece, or NULL: */
	const unsigned char *const *pieces;	/* in nr_pieces of piece_lens bytes */
	const uint32_t *piece_lens;
	unsigned int nr_pieces;
	unsigned int nr_whole;	/* the first pieces, of piece_size bytes each */
	size_t piece_size;
	size_t stack_size;
	/* The stack words read during the current step. */
	struct stack_read log[MAX_STEP_READS];
	unsigned int nr_log;
	bool uncacheable;	/* a read failed or too many reads */
	bool ran_off_copy;	/* a read past the end of the copy */
	/* The image of the last find_proc_info, for reads outside executable mappings. */
	const struct unwind_image *last_img;
	uint64_t last_bias;
	/* The FDE it found: all of the tables libunwind may read until the next one. */
	const struct image_fde *last_fde;
};

/*
 * The 8 bytes of the copy at off, false past its end. Inline: replaying a
 * cached step reads the copy through it (walk.c), as libunwind does
 * (accessors.c), and it was inlined there when the two were one file.
 */
static inline bool unwind_ctx__copy_word(const struct unwind_ctx *ctx, uint64_t off, uint64_t *v)
{
	size_t i, in, first;

	if (off > ctx->stack_size || ctx->stack_size - off < 8)
		return false;
	if (ctx->stack) {
		memcpy(v, ctx->stack + off, 8);
		return true;
	}
	if (off < (uint64_t)ctx->nr_whole * ctx->piece_size) {
		i = off / ctx->piece_size;
		in = off % ctx->piece_size;
	} else {
		/* The short pieces at the end of the stack: a few, halving. */
		i = ctx->nr_whole;
		in = off - (uint64_t)ctx->nr_whole * ctx->piece_size;
		while (i < ctx->nr_pieces && in >= ctx->piece_lens[i])
			in -= ctx->piece_lens[i++];
		if (i >= ctx->nr_pieces)
			return false;
	}
	first = ctx->piece_lens[i] - in;
	if (first >= 8) {
		memcpy(v, ctx->pieces[i] + in, 8);
		return true;
	}
	/* A word across two pieces (an sp CFI rule can point anywhere); each holds 8 or more. */
	if (i + 1 >= ctx->nr_pieces)
		return false;
	memcpy(v, ctx->pieces[i] + in, first);
	memcpy((unsigned char *)v + first, ctx->pieces[i + 1], 8 - first);
	return true;
}

/* accessors.c: libunwind's questions answered (its arg is a struct unwind_ctx). */
extern unw_accessors_t unwind_accessors;

/* imagecache.c: images by file, read when libunwind first asks, dropped when idle. */
int image_cache__init(struct unwinder *u);
void image_cache__free(struct unwinder *u);
struct image_entry *image_cache__entry(struct unwind_ctx *ctx, const struct mapping *m,
				       uint64_t *bias);
const struct unwind_image *image_cache__at(struct unwind_ctx *ctx, uint64_t addr, uint64_t *bias);
/* Bytes the images hold: their copies of the tables and the indexes over them. */
size_t image_cache__bytes(const struct unwinder *u);
struct lu_debug_frame_list *image_cache__debug_frame(struct unwind_ctx *ctx, struct image_entry *e,
						     const struct mapping *m);
/* The checked FDE of e (mapped by m) that may cover ELF vaddr, from the FDE cache or the file. */
const struct image_fde *image_cache__fde(struct unwind_ctx *ctx, struct image_entry *e,
					 const struct mapping *m, uint64_t vaddr);

/* walk.c: one stack, from the cache where its steps are known. */
unsigned int unwind_walk(struct unwind_ctx *c, uint64_t *ips, unsigned int max);

#endif
