// SPDX-License-Identifier: GPL-2.0
/*
 * Mixed stacks: a stack's interpreted frames (Python, JavaScript), named
 * through the run's interp_ops, put among its native user frames by
 * interp_merge. A native frame travels with the functions inlined into it.
 */
#include "core/model/resolve_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/agg/stack.h"
#include "core/model/interp_merge.h"

/* Interpreted frames as the merge sees them: marked with this bit, natives by their unit number. */
#define INTERP_BIT 0x80000000u
#define MAX_UNITS (MAX_STACK_DEPTH + 2)
#define MAX_INTERP_OUT (MAX_INTERP_DEPTH + 2)

/* Where st's counts go: Python's (no label), or the other interpreters'. */
static struct interp_merge_counts *counts_of(struct resolver *r, const struct agg_stack *st)
{
	const struct interp_ops *ops = &r->interp;

	return ops->label && ops->label(ops->ctx, st->as) ? &r->interp_counts_other
							   : &r->interp_counts;
}

/*
 * The marker frames: where a walk was cut, or a frame that could not be
 * read, "[LABEL: what]" (the interpreter of the stack's image: python, node).
 */
static int marker(struct resolver *r, const struct agg_stack *st, const char *what)
{
	const struct interp_ops *ops = &r->interp;
	const char *label = ops->label ? ops->label(ops->ctx, st->as) : NULL;
	char name[64];

	snprintf(name, sizeof(name), "[%s: %s]", label ? label : "python", what);
	return resolver__named_frame_index(r, FRAME_INTERP, name, NULL, NULL, 0, 0);
}

/* The interpreted frames of st, leaf first, as frame indexes | INTERP_BIT with their run ends. */
static int interp_frames(struct resolver *r, const struct agg_stack *st, uint32_t *out,
			 bool *run_end)
{
	const struct interp_frame *f = agg_stack__interp(st);
	const struct interp_ops *ops = &r->interp;
	unsigned int n = 0;
	int i;

	if (ops->begin && st->nr_interp)
		ops->begin(ops->ctx, st->as);
	for (unsigned int j = 0; j < st->nr_interp && n < MAX_INTERP_DEPTH; j++) {
		struct interp_name nm;
		int err;

		if (ops->is_marker(ops->ctx, st->as, &f[j]))
			continue;
		err = ops->name(ops->ctx, st->as, &f[j], &nm);
		if (err == -ESTALE) {
			counts_of(r, st)->freed++;
			i = marker(r, st, "code object freed");
		} else if (err == -ESRCH) {
			counts_of(r, st)->ended++;
			i = marker(r, st, "process ended");
		} else if (err) {
			counts_of(r, st)->unnamed++;
			i = marker(r, st, "unreadable");
		} else {
			i = resolver__named_frame_index(r, FRAME_INTERP, nm.name, nm.file,
							nm.short_file, nm.line, nm.first_line);
		}
		if (i < 0)
			return i;
		run_end[n] = ops->run_end(ops->ctx, st->as, f, j, st->nr_interp);
		out[n++] = (uint32_t)i | INTERP_BIT;
	}
	/* Where a walk was cut; or, ENDED, what stands for the frames of a process gone. */
	if (st->interp_status & (INTERP_FAULT | INTERP_TRUNCATED | INTERP_ENDED)) {
		counts_of(r, st)->ended += !!(st->interp_status & INTERP_ENDED);
		i = marker(r, st,
			   st->interp_status & INTERP_ENDED  ? "process ended"
			   : st->interp_status & INTERP_FAULT ? "unreadable"
							       : "truncated");
		if (i < 0)
			return i;
		if (n)
			run_end[n - 1] = false;
		run_end[n] = true;
		out[n++] = (uint32_t)i | INTERP_BIT;
	}
	return (int)n;
}

int resolver__mix_interp(struct resolver *r, const struct agg_stack *st, uint32_t *idx,
			 unsigned int from, unsigned int n)
{
	uint32_t unit_start[MAX_UNITS + 1], natives[MAX_UNITS], interp[MAX_INTERP_OUT];
	uint32_t merged[MAX_UNITS + MAX_INTERP_OUT], copy[MAX_STACK_DEPTH * 8];
	const struct interp_ops *ops = &r->interp;
	uint8_t role[MAX_UNITS];
	bool run_end[MAX_INTERP_OUT];
	unsigned int nu = 0, len = n - from, out = from, m;
	struct merge_stats ms;
	int ni;

	if (!ops->name || len > sizeof(copy) / sizeof(copy[0]))
		return (int)n;
	ni = interp_frames(r, st, interp, run_end);
	if (ni <= 0)
		return ni < 0 ? ni : (int)n;
	/* Native units: a frame and the inlined calls before it. */
	memcpy(copy, idx + from, len * sizeof(*copy));
	unit_start[0] = 0;
	for (unsigned int k = 0; k < len && nu < MAX_UNITS; k++) {
		const struct profile_frame *f = &r->prof.frames[copy[k]];

		if (f->kind == FRAME_INLINE)
			continue;
		natives[nu] = nu;
		role[nu] = f->kind == FRAME_USER ? ops->role(ops->ctx, st->as, f->address, f->name)
						 : NATIVE_OTHER;
		unit_start[++nu] = k + 1;
	}
	m = interp_merge(&(struct merge_input){
				 natives, role, nu, interp, run_end, (unsigned int)ni,
				 ops->raw ? ops->raw(ops->ctx, st->as) : ops->keep_native,
				 (st->interp_status & (INTERP_FAULT | INTERP_TRUNCATED)) ||
					 (len && r->prof.frames[copy[len - 1]].address ==
							 STACK_TRUNCATED_IP) },
			 merged, &ms);
	counts_of(r, st)->stacks++;
	counts_of(r, st)->no_eval += ms.no_eval;
	counts_of(r, st)->mismatched += ms.extra_eval || ms.extra_interp;
	for (unsigned int k = 0; k < m; k++) {
		if (merged[k] & INTERP_BIT) {
			idx[out++] = merged[k] & ~INTERP_BIT;
			continue;
		}
		for (uint32_t u = unit_start[merged[k]]; u < unit_start[merged[k] + 1]; u++)
			idx[out++] = copy[u];
	}
	return (int)out;
}
