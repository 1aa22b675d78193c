// SPDX-License-Identifier: GPL-2.0
/*
 * libunwind's accessors: unwind tables found for an ip, memory read from the
 * checked tables, the stack copy or the mapped files, registers from the
 * sample. The stack words read are logged for the step cache (walk.c).
 */
#include <string.h>

#include "core/proc/proctrack.h"
#include "unwind/unwind_internal.h"

/* Addresses below this are never mapped (vm.mmap_min_addr is at least a page). */
#define NULL_PAGE 4096
/* A failed read this far above the copy means the copy was too short. */
#define STACK_SPAN_GUESS (8u << 20)

static int find_proc_info(unw_addr_space_t uas, unw_word_t ip, unw_proc_info_t *pi,
			  int need_unwind_info, void *arg)
{
	struct unwind_ctx *ctx = arg;
	const struct mapping *m = addr_space__find(ctx->as, ip);
	struct lu_debug_frame_list *fdesc;
	struct image_entry *e;
	unw_dyn_info_t di;
	uint64_t bias;
	int ret = -UNW_ENOINFO;

	e = m ? image_cache__entry(ctx, m, &bias) : NULL;
	if (!e)
		return -UNW_ENOINFO;	/* libunwind then follows frame pointers */
	ctx->last_img = &e->img;
	ctx->last_bias = bias;
	ctx->last_fde = NULL;
	memset(&di, 0, sizeof(di));
	di.start_ip = m->start;
	di.end_ip = m->end;
	if (e->img.has_table) {
		const struct image_fde *f = image_cache__fde(ctx, e, m, ip - bias);

		/*
		 * libunwind searches a table of the one entry we found, and
		 * reads its FDE and CIE from what we checked (access_mem).
		 */
		if (f) {
			ctx->last_fde = f;
			di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
			di.u.rti.segbase = bias + e->img.eh_frame_hdr;
			di.u.rti.table_data = bias + f->entry;
			/* In words; an entry is 8 bytes. */
			di.u.rti.table_len = 8 / sizeof(unw_word_t);
			ret = dwarf_search_unwind_table(uas, ip, &di, pi, need_unwind_info, arg);
		}
	}
	if (ret != -UNW_ENOINFO)
		return ret;
	/* Code built without .eh_frame (-fno-asynchronous-unwind-tables) may have .debug_frame. */
	fdesc = image_cache__debug_frame(ctx, e, m);
	if (!fdesc)
		return ret;
	/* libunwind reads it from our memory; its addresses are ELF vaddrs, hence segbase. */
	di.format = UNW_INFO_FORMAT_TABLE;
	di.u.ti.segbase = bias;
	di.u.ti.table_data = (unw_word_t *)fdesc;
	di.u.ti.table_len = sizeof(*fdesc) / sizeof(unw_word_t);
	return dwarf_search_unwind_table(uas, ip, &di, pi, need_unwind_info, arg);
}

static void put_unwind_info(unw_addr_space_t uas, unw_proc_info_t *pi, void *arg)
{
	(void)uas;
	(void)pi;
	(void)arg;
}

static int get_dyn_info_list_addr(unw_addr_space_t uas, unw_word_t *addr, void *arg)
{
	(void)uas;
	(void)addr;
	(void)arg;
	return -UNW_ENOINFO;
}

static void log_read(struct unwind_ctx *ctx, uint64_t addr, uint64_t val)
{
	for (unsigned int i = 0; i < ctx->nr_log; i++)
		if (ctx->log[i].addr == addr)
			return;
	if (ctx->nr_log == MAX_STEP_READS) {
		ctx->uncacheable = true;
		return;
	}
	ctx->log[ctx->nr_log].addr = addr;
	ctx->log[ctx->nr_log++].val = val;
}

static int access_mem(unw_addr_space_t uas, unw_word_t addr, unw_word_t *valp, int write,
		      void *arg)
{
	struct unwind_ctx *ctx = arg;
	uint64_t sp = ctx->copy_sp, bias;
	const struct unwind_image *img;

	(void)uas;
	if (write)
		return -UNW_EINVAL;
	/*
	 * Nothing is mapped at the first page. libunwind 1.6 evaluates the
	 * expression at address 0 as the CFA rule when an FDE never defines
	 * one: with a load bias of minus a table's address, that would be
	 * bytes of the tables never checked as an expression.
	 */
	if (addr < NULL_PAGE)
		return -UNW_EINVAL;
	/*
	 * The checked unwind tables first, before the stack: a hostile process
	 * can point sp at a copy of them it has rewritten, and libunwind must
	 * parse only what was checked.
	 */
	if (ctx->last_img && !unwind_image__table_read(ctx->last_img, ctx->last_fde,
						       addr - ctx->last_bias, (uint64_t *)valp))
		return 0;
	if (addr >= sp && unwind_ctx__copy_word(ctx, addr - sp, (uint64_t *)valp)) {
		log_read(ctx, addr, *valp);
		return 0;
	}
	/*
	 * Most reads are of the unwind tables libunwind was just pointed at,
	 * which often sit in a read-only segment that is not executable (not
	 * among the tracked mappings).
	 */
	if (ctx->last_img && !unwind_image__read(ctx->last_img, ctx->last_fde,
						 addr - ctx->last_bias, (uint64_t *)valp))
		return 0;
	img = image_cache__at(ctx, addr, &bias);
	if (img && !unwind_image__read(img, NULL, addr - bias, (uint64_t *)valp))
		return 0;
	/*
	 * Executable memory without a file (JIT code): its bytes are not ours to
	 * read, but it exists. libunwind reads the code at ip to tell signal
	 * trampolines and PLT stubs (zeros are neither), and takes an unreadable
	 * ip for a call through a bad pointer, which would spoil its frame-pointer
	 * walk of JIT frames.
	 */
	if (addr_space__find(ctx->as, addr)) {
		*valp = 0;
		return 0;
	}
	ctx->uncacheable = true;
	if (addr >= sp + ctx->stack_size && addr - sp < STACK_SPAN_GUESS)
		ctx->ran_off_copy = true;
	return -UNW_EINVAL;
}

static int access_reg(unw_addr_space_t uas, unw_regnum_t reg, unw_word_t *valp, int write,
		      void *arg)
{
	struct unwind_ctx *ctx = arg;

	(void)uas;
	if (write)
		return -UNW_EREADONLYREG;
	switch (reg) {
	case UNW_X86_64_RIP:
		*valp = ctx->regs->ip;
		return 0;
	case UNW_X86_64_RSP:
		*valp = ctx->regs->sp;
		return 0;
	case UNW_X86_64_RBP:
		*valp = ctx->regs->bp;
		return 0;
	case UNW_X86_64_RDI:
		if (!ctx->leaf_di || !ctx->at_leaf)
			return -UNW_EBADREG;
		/* A step that reads it depends on more than the cache keys on. */
		ctx->uncacheable = true;
		*valp = *ctx->leaf_di;
		return 0;
	default:
		/* Not sampled: a step that needs it fails rather than guess. */
		return -UNW_EBADREG;
	}
}

static int access_fpreg(unw_addr_space_t uas, unw_regnum_t reg, unw_fpreg_t *val, int write,
			void *arg)
{
	(void)uas;
	(void)reg;
	(void)val;
	(void)write;
	(void)arg;
	return -UNW_EBADREG;
}

static int resume(unw_addr_space_t uas, unw_cursor_t *c, void *arg)
{
	(void)uas;
	(void)c;
	(void)arg;
	return -UNW_EINVAL;
}

static int get_proc_name(unw_addr_space_t uas, unw_word_t addr, char *buf, size_t len,
			 unw_word_t *off, void *arg)
{
	(void)uas;
	(void)addr;
	(void)buf;
	(void)len;
	(void)off;
	(void)arg;
	return -UNW_EINVAL;
}

unw_accessors_t unwind_accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};
