// SPDX-License-Identifier: GPL-2.0
/*
 * libunwind's remote API over a sample's stack copy. libunwind asks us for
 * memory, registers and unwind tables; we serve the stack from the copy and
 * everything else from the ELF files the process has mapped.
 *
 * Speed comes from a cache of unwind steps. One step of libunwind takes the
 * registers (ip, sp, bp) of a frame to those of its caller, reading a few
 * words of the stack on the way. Given the same registers, the same binary
 * mapped there and the same values in those stack words, it gives the same
 * answer. So each step libunwind takes is recorded with the stack words it
 * read, and replayed for a later sample when those words still hold the same
 * values; only when a step is new does libunwind run. libunwind's own cache
 * is off: one libunwind address space serves every process (its cache is
 * keyed by ip). Its masking of signals around its locks is skipped
 * (sigmask.c): four system calls a frame otherwise.
 *
 * Here the unwinder is made, called and reported on; the walk and its step
 * cache are in walk.c, libunwind's accessors in accessors.c, the images of
 * mapped files in imagecache.c (unwind_internal.h).
 */
#include "unwind/unwind.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/log.h"
#include "unwind/unwind_internal.h"

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	u->step_bits = STEP_CACHE_FIRST_BITS;
	u->steps = calloc((size_t)1 << u->step_bits, sizeof(*u->steps));
	u->uas = unw_create_addr_space(&unwind_accessors, 0);
	if (image_cache__init(u) || !u->steps || !u->uas) {
		unwinder__free(u);
		return NULL;
	}
	unw_set_caching_policy(u->uas, UNW_CACHE_NONE);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	if (!u)
		return;
	image_cache__free(u);
	if (u->uas)
		unw_destroy_addr_space(u->uas);
	free(u->steps);
	free(u);
}

unsigned int unwinder__unwind(struct unwinder *u, const struct addr_space *as,
			      const struct unwind_regs *regs, const uint64_t *di, const void *stack,
			      size_t stack_size, uint64_t *ips, unsigned int max)
{
	struct unwind_ctx ctx = {
		.u = u, .as = as, .regs = regs, .leaf_di = di, .copy_sp = regs->sp, .stack = stack,
		.stack_size = stack ? stack_size : 0,
	};

	if (!u->steps) {
		/* Released: no tables to walk by. */
		if (!max || !regs->ip)
			return 0;
		ips[0] = regs->ip;
		return 1;
	}
	return unwind_walk(&ctx, ips, max);
}

unsigned int unwinder__unwind_pieces(struct unwinder *u, const struct addr_space *as,
				     const struct unwind_regs *regs, const uint64_t *di,
				     const unsigned char *const *pieces, const uint32_t *lens,
				     unsigned int nr, size_t stack_size, uint64_t *ips,
				     unsigned int max)
{
	struct unwind_ctx ctx = {
		.u = u, .as = as, .regs = regs, .leaf_di = di, .copy_sp = regs->sp, .pieces = pieces,
		.piece_lens = lens, .nr_pieces = nr, .piece_size = nr ? lens[0] : 0,
	};
	size_t total = 0;

	/* The copy in one piece (bpf/dwarf_one.bpf.h's, most of the time): read it directly. */
	if ((nr == 1 && lens[0] >= 8) || !u->steps)
		return unwinder__unwind(u, as, regs, di, pieces[0],
					stack_size < lens[0] ? stack_size : lens[0], ips, max);
	for (unsigned int i = 0; i < nr; i++) {
		if (lens[i] < 8)
			return unwind_walk(&ctx, ips, max);	/* not in this shape: no copy */
		total += lens[i];
		ctx.nr_whole += ctx.nr_whole == i && lens[i] == ctx.piece_size;
	}
	ctx.stack_size = stack_size < total ? stack_size : total;
	return unwind_walk(&ctx, ips, max);
}

void unwinder__release(struct unwinder *u)
{
	u->images_released = u->images.size;
	image_cache__free(u);
	free(u->steps);
	u->steps = NULL;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	uint64_t seen = 0;

	*st = u->st;
	st->images = u->steps ? u->images.size : u->images_released;
	st->table_bytes = image_cache__bytes(u) +
			  (u->steps ? ((size_t)1 << u->step_bits) * sizeof(*u->steps) : 0);
	st->median_ns = 0;
	for (unsigned int i = 0; i < HIST_BUCKETS && u->st.stacks; i++) {
		seen += u->hist[i];
		if (seen * 2 >= u->st.stacks) {
			st->median_ns = i * 100 + 50;
			break;
		}
	}
}

void unwinder__on_file(struct unwinder *u, unwinder_file_fn fn, void *ctx)
{
	u->on_file = fn;
	u->on_file_ctx = ctx;
}

void unwinder__report(const struct unwinder *u)
{
	struct unwind_stats st;

	unwinder__stats(u, &st);
	pr_info("dwarf unwind: %" PRIu64 " stacks, median %.1f us each, %" PRIu64
		" of %" PRIu64 " steps replayed from the cache, %" PRIu64
		" cut at the maximum depth\n",
		st.stacks, st.median_ns / 1000.0, st.cached_steps, st.steps, st.truncated);
	if (st.fde_lookups)
		pr_info("dwarf unwind: %" PRIu64 " FDE lookups, %" PRIu64
			" read from their files (the rest from the FDE cache)\n",
			st.fde_lookups, st.fde_reads);
	if (st.images_dropped)
		pr_info("dwarf unwind: %" PRIu64 " files' unwind tables dropped while idle, %" PRIu64
			" read again, %zu held at the end\n",
			st.images_dropped, st.images_reloaded, st.images);
	if (st.dump_exhausted)
		pr_warn("warning: %" PRIu64 " user stacks were deeper than the stack copy and end "
			"early; raise --stack-dump-size\n",
			st.dump_exhausted);
	if (st.bad_images || st.bad_fdes)
		pr_warn("warning: unwind tables refused as malformed: %" PRIu64
			" binaries, %" PRIu64 " FDEs (-vv names them); their frames fall back to "
			"frame pointers\n",
			st.bad_images, st.bad_fdes);
}
