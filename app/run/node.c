// SPDX-License-Identifier: GPL-2.0
/*
 * Node.js frames in a run (node.h): the Node processes, found by their
 * mapped files (node_detect once per file identity); their V8 frames
 * walked over each sample's registers and stack copy at the pipeline's
 * interpreter hook (from the sample's bp, else from a frame of the native
 * unwind's in V8's code), named from the process right then into a cache
 * the resolved stacks read, and the native frames they stand for told to
 * the mixer (core/model/mixed.c). What is not a Node image goes to the
 * hooks that were there before (Python's).
 *
 * A JavaScript frame travels as a struct interp_frame:
 *   code  = the tagged SharedFunctionInfo (48 bits) | kind << 48 | NODE_TAG << 56
 *   lasti = the tagged Code of a maglev/turbofan frame (its line), else 0
 *           (an interpreted frame is named through its SFI's bytecode)
 *   ident = node_sfi_ident folded to 32 bits | (uint32_t)offset << 32
 * The native frame a record stands for is the one whose ip is the record's
 * pc (a return address into V8's code): each process keeps the pcs its
 * JavaScript records had, and the mixer's role of a native frame at such
 * an ip is the eval loop's (each stands for one JavaScript frame).
 */
#include "app/run/node.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/hashmap.h"
#include "core/lib/log.h"
#include "core/model/interp_merge.h"
#include "core/model/resolve.h"
#include "core/proc/proctrack.h"
#include "core/sym/debugfile.h"
#include "interp/node/node.h"
#include "interp/python/elfscan.h"
#include "interp/python/python.h"

#define NODE_TAG 0x4eULL
#define ADDR_MASK 0xffffffffffffULL
/* The pcs of JavaScript frames a process keeps (beyond: its frames stay unplaced), names cached. */
#define MAX_PCS (1u << 16)
#define MAX_NAMES (1u << 16)
/* Where the frame-pointer chain from the sample's bp meets no JavaScript: starts tried above. */
#define MAX_RESTARTS 4
#define MAX_RESTART_DEPTH 64
/* Files named in -v as refused, at most. */
#define MAX_REFUSED_NAMED 16

/* A mapped file, by identity: Node or not, decided once. */
struct node_file {
	uint64_t dev, ino;
	int res;			/* node_detect: 1, 0, -ENOTSUP, -errno */
	struct node_interp ni;
	char *path;
	/* Its Builtins_* code (the interpreter's trampolines...), as file offsets; 0, 0: none. */
	uint64_t builtins_off, builtins_end;
};

/* A name read while the process lived, by the frame's words. */
struct node_name {
	struct interp_frame key;
	char *name, *file;
	uint32_t line, first_line;
};

struct node_proc {
	pid_t pid;
	unsigned int as_id;
	const struct node_file *file;
	uint64_t builtins_start, builtins_end;	/* its file's Builtins_* code, mapped here */
	struct py_proc_mem mem;
	struct py_snap snap;
	struct node_mem heap;		/* through snap */
	struct hashmap pcs;		/* return addresses of JavaScript frames: the set */
	struct hashmap names;		/* struct interp_frame * -> struct node_name * */
	bool gone;
};

struct seen {
	unsigned int generation;
	struct node_proc *p;
};

struct node_stats {
	size_t processes, refused, no_handle, handed_over;
	uint64_t walks, no_copy, off_cpu, with_js, restarted, js_frames, truncated, faults;
	uint64_t named, not_cached, unnamed, stale, ended, pcs_full, early_failed;
};

struct run_node {
	struct pipeline_interp next;	/* Python's, or none */
	struct interp_ops next_ops;
	struct proctrack *pt;
	bool raw, full_paths;
	struct hashmap images;		/* as->id + 1 -> struct seen * */
	struct hashmap files;		/* struct node_file * (dev, ino) -> itself */
	size_t nr_refused_named;
	struct node_stats st;
	struct node_stack stack;
	struct node_fn_info fi;
	struct node_name tmp;		/* a name not cached: fi's */
	char short_file[NODE_PATH_MAX];
	unsigned char *joined;		/* a BPF sample's pieces joined */
	size_t joined_cap;
};

static uint64_t id_hash(const void *k)
{
	return hash_u64((uint64_t)(uintptr_t)k);
}

static bool id_equal(const void *a, const void *b)
{
	return a == b;
}

static uint64_t file_hash(const void *k)
{
	const struct node_file *f = k;

	return hash_u64(f->dev * 0x9e3779b97f4a7c15ULL ^ f->ino);
}

static bool file_equal(const void *a, const void *b)
{
	const struct node_file *x = a, *y = b;

	return x->dev == y->dev && x->ino == y->ino;
}

static uint64_t frame_hash(const void *k)
{
	return hash_bytes(k, sizeof(struct interp_frame), 0);
}

static bool frame_equal(const void *a, const void *b)
{
	return !memcmp(a, b, sizeof(struct interp_frame));
}

#define IMAGE_KEY(as) ((void *)(uintptr_t)((as)->id + 1ULL))

static struct node_proc *find(const struct run_node *rn, const struct addr_space *as)
{
	struct seen *s = as ? hashmap__find(&rn->images, IMAGE_KEY(as)) : NULL;

	return s ? s->p : NULL;
}

static uint32_t fold(uint64_t ident)
{
	uint32_t f = (uint32_t)(ident ^ (ident >> 32));

	return f ? f : 1;
}

/* ---- Finding the processes ------------------------------------------------ */

struct builtins_range {
	uint64_t lo, hi;
};

static int builtin_symbol(void *ctx, const GElf_Sym *sym, const char *name, size_t avail)
{
	struct builtins_range *b = ctx;

	if (avail < 9 || strncmp(name, "Builtins_", 9) || GELF_ST_TYPE(sym->st_info) != STT_FUNC ||
	    !sym->st_value)
		return 0;
	if (!b->lo || sym->st_value < b->lo)
		b->lo = sym->st_value;
	if (sym->st_value + sym->st_size > b->hi)
		b->hi = sym->st_value + sym->st_size;
	return 0;
}

/*
 * Where f's Builtins_* functions are, as file offsets (the PT_LOAD segment
 * that holds them): a native frame there is V8's, and may have JavaScript
 * frames above it (the interpreter's trampolines run those).
 */
static void find_builtins(Elf *elf, struct node_file *f)
{
	struct builtins_range b = { 0, 0 };
	size_t nr = 0;

	elf_file__each_symbol(elf, elf_file__section(elf, SHT_SYMTAB, NULL), builtin_symbol, &b);
	if (!b.lo || b.hi <= b.lo || elf_getphdrnum(elf, &nr))
		return;
	for (size_t i = 0; i < nr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    b.lo < ph.p_vaddr || b.hi > ph.p_vaddr + ph.p_filesz)
			continue;
		f->builtins_off = b.lo - ph.p_vaddr + ph.p_offset;
		f->builtins_end = b.hi - ph.p_vaddr + ph.p_offset;
		return;
	}
}

/* Whether the file of mapping m of as is Node's: its cached verdict, decided now if new. */
static const struct node_file *file_of(struct run_node *rn, const struct addr_space *as,
				       const struct mapping *m)
{
	struct node_file key = { .dev = m->dev, .ino = m->ino }, *f;
	struct errmsg why = { "" };
	struct elf_file h;
	bool owned = false, opened;
	uint64_t bias = 0;
	int fd, own, err;

	f = hashmap__find(&rn->files, &key);
	if (f)
		return f;
	f = calloc(1, sizeof(*f));
	if (!f)
		return NULL;
	*f = key;
	f->path = strdup(m->path);
	fd = file_table__open(as->files, m, &owned);
	if (fd < 0) {
		/* Not the file that was mapped: not decided (another image may open it). */
		free(f->path);
		free(f);
		return NULL;
	}
	own = elf_file__ready() ? fcntl(fd, F_DUPFD_CLOEXEC, 0) : -1;
	opened = own >= 0 && !elf_file__open_fd(own, &h);
	err = opened ? py_elf__load_bias(h.elf, m->start, m->pgoff, &bias) : -ENOENT;
	f->res = err ? err : node_detect(fd, bias, &f->ni, &why);
	if (f->res == 1)
		find_builtins(h.elf, f);
	if (opened)
		elf_file__close(&h);
	if (owned)
		close(fd);
	if (f->res == -ENOTSUP) {
		rn->st.refused++;
		if (rn->nr_refused_named++ < MAX_REFUSED_NAMED)
			pr_info("node: %s (pid %d): %s; its samples keep their native frames\n",
				m->path, (int)as->pid, why.text[0] ? why.text : "not readable here");
	} else if (f->res < 0) {
		pr_debug("node: %s of pid %d: %s\n", m->path, (int)as->pid, strerror(-f->res));
	}
	if (!f->path || hashmap__add(&rn->files, f, f)) {
		free(f->path);
		free(f);
		return NULL;
	}
	return f;
}

static void proc_free(struct node_proc *p)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!p)
		return;
	py_proc_mem__close(&p->mem);
	hashmap__clear(&p->pcs);
	hashmap__for_each(&p->names, bkt, ent) {
		struct node_name *n = ent->value;

		free(n->name);
		free(n->file);
		free(n);
	}
	hashmap__clear(&p->names);
	free(p);
}

/*
 * The process of image as, running the Node of file f: its memory through
 * a handle that is as's (a process that took the pid since, even within a
 * tick of its exit, is never read for it: proctrack__held_by).
 */
static struct node_proc *proc_new(struct run_node *rn, const struct addr_space *as,
				  const struct node_file *f)
{
	struct node_proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = as->pid;
	p->as_id = as->id;
	p->file = f;
	hashmap__init(&p->pcs, id_hash, id_equal);
	hashmap__init(&p->names, frame_hash, frame_equal);
	py_proc_mem__init(&p->mem, as->pid);
	if (py_proc_mem__open(&p->mem, as->pid)) {
		rn->st.no_handle++;
		proc_free(p);
		return NULL;
	}
	if (rn->pt && !proctrack__held_by(rn->pt, as, proctrack__records_now(rn->pt))) {
		rn->st.handed_over++;
		proc_free(p);
		return NULL;
	}
	py_snap__init(&p->snap, &p->mem.mem);
	p->heap = (struct node_mem){ p->snap.mem.read, p->snap.mem.ctx };
	for (size_t i = 0; i < as->nr_maps && f->builtins_end; i++) {
		const struct mapping *m = &as->maps[i];

		if (m->exec && m->dev == f->dev && m->ino == f->ino &&
		    m->pgoff <= f->builtins_off && f->builtins_end <= m->pgoff + (m->end - m->start)) {
			p->builtins_start = m->start + (f->builtins_off - m->pgoff);
			p->builtins_end = m->start + (f->builtins_end - m->pgoff);
		}
	}
	rn->st.processes++;
	if (f->ni.node_major >= 0)
		pr_info("node: pid %d runs Node.js %d.%d.%d (V8 %d.%d.%d) (%s)\n", (int)as->pid,
			f->ni.node_major, f->ni.node_minor, f->ni.node_patch, f->ni.v8_major,
			f->ni.v8_minor, f->ni.v8_build, f->path);
	else
		pr_info("node: pid %d runs Node.js (V8 %d.%d.%d) (%s)\n", (int)as->pid,
			f->ni.v8_major, f->ni.v8_minor, f->ni.v8_build, f->path);
	return p;
}

/* Looks at image as: its first time, or its mappings changed since without Node found. */
static void look(struct run_node *rn, const struct addr_space *as)
{
	struct seen *s = hashmap__find(&rn->images, IMAGE_KEY(as));

	if (s && (s->p || s->generation == as->generation || as->end_time || as->released))
		return;
	if (!s) {
		s = calloc(1, sizeof(*s));
		if (!s || hashmap__add(&rn->images, IMAGE_KEY(as), s)) {
			free(s);
			return;
		}
	}
	s->generation = as->generation;
	for (size_t i = 0; i < as->nr_maps; i++) {
		const struct mapping *m = &as->maps[i];
		const struct node_file *f;

		if (!m->exec || !mapping__is_file(m) || !m->path)
			continue;
		f = file_of(rn, as, m);
		if (f && f->res == 1) {
			s->p = proc_new(rn, as, f);
			return;
		}
	}
}

/* ---- The pipeline's hooks ------------------------------------------------- */

static void saw_image(void *ctx, const struct addr_space *as, uint32_t status)
{
	struct run_node *rn = ctx;

	look(rn, as);
	if (!find(rn, as) && rn->next.saw_image)
		rn->next.saw_image(rn->next.ctx, as, status);
}

static void name_now(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		     unsigned int nr)
{
	struct run_node *rn = ctx;

	if (!find(rn, as) && rn->next.name_now)
		rn->next.name_now(rn->next.ctx, as, frames, nr);
}

static void mapped(void *ctx, pid_t pid, const char *path)
{
	struct run_node *rn = ctx;

	if (rn->next.mapped)
		rn->next.mapped(rn->next.ctx, pid, path);
}

/*
 * The name of f, read from p's memory now (the identity f was walked with
 * checked first) and kept by f's words: a later stack of the same frame
 * costs no read, and a process that ended keeps the names it had.
 */
static int lookup(struct run_node *rn, struct node_proc *p, const struct addr_space *as,
		  const struct interp_frame *f, const struct node_name **out)
{
	struct node_frame nf = { 0 };
	struct node_name *n = hashmap__find(&p->names, f);
	uint64_t ident;
	int err;

	if (n) {
		*out = n;
		return 0;
	}
	nf.sfi = f->code & ADDR_MASK;
	nf.kind = (uint8_t)((f->code >> 48) & 0xff);
	nf.code = f->lasti;
	nf.offset = (int32_t)(uint32_t)(f->ident >> 32);
	ident = node_sfi_ident(&p->file->ni.v8, &p->heap, nf.sfi);
	err = ident && fold(ident) == (uint32_t)f->ident ? 0 : -ESTALE;
	nf.ident = ident;
	if (!err)
		err = node_name_frame(&p->file->ni.v8, &p->heap, &nf, &rn->fi);
	/* Not named while it lived: its memory is not another's to read for it. */
	if (err && (p->gone || as->end_time || as->leader_exited))
		err = -ESRCH;
	if (err)
		return err;
	rn->st.named++;
	/* A full cache: named for this stack alone (a frame walked later is read again then). */
	n = p->names.size < MAX_NAMES ? calloc(1, sizeof(*n)) : NULL;
	if (!n) {
		rn->st.not_cached++;
		rn->tmp = (struct node_name){ .key = *f, .name = rn->fi.name, .file = rn->fi.file };
		rn->tmp.line = rn->fi.line > 0 ? (uint32_t)rn->fi.line : 0;
		rn->tmp.first_line = rn->fi.first_line > 0 ? (uint32_t)rn->fi.first_line : 0;
		*out = &rn->tmp;
		return 0;
	}
	n->key = *f;
	n->name = strdup(rn->fi.name);
	n->file = strdup(rn->fi.file);
	n->line = rn->fi.line > 0 ? (uint32_t)rn->fi.line : 0;
	n->first_line = rn->fi.first_line > 0 ? (uint32_t)rn->fi.first_line : 0;
	if (!n->name || !n->file || hashmap__add(&p->names, &n->key, n)) {
		free(n->name);
		free(n->file);
		free(n);
		return -ENOMEM;
	}
	*out = n;
	return 0;
}

/* The sample's stack copy as one buffer. */
static const void *stack_of(struct run_node *rn, const struct user_snapshot *snap, size_t *len)
{
	size_t n = 0;

	if (snap->stack) {
		*len = snap->stack_size;
		return snap->stack;
	}
	for (unsigned int i = 0; i < snap->nr_pieces; i++)
		n += snap->piece_lens[i];
	if (n > rn->joined_cap) {
		unsigned char *b = realloc(rn->joined, n);

		if (!b)
			return NULL;
		rn->joined = b;
		rn->joined_cap = n;
	}
	n = 0;
	for (unsigned int i = 0; i < snap->nr_pieces; i++) {
		memcpy(rn->joined + n, snap->pieces[i], snap->piece_lens[i]);
		n += snap->piece_lens[i];
	}
	*len = n;
	return rn->joined;
}

static unsigned int js_frames(const struct node_stack *st)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < st->nr_frames; i++)
		n += st->frames[i].kind != NODE_CODE_TYPED && st->frames[i].sfi;
	return n;
}

/*
 * Where the chain from the sample's bp meets no JavaScript (the leaf runs
 * C++ that uses rbp for data: zlib under a JavaScript call), the walk
 * starts again at a frame the native unwind found: a return address ip it
 * gave, in V8's code or the Node binary, found in the copy at fp + 8 of a
 * frame whose saved fp lies above it. That frame is the callee's: its own
 * record (pc the sample's ip) is dropped. Off-CPU stacks need it most: the
 * thread waits in libc, whose rbp is not a frame pointer.
 */
static bool restart(struct run_node *rn, struct node_proc *p, const struct addr_space *as,
		    const struct sample *s, struct node_regs *r)
{
	const uint64_t *w = r->stack;
	size_t nw = r->stack_size / 8, tries = 0;

	/*
	 * From the first frame of V8's own code the unwind met (a builtin of
	 * the Node binary, JIT code): its return address's slot has the
	 * builtin's or the JIT frame's fp beside it, and V8's frames keep
	 * theirs. None (V8's and libuv's threads, start-up): nothing to walk.
	 */
	for (unsigned int k = 1; k < s->nr_user && k < MAX_RESTART_DEPTH && tries < MAX_RESTARTS;
	     k++) {
		uint64_t ip = s->user_ips[k];
		const struct mapping *m;

		if (ip < p->builtins_start || ip >= p->builtins_end) {
			m = addr_space__find(as, ip);
			if (!m || !m->exec || mapping__is_file(m) || !strcmp(m->path, "[vdso]"))
				continue;
		}
		for (size_t i = 0; i + 1 < nw; i++) {
			uint64_t at = r->sp + 8 * i;
			struct node_regs rr = *r;

			if (w[i + 1] != ip || w[i] <= at || w[i] >= r->sp + r->stack_size ||
			    (w[i] & 7))
				continue;
			tries++;
			rr.bp = at;
			py_snap__reset(&p->snap);
			if (node_walk(&p->file->ni.v8, &rr, &p->heap, &rn->stack) ||
			    !rn->stack.nr_frames)
				break;
			if (rn->stack.frames[0].fp == at) {
				memmove(&rn->stack.frames[0], &rn->stack.frames[1],
					(rn->stack.nr_frames - 1) * sizeof(rn->stack.frames[0]));
				rn->stack.nr_frames--;
			}
			if (js_frames(&rn->stack))
				return true;
			break;
		}
	}
	return false;
}

static unsigned int walk(void *ctx, const struct addr_space *as, const struct sample *s,
			 struct interp_frame *out, unsigned int max, uint32_t *status)
{
	struct run_node *rn = ctx;
	struct node_proc *p = find(rn, as);
	const struct node_stack *st = &rn->stack;
	const struct user_snapshot *snap = s->user_snapshot ? s->user_snapshot
							    : s->unwound_snapshot;
	struct node_regs r;
	unsigned int n = 0;

	if (!p)
		return rn->next.walk ? rn->next.walk(rn->next.ctx, as, s, out, max, status) : 0;
	*status = INTERP_NONE;
	if (p->gone)
		return 0;
	rn->st.walks++;
	rn->st.off_cpu += !s->user_snapshot && s->unwound_snapshot;
	if (!snap) {
		rn->st.no_copy++;
		return 0;
	}
	r = (struct node_regs){ .ip = snap->ip, .sp = snap->sp, .bp = snap->bp };
	r.stack = stack_of(rn, snap, &r.stack_size);
	if (!r.stack)
		return 0;
	py_snap__reset(&p->snap);
	rn->stack.nr_frames = 0;
	if (node_walk(&p->file->ni.v8, &r, &p->heap, &rn->stack))
		return 0;
	if (!js_frames(st)) {
		if (!restart(rn, p, as, s, &r))
			return 0;
		rn->st.restarted++;
	}
	for (unsigned int i = 0; i < st->nr_frames && n < max; i++) {
		const struct node_frame *f = &st->frames[i];
		uint64_t code = 0;

		if (f->kind == NODE_CODE_TYPED || !f->sfi || f->sfi > ADDR_MASK)
			continue;
		if ((f->kind == NODE_CODE_MAGLEV || f->kind == NODE_CODE_TURBOFAN) && f->code)
			code = f->code;
		out[n++] = (struct interp_frame){
			.code = f->sfi | (uint64_t)f->kind << 48 | NODE_TAG << 56,
			.lasti = code,
			.ident = fold(f->ident) | (uint64_t)(uint32_t)f->offset << 32,
		};
		if (!hashmap__find(&p->pcs, (void *)(uintptr_t)f->pc)) {
			if (p->pcs.size >= MAX_PCS)
				rn->st.pcs_full++;
			else
				hashmap__add(&p->pcs, (void *)(uintptr_t)f->pc, (void *)1);
		}
	}
	if (!n)
		return 0;
	/*
	 * Named now, while the frames are what the walk saw: the stack is
	 * resolved later (JIT code's frames wait for the end of the run), when
	 * the process may have ended, or the function moved.
	 */
	for (unsigned int i = 0; i < n; i++) {
		const struct node_name *nm;

		rn->st.early_failed += lookup(rn, p, as, &out[i], &nm) != 0;
	}
	rn->st.with_js++;
	rn->st.js_frames += n;
	/*
	 * Not INTERP_FRAMES: the pipeline's counts by status are Python's -v
	 * lines. INTERP_COPIED alone says the frames are there (nr_interp).
	 */
	*status = INTERP_COPIED;
	if (st->status & NODE_WALK_TRUNCATED || n == max) {
		*status |= INTERP_TRUNCATED;
		rn->st.truncated++;
	}
	rn->st.faults += !!(st->status & NODE_WALK_FAULT);
	return n;
}

/* ---- The model's hooks ---------------------------------------------------- */

static void begin(void *ctx, const struct addr_space *as)
{
	struct run_node *rn = ctx;
	struct node_proc *p = find(rn, as);

	if (p)
		py_snap__reset(&p->snap);
	else if (rn->next_ops.begin)
		rn->next_ops.begin(rn->next_ops.ctx, as);
}

/* node: modules whole, a package's file from its node_modules/ on, else the base name. */
static const char *short_file(struct run_node *rn, const char *file)
{
	const char *nm = NULL, *p, *base;

	if (!strncmp(file, "node:", 5))
		return file;
	for (p = strstr(file, "node_modules/"); p; p = strstr(p + 1, "node_modules/"))
		nm = p + strlen("node_modules/");
	if (nm && *nm)
		return nm;
	base = strrchr(file, '/');
	if (base && base[1]) {
		snprintf(rn->short_file, sizeof(rn->short_file), "%s", base + 1);
		return rn->short_file;
	}
	return file;
}

static int name(void *ctx, const struct addr_space *as, const struct interp_frame *f,
		struct interp_name *out)
{
	struct run_node *rn = ctx;
	struct node_proc *p = find(rn, as);
	const struct node_name *n;
	int err;

	if (!p)
		return rn->next_ops.name ? rn->next_ops.name(rn->next_ops.ctx, as, f, out) : -ENOENT;
	err = lookup(rn, p, as, f, &n);
	if (err) {
		rn->st.stale += err == -ESTALE;
		rn->st.ended += err == -ESRCH;
		rn->st.unnamed += err != -ESTALE && err != -ESRCH;
		return err;
	}
	out->name = n->name;
	out->file = n->file;
	out->short_file = rn->full_paths ? n->file : short_file(rn, n->file);
	out->line = n->line;
	out->first_line = n->first_line;
	return 0;
}

static bool is_marker(void *ctx, const struct addr_space *as, const struct interp_frame *f)
{
	struct run_node *rn = ctx;

	if (find(rn, as))
		return false;
	return rn->next_ops.is_marker && rn->next_ops.is_marker(rn->next_ops.ctx, as, f);
}

/* Each JavaScript frame is one native frame of V8's code: a run of its own. */
static bool run_end(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		    unsigned int i, unsigned int n)
{
	struct run_node *rn = ctx;

	if (find(rn, as))
		return true;
	return !rn->next_ops.run_end || rn->next_ops.run_end(rn->next_ops.ctx, as, frames, i, n);
}

/*
 * A native frame at a JavaScript frame's pc stands for it; V8's builtins
 * (Builtins_*: entry, trampolines, calls) and other code V8 generated
 * between them go; the rest (C++, libraries) stays.
 */
static uint8_t role(void *ctx, const struct addr_space *as, uint64_t ip, const char *fn)
{
	struct run_node *rn = ctx;
	struct node_proc *p = find(rn, as);
	const struct mapping *m;

	if (!p)
		return rn->next_ops.role ? rn->next_ops.role(rn->next_ops.ctx, as, ip, fn)
					 : NATIVE_OTHER;
	if (hashmap__find(&p->pcs, (void *)(uintptr_t)ip))
		return NATIVE_EVAL;
	if (fn && !strncmp(fn, "Builtins_", 9))
		return NATIVE_INTERP;
	m = as->released ? NULL : addr_space__find(as, ip);
	if (m && m->exec && !mapping__is_file(m) && strcmp(m->path, "[vdso]"))
		return NATIVE_INTERP;
	return NATIVE_OTHER;
}

static const char *label(void *ctx, const struct addr_space *as)
{
	struct run_node *rn = ctx;

	if (find(rn, as))
		return "node";
	return rn->next_ops.label ? rn->next_ops.label(rn->next_ops.ctx, as) : NULL;
}

static bool raw(void *ctx, const struct addr_space *as)
{
	struct run_node *rn = ctx;

	if (find(rn, as))
		return rn->raw;
	return rn->next_ops.raw ? rn->next_ops.raw(rn->next_ops.ctx, as) : rn->next_ops.keep_native;
}

/* ---- The run -------------------------------------------------------------- */

struct run_node *run_node__new(struct pipeline *pl, struct resolver *res, bool raw_frames,
			       bool full_paths)
{
	struct run_node *rn = calloc(1, sizeof(*rn));

	if (!rn)
		return NULL;
	hashmap__init(&rn->images, id_hash, id_equal);
	hashmap__init(&rn->files, file_hash, file_equal);
	rn->pt = pl->procs;
	rn->raw = raw_frames;
	rn->full_paths = full_paths;
	rn->next = pl->interp;
	resolver__get_interp(res, &rn->next_ops);
	pipeline__set_interp(pl, &(struct pipeline_interp){ rn, saw_image, walk, name_now, mapped });
	resolver__set_interp(res, &(struct interp_ops){ .ctx = rn,
							.begin = begin,
							.name = name,
							.is_marker = is_marker,
							.run_end = run_end,
							.role = role,
							.keep_native = raw_frames,
							.label = label,
							.raw = raw });
	return rn;
}

void run_node__ended(struct run_node *rn, const struct addr_space *as)
{
	struct seen *s;

	if (!rn)
		return;
	s = hashmap__remove(&rn->images, IMAGE_KEY(as));
	if (!s)
		return;
	proc_free(s->p);
	free(s);
}

void run_node__free(struct run_node *rn)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!rn)
		return;
	hashmap__for_each(&rn->images, bkt, ent) {
		struct seen *s = ent->value;

		proc_free(s->p);
		free(s);
	}
	hashmap__clear(&rn->images);
	hashmap__for_each(&rn->files, bkt, ent) {
		struct node_file *f = ent->value;

		free(f->path);
		free(f);
	}
	hashmap__clear(&rn->files);
	free(rn->joined);
	free(rn);
}

void run_node__report(const struct run_node *rn, const struct resolver *res)
{
	const struct node_stats *st = &rn->st;
	struct interp_merge_counts mc;

	if (!st->processes && !st->refused)
		return;
	pr_info("node: %zu processes, %llu of %llu stacks of them with JavaScript frames "
		"(%llu at a switch-out; %llu frames; %llu found from a frame the native unwind gave)\n",
		st->processes, (unsigned long long)st->with_js, (unsigned long long)st->walks,
		(unsigned long long)st->off_cpu, (unsigned long long)st->js_frames,
		(unsigned long long)st->restarted);
	if (st->no_copy)
		pr_info("node: %llu stacks reached the walk without a stack copy, their JavaScript "
			"frames not read (--unwind fp takes none)\n",
			(unsigned long long)st->no_copy);
	pr_info("node: %llu distinct frames named at their walk (%llu could not be then); in the "
		"report, %llu frames unnamed (unreadable), %llu whose function was gone or moved "
		"before it was named, %llu of processes that ended first\n",
		(unsigned long long)st->named, (unsigned long long)st->early_failed,
		(unsigned long long)st->unnamed, (unsigned long long)st->stale,
		(unsigned long long)st->ended);
	resolver__interp_counts_other(res, &mc);
	if (mc.no_eval || mc.mismatched)
		pr_info("node: of %llu stacks with JavaScript frames, %llu had no native frame at "
			"their pcs (put under the native leaf), %llu more or fewer than their "
			"frames\n", (unsigned long long)mc.stacks, (unsigned long long)mc.no_eval,
			(unsigned long long)mc.mismatched);
	if (st->truncated || st->faults)
		pr_info("node: %llu walks cut at %d frames, %llu ended at a slot or object that "
			"could not be read\n", (unsigned long long)st->truncated, NODE_MAX_FRAMES,
			(unsigned long long)st->faults);
	if (st->no_handle || st->handed_over)
		pr_info("node: %zu processes' memory could not be opened, %zu had their pid "
			"another's by then\n", st->no_handle, st->handed_over);
	if (st->not_cached)
		pr_info("node: %llu names not kept (a process's cache holds %u): read again at "
			"each stack\n", (unsigned long long)st->not_cached, MAX_NAMES);
	if (st->pcs_full)
		pr_info("node: %llu JavaScript frames' return addresses not kept (a process's "
			"%u): their native frames may stay unplaced\n",
			(unsigned long long)st->pcs_full, MAX_PCS);
}
