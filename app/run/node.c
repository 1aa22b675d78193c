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
#include "app/run/node_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/log.h"
#include "core/model/interp_merge.h"

/* ---- The pipeline's hooks ------------------------------------------------- */

static void saw_image(void *ctx, const struct addr_space *as, uint32_t status)
{
	struct run_node *rn = ctx;

	node_look(rn, as);
	if (!node_find(rn, as) && rn->next.saw_image)
		rn->next.saw_image(rn->next.ctx, as, status);
}

static void name_now(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		     unsigned int nr)
{
	struct run_node *rn = ctx;

	if (!node_find(rn, as) && rn->next.name_now)
		rn->next.name_now(rn->next.ctx, as, frames, nr);
}

static void mapped(void *ctx, pid_t pid, const char *path)
{
	struct run_node *rn = ctx;

	if (rn->next.mapped)
		rn->next.mapped(rn->next.ctx, pid, path);
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
	struct node_proc *p = node_find(rn, as);
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
			.ident = node_fold(f->ident) | (uint64_t)(uint32_t)f->offset << 32,
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

		rn->st.early_failed += node_lookup(rn, p, as, &out[i], &nm) != 0;
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

/* ---- The run -------------------------------------------------------------- */

struct run_node *run_node__new(struct pipeline *pl, struct resolver *res, bool raw_frames,
			       bool full_paths)
{
	struct run_node *rn = calloc(1, sizeof(*rn));
	struct interp_ops ops;

	if (!rn)
		return NULL;
	hashmap__init(&rn->images, node_id_hash, node_id_equal);
	hashmap__init(&rn->files, node_file_hash, node_file_equal);
	rn->pt = pl->procs;
	rn->raw = raw_frames;
	rn->full_paths = full_paths;
	rn->next = pl->interp;
	resolver__get_interp(res, &rn->next_ops);
	pipeline__set_interp(pl, &(struct pipeline_interp){ rn, saw_image, walk, name_now, mapped });
	node_model_ops(rn, raw_frames, &ops);
	resolver__set_interp(res, &ops);
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
	node_proc_free(s->p);
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

		node_proc_free(s->p);
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
