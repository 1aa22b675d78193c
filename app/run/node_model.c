// SPDX-License-Identifier: GPL-2.0
/*
 * Names of JavaScript frames (node.c): read from the process while it
 * lives, cached by the frame's words, and the model's hooks that hand them
 * out and tell the mixer which native frames they stand for. What is not
 * a Node image goes to the hooks that were there before (Python's).
 */
#include "app/run/node_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/model/interp_merge.h"

/*
 * The name of f, read from p's memory now (the identity f was walked with
 * checked first) and kept by f's words: a later stack of the same frame
 * costs no read, and a process that ended keeps the names it had.
 */
int node_lookup(struct run_node *rn, struct node_proc *p, const struct addr_space *as,
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
	err = ident && node_fold(ident) == (uint32_t)f->ident ? 0 : -ESTALE;
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

/* ---- The model's hooks ---------------------------------------------------- */

static void begin(void *ctx, const struct addr_space *as)
{
	struct run_node *rn = ctx;
	struct node_proc *p = node_find(rn, as);

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
	struct node_proc *p = node_find(rn, as);
	const struct node_name *n;
	int err;

	if (!p)
		return rn->next_ops.name ? rn->next_ops.name(rn->next_ops.ctx, as, f, out) : -ENOENT;
	err = node_lookup(rn, p, as, f, &n);
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

	if (node_find(rn, as))
		return false;
	return rn->next_ops.is_marker && rn->next_ops.is_marker(rn->next_ops.ctx, as, f);
}

/* Each JavaScript frame is one native frame of V8's code: a run of its own. */
static bool run_end(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		    unsigned int i, unsigned int n)
{
	struct run_node *rn = ctx;

	if (node_find(rn, as))
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
	struct node_proc *p = node_find(rn, as);
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

	if (node_find(rn, as))
		return "node";
	return rn->next_ops.label ? rn->next_ops.label(rn->next_ops.ctx, as) : NULL;
}

static bool raw(void *ctx, const struct addr_space *as)
{
	struct run_node *rn = ctx;

	if (node_find(rn, as))
		return rn->raw;
	return rn->next_ops.raw ? rn->next_ops.raw(rn->next_ops.ctx, as) : rn->next_ops.keep_native;
}

void node_model_ops(struct run_node *rn, bool raw_frames, struct interp_ops *ops)
{
	*ops = (struct interp_ops){ .ctx = rn,
				    .begin = begin,
				    .name = name,
				    .is_marker = is_marker,
				    .run_end = run_end,
				    .role = role,
				    .keep_native = raw_frames,
				    .label = label,
				    .raw = raw };
}
