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
 */
#include "unwind/unwind.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"
#include "core/lib/log.h"
#include "unwind/debugframe.h"
#include "unwind/image.h"
#include "unwind/libunwind-private.h"
#include "unwind/sigmask.h"

#define MAX_STEP_READS 4		/* stack words a cached step may depend on */
#define STEP_CACHE_BITS 15
#define HIST_BUCKETS 1000		/* 100 ns each */
/* Addresses below this are never mapped (vm.mmap_min_addr is at least a page). */
#define NULL_PAGE 4096
/* A failed read this far above the copy means the copy was too short. */
#define STACK_SPAN_GUESS (8u << 20)

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

struct step_entry {
	struct step_key key;
	bool valid;
	bool end;		/* the outermost frame: no caller */
	bool next_exact;	/* this frame is a signal trampoline: next was interrupted */
	struct unwind_regs next;
	unsigned int nr_reads;
	struct stack_read reads[MAX_STEP_READS];
};

struct image_key {
	uint64_t dev, ino;	/* ino 0 is the vdso */
};

/*
 * One file's image: its descriptor, the copies of its unwind tables and of
 * its .debug_frame (megabytes for a large binary). Dropped whole when idle:
 * nothing outside one unwind call points at it (the step cache is keyed by
 * registers, libunwind's own cache is off).
 */
struct image_entry {
	struct image_key key;
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

struct unwinder {
	unw_addr_space_t uas;
	struct hashmap images;	/* struct image_key -> struct image_entry */
	/* The keys of images dropped while idle, to tell a file read again from a new one. */
	struct hashmap dropped;	/* struct image_key -> itself */
	/* CLOCK_MONOTONIC at the last sweep: a lookup stores it, reading no clock. */
	int64_t now_ms;
	struct image_entry vdso;
	bool vdso_tried;
	struct step_entry *steps;	/* 2^STEP_CACHE_BITS, direct-mapped */
	struct unwind_stats st;
	uint32_t hist[HIST_BUCKETS];
};

/* What the accessors of one unwind see (libunwind's arg). */
struct unwind_ctx {
	struct unwinder *u;
	const struct addr_space *as;
	const struct unwind_regs *regs;	/* where libunwind starts */
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
};

static uint64_t key_hash(const void *k)
{
	const struct image_key *e = k;

	return hash_u64(e->dev * 31 + e->ino);
}

static bool key_equal(const void *a, const void *b)
{
	const struct image_key *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

static void free_image(struct image_entry *e)
{
	debug_frame__free(&e->df);
	unwind_image__close(&e->img);	/* and its descriptor */
	free(e);
}

/* The vdso has no file: read our own, the same kernel's. */
static struct image_entry *vdso_image(struct unwinder *u)
{
	const void *image;
	size_t size;

	if (!u->vdso_tried) {
		u->vdso_tried = true;
		image = elf_own_vdso(&size);
		u->vdso.ok = image && !unwind_image__from_memory(&u->vdso.img, image, size);
	}
	return u->vdso.ok ? &u->vdso : NULL;
}

/* Count what the checks of an image's headers and tables refused. */
static void count_refusals(struct unwinder *u, const struct mapping *m, int err,
			   const struct unwind_image *img)
{
	if (err == -EBADMSG || (!err && img->bad_table)) {
		u->st.bad_images++;
		pr_debug("unwind: %s: %s, skipped\n", m->path,
			 err ? "malformed or truncated ELF file" : "malformed unwind tables");
	}
	if (!err && img->bad_fdes) {
		u->st.bad_fdes += img->bad_fdes;
		pr_debug("unwind: %s: %u malformed FDEs left out\n", m->path, img->bad_fdes);
	}
}

/* Whether key's image was dropped while idle (it is being read again): forget that it was. */
static bool was_dropped(struct unwinder *u, const struct image_key *key)
{
	struct image_key *k = hashmap__remove(&u->dropped, key);

	free(k);
	return k != NULL;
}

static struct image_entry *file_image(struct unwinder *u, const struct addr_space *as,
				      const struct mapping *m)
{
	struct image_key key = { .dev = m->dev, .ino = m->ino };
	struct image_entry *e;
	bool owned;
	int fd;

	e = hashmap__find(&u->images, &key);
	if (e) {
		e->used_ms = u->now_ms;
		return e->ok ? e : NULL;
	}
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->key = key;
	e->used_ms = u->now_ms;
	e->read_again = was_dropped(u, &key);
	u->st.images_reloaded += e->read_again;
	fd = file_table__open(as->files, m, &owned);
	if (fd >= 0) {
		int err = unwind_image__open_fd(&e->img, fd);

		e->ok = !err;
		if (!e->read_again)
			count_refusals(u, m, err, &e->img);
		if (owned)
			close(fd);
	}
	if (hashmap__add(&u->images, &e->key, e)) {
		unwind_image__close(&e->img);
		free(e);
		return NULL;
	}
	return e->ok ? e : NULL;
}

/* The image of the mapping m and its load bias, or NULL (anonymous memory, JIT code). */
static struct image_entry *entry_of(struct unwind_ctx *ctx, const struct mapping *m, uint64_t *bias)
{
	struct image_entry *e = NULL;

	if (m->path && !strcmp(m->path, "[vdso]"))
		e = vdso_image(ctx->u);
	else if (mapping__is_file(m) && m->ino)
		e = file_image(ctx->u, ctx->as, m);
	/* Its owner truncated it since: what we read of it no longer describes the process. */
	if (e && !e->shrunk && unwind_image__shrunk(&e->img)) {
		e->shrunk = true;
		ctx->u->st.bad_images++;
		pr_debug("unwind: %s: the file shrank, skipped\n", m->path);
	}
	if (e && !e->shrunk && !unwind_image__bias(&e->img, m->start, m->pgoff, bias))
		return e;
	return NULL;
}

/* The image mapped at addr and its load bias, or NULL. */
static const struct unwind_image *image_at(struct unwind_ctx *ctx, uint64_t addr, uint64_t *bias)
{
	const struct mapping *m = addr_space__find(ctx->as, addr);
	struct image_entry *e = m ? entry_of(ctx, m, bias) : NULL;

	return e ? &e->img : NULL;
}

/* .debug_frame of m's file or of its debug file, read once; NULL if it has none. */
static struct lu_debug_frame_list *debug_frame_of(struct unwind_ctx *ctx, struct image_entry *e,
						  const struct mapping *m)
{
	char open_path[64], debug_path[4096];
	const char *dbg = NULL;
	bool owned;
	int fd, err;

	if (e->debug_frame_tried)
		return e->has_debug_frame ? &e->fdesc : NULL;
	e->debug_frame_tried = true;
	if (!e->key.ino)
		return NULL;	/* the vdso has .eh_frame */
	fd = file_table__open(ctx->as->files, m, &owned);
	if (fd >= 0) {
		snprintf(open_path, sizeof(open_path), "/proc/self/fd/%d", fd);
		if (!elf_debug_file(open_path, m->path, debug_path, sizeof(debug_path)))
			dbg = debug_path;
		if (owned)
			close(fd);
	}
	err = debug_frame__load(&e->df, &e->img, dbg);
	if (e->df.bad_fdes && !e->read_again) {
		ctx->u->st.bad_fdes += e->df.bad_fdes;
		pr_debug("unwind: %s: %u malformed FDEs in .debug_frame left out\n", m->path,
			 e->df.bad_fdes);
	}
	if (err)
		return NULL;
	e->has_debug_frame = true;
	e->fdesc.debug_frame = (char *)e->df.data;
	e->fdesc.debug_frame_size = e->df.size;
	e->fdesc.index = e->df.index;
	e->fdesc.index_size = e->df.nr_index * sizeof(e->df.index[0]);
	pr_debug("unwind: %s: %zu FDEs in .debug_frame%s%s\n", m->path, e->df.nr_index,
		 dbg ? " of " : "", dbg ? dbg : "");
	return &e->fdesc;
}

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

	e = m ? entry_of(ctx, m, &bias) : NULL;
	if (!e)
		return -UNW_ENOINFO;	/* libunwind then follows frame pointers */
	ctx->last_img = &e->img;
	ctx->last_bias = bias;
	memset(&di, 0, sizeof(di));
	di.start_ip = m->start;
	di.end_ip = m->end;
	if (e->img.has_table) {
		di.format = UNW_INFO_FORMAT_REMOTE_TABLE;
		di.u.rti.segbase = bias + e->img.eh_frame_hdr;
		di.u.rti.table_data = bias + e->img.table;
		/* In words; each entry is 8 bytes. */
		di.u.rti.table_len = e->img.fde_count * 8 / sizeof(unw_word_t);
		ret = dwarf_search_unwind_table(uas, ip, &di, pi, need_unwind_info, arg);
	}
	if (ret != -UNW_ENOINFO)
		return ret;
	/* Code built without .eh_frame (-fno-asynchronous-unwind-tables) may have .debug_frame. */
	fdesc = debug_frame_of(ctx, e, m);
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

/* The 8 bytes of the copy at off, false past its end. */
static bool copy_word(const struct unwind_ctx *ctx, uint64_t off, uint64_t *v)
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
	if (ctx->last_img &&
	    !unwind_image__table_read(ctx->last_img, addr - ctx->last_bias, (uint64_t *)valp))
		return 0;
	if (addr >= sp && copy_word(ctx, addr - sp, (uint64_t *)valp)) {
		log_read(ctx, addr, *valp);
		return 0;
	}
	/*
	 * Most reads are of the unwind tables libunwind was just pointed at,
	 * which often sit in a read-only segment that is not executable (not
	 * among the tracked mappings).
	 */
	if (ctx->last_img && !unwind_image__read(ctx->last_img, addr - ctx->last_bias,
						 (uint64_t *)valp))
		return 0;
	img = image_at(ctx, addr, &bias);
	if (img && !unwind_image__read(img, addr - bias, (uint64_t *)valp))
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

static unw_accessors_t accessors = {
	.find_proc_info = find_proc_info,
	.put_unwind_info = put_unwind_info,
	.get_dyn_info_list_addr = get_dyn_info_list_addr,
	.access_mem = access_mem,
	.access_reg = access_reg,
	.access_fpreg = access_fpreg,
	.resume = resume,
	.get_proc_name = get_proc_name,
};

struct unwinder *unwinder__new(void)
{
	struct unwinder *u = calloc(1, sizeof(*u));

	if (!u)
		return NULL;
	hashmap__init(&u->images, key_hash, key_equal);
	hashmap__init(&u->dropped, key_hash, key_equal);
	u->now_ms = mono_ms();
	u->steps = calloc((size_t)1 << STEP_CACHE_BITS, sizeof(*u->steps));
	u->uas = unw_create_addr_space(&accessors, 0);
	if (!u->steps || !u->uas) {
		unwinder__free(u);
		return NULL;
	}
	unw_set_caching_policy(u->uas, UNW_CACHE_NONE);
	return u;
}

void unwinder__free(struct unwinder *u)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!u)
		return;
	hashmap__for_each(&u->images, bkt, ent)
		free_image(ent->value);
	hashmap__clear(&u->images);
	hashmap__for_each(&u->dropped, bkt, ent)
		free(ent->value);
	hashmap__clear(&u->dropped);
	/* The vdso's image is not in the map: it has no file to key it by. */
	if (u->vdso.ok) {
		debug_frame__free(&u->vdso.df);
		unwind_image__close(&u->vdso.img);
	}
	if (u->uas)
		unw_destroy_addr_space(u->uas);
	free(u->steps);
	free(u);
}

static struct step_entry *step_slot(struct unwinder *u, const struct step_key *k)
{
	uint64_t h = hash_u64(k->ip ^ hash_u64(k->sp ^ hash_u64(k->bp + k->exact)) ^
			      ((uint64_t)k->space_id << 32 | k->space_gen));

	return &u->steps[h & (((uint64_t)1 << STEP_CACHE_BITS) - 1)];
}

static bool same_key(const struct step_key *a, const struct step_key *b)
{
	return a->ip == b->ip && a->sp == b->sp && a->bp == b->bp && a->exact == b->exact &&
	       a->space_id == b->space_id && a->space_gen == b->space_gen;
}

/* The cached step from k, if the stack words it read hold the same values now. */
static const struct step_entry *replay(struct unwind_ctx *ctx, const struct step_key *k)
{
	const struct step_entry *e = step_slot(ctx->u, k);
	uint64_t sp = ctx->copy_sp;

	if (!e->valid || !same_key(&e->key, k))
		return NULL;
	for (unsigned int i = 0; i < e->nr_reads; i++) {
		uint64_t a = e->reads[i].addr, v;

		if (a < sp || !copy_word(ctx, a - sp, &v) || v != e->reads[i].val)
			return NULL;
	}
	return e;
}

static void remember(struct unwind_ctx *ctx, const struct step_key *k, bool end,
		     const struct unwind_regs *next, bool next_exact)
{
	struct step_entry *e;

	if (ctx->uncacheable)
		return;
	e = step_slot(ctx->u, k);
	e->key = *k;
	e->valid = true;
	e->end = end;
	e->next_exact = next_exact;
	if (next)
		e->next = *next;
	e->nr_reads = ctx->nr_log;
	memcpy(e->reads, ctx->log, ctx->nr_log * sizeof(ctx->log[0]));
}

static void step_key_of(struct step_key *k, const struct addr_space *as,
			const struct unwind_regs *r, bool exact)
{
	memset(k, 0, sizeof(*k));
	k->ip = r->ip;
	k->sp = r->sp;
	k->bp = r->bp;
	k->exact = exact;
	k->space_id = as->id;
	k->space_gen = as->generation;
}

/*
 * Run libunwind from the frame of *cur, recording each step, until the stack
 * ends, a step fails, limit frames are in ips, or the next frame's step is
 * in the cache: then *cur is that frame and the caller replays from it
 * (returns true). Consecutive samples of a process mostly differ in their
 * innermost frames: libunwind walks those, the cache the deep rest.
 *
 * A fresh libunwind cursor looks up its ip itself, as for the interrupted
 * leaf; a caller's frame is looked up at its return address - 1, the call
 * (which may be the last instruction of its function), as libunwind does
 * after a step. So a caller's frame starts libunwind at ip - 1, unless
 * *exact: the frame a signal trampoline returns to was interrupted at ip.
 */
static bool unwind_from(struct unwind_ctx *ctx, struct unwind_regs *cur, bool *exact,
			uint64_t *ips, unsigned int *np, unsigned int limit)
{
	struct unwind_regs start = *cur, next;
	unsigned int n = *np;
	bool more = false;
	unw_cursor_t c;
	struct step_key k;
	unw_word_t v;

	if (!*exact)
		start.ip--;
	ctx->regs = &start;
	if (unw_init_remote(&c, ctx->u->uas, ctx) < 0)
		return false;
	while (n < limit) {
		bool sig;
		int ret;

		step_key_of(&k, ctx->as, cur, *exact);
		ctx->nr_log = 0;
		ctx->uncacheable = false;
		ret = unw_step(&c);
		/*
		 * After a step, libunwind (1.6) says whether the frame it
		 * stepped from had a signal frame's CFI ('S'): *cur.
		 */
		sig = ret > 0 && unw_is_signal_frame(&c) > 0;
		if (ret > 0) {
			if (unw_get_reg(&c, UNW_X86_64_RIP, &v))
				break;
			next.ip = v;
			if (unw_get_reg(&c, UNW_X86_64_RSP, &v))
				break;
			next.sp = v;
			/* bp may be unrecoverable and unneeded further up: keep going */
			if (unw_get_reg(&c, UNW_X86_64_RBP, &v)) {
				v = 0;
				ctx->uncacheable = true;
			}
			next.bp = v;
		}
		if (ret < 0)
			break;	/* not remembered: an error may depend on more than we key on */
		if (ret == 0 || next.ip == 0) {
			remember(ctx, &k, true, NULL, false);
			break;
		}
		remember(ctx, &k, false, &next, sig);
		ips[n++] = next.ip;
		*cur = next;
		*exact = sig;
		ctx->u->st.steps++;
		step_key_of(&k, ctx->as, cur, sig);
		if (n < limit && replay(ctx, &k)) {
			more = true;
			break;
		}
	}
	*np = n;
	return more;
}

static unsigned int unwind_ctx(struct unwind_ctx *c, uint64_t *ips, unsigned int max)
{
	struct unwinder *u = c->u;
	const struct addr_space *as = c->as;
	const struct unwind_regs *regs = c->regs;
	/* One frame more than asked, to know whether the stack was cut. */
	uint64_t frames[MAX_STACK_DEPTH + 1];
	unsigned int n = 1, limit = (max < MAX_STACK_DEPTH ? max : MAX_STACK_DEPTH) + 1;
	struct unwind_regs cur = *regs;
	bool exact = true;	/* the leaf */
	uint64_t t0 = (uint64_t)mono_ns(), dt;
	struct step_key k;

	if (!max || !regs->ip)
		return 0;
	u->st.stacks++;
	frames[0] = regs->ip;
	while (n < limit) {
		const struct step_entry *e;

		step_key_of(&k, as, &cur, exact);
		e = replay(c, &k);
		if (!e) {
			bool more;

			unwind_sigmask__quiet(true);
			more = unwind_from(c, &cur, &exact, frames, &n, limit);
			unwind_sigmask__quiet(false);
			if (more)
				continue;
			if (c->ran_off_copy)
				u->st.dump_exhausted++;
			break;
		}
		if (e->end)
			break;
		cur = e->next;
		exact = e->next_exact;
		frames[n++] = cur.ip;
		u->st.steps++;
		u->st.cached_steps++;
	}
	if (n == limit) {
		n = limit - 1;
		frames[n - 1] = STACK_TRUNCATED_IP;
		u->st.truncated++;
	}
	memcpy(ips, frames, n * sizeof(ips[0]));
	dt = ((uint64_t)mono_ns() - t0) / 100;
	u->hist[dt < HIST_BUCKETS ? dt : HIST_BUCKETS - 1]++;
	return n;
}

unsigned int unwinder__unwind(struct unwinder *u, const struct addr_space *as,
			      const struct unwind_regs *regs, const void *stack, size_t stack_size,
			      uint64_t *ips, unsigned int max)
{
	struct unwind_ctx ctx = {
		.u = u, .as = as, .regs = regs, .copy_sp = regs->sp, .stack = stack,
		.stack_size = stack ? stack_size : 0,
	};

	return unwind_ctx(&ctx, ips, max);
}

unsigned int unwinder__unwind_pieces(struct unwinder *u, const struct addr_space *as,
				     const struct unwind_regs *regs,
				     const unsigned char *const *pieces, const uint32_t *lens,
				     unsigned int nr, size_t stack_size, uint64_t *ips,
				     unsigned int max)
{
	struct unwind_ctx ctx = {
		.u = u, .as = as, .regs = regs, .copy_sp = regs->sp, .pieces = pieces,
		.piece_lens = lens, .nr_pieces = nr, .piece_size = nr ? lens[0] : 0,
	};
	size_t total = 0;

	/* The copy in one piece (bpf/dwarf_one.bpf.h's, most of the time): read it directly. */
	if (nr == 1 && lens[0] >= 8)
		return unwinder__unwind(u, as, regs, pieces[0],
					stack_size < lens[0] ? stack_size : lens[0], ips, max);
	for (unsigned int i = 0; i < nr; i++) {
		if (lens[i] < 8)
			return unwind_ctx(&ctx, ips, max);	/* not in this shape: no copy */
		total += lens[i];
		ctx.nr_whole += ctx.nr_whole == i && lens[i] == ctx.piece_size;
	}
	ctx.stack_size = stack_size < total ? stack_size : total;
	return unwind_ctx(&ctx, ips, max);
}

/* Drop e, remembering its key to count it when read again. */
static void drop_image(struct unwinder *u, struct image_entry *e)
{
	struct image_key *k = malloc(sizeof(*k));

	hashmap__remove(&u->images, &e->key);
	if (k) {
		*k = e->key;
		if (hashmap__add(&u->dropped, k, k))
			free(k);
	}
	free_image(e);
	u->st.images_dropped++;
}

/*
 * A file found shorter than when read stays skipped (its image is what
 * tells it shrank); every other idle one goes.
 */
static bool is_idle(const struct unwinder *u, const struct image_entry *e, int64_t idle_ms)
{
	return !e->shrunk && u->now_ms - e->used_ms >= idle_ms;
}

unsigned int unwinder__drop_idle(struct unwinder *u, int64_t idle_ms)
{
	struct image_entry **victims;
	struct hashmap_entry *ent;
	unsigned int n = 0;
	size_t bkt;

	u->now_ms = mono_ms();
	if (!u->images.size)
		return 0;
	/* Gathered first: the map's entries go as they are removed. */
	victims = malloc(u->images.size * sizeof(*victims));
	if (!victims)
		return 0;
	hashmap__for_each(&u->images, bkt, ent)
		if (is_idle(u, ent->value, idle_ms))
			victims[n++] = ent->value;
	for (unsigned int i = 0; i < n; i++)
		drop_image(u, victims[i]);
	free(victims);
	return n;
}

void unwinder__stats(const struct unwinder *u, struct unwind_stats *st)
{
	uint64_t seen = 0;

	*st = u->st;
	st->images = u->images.size;
	st->median_ns = 0;
	for (unsigned int i = 0; i < HIST_BUCKETS && u->st.stacks; i++) {
		seen += u->hist[i];
		if (seen * 2 >= u->st.stacks) {
			st->median_ns = i * 100 + 50;
			break;
		}
	}
}

void unwinder__report(const struct unwinder *u)
{
	struct unwind_stats st;

	unwinder__stats(u, &st);
	pr_info("dwarf unwind: %" PRIu64 " stacks, median %.1f us each, %" PRIu64
		" of %" PRIu64 " steps replayed from the cache, %" PRIu64
		" cut at the maximum depth\n",
		st.stacks, st.median_ns / 1000.0, st.cached_steps, st.steps, st.truncated);
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
