// SPDX-License-Identifier: GPL-2.0
#include "core/model/interp_merge.h"

#include <string.h>

/* Interpreted frames from *j to the end of their run, into out. */
static unsigned int put_run(const struct merge_input *in, unsigned int *j, uint32_t *out)
{
	unsigned int n = 0;

	while (*j < in->nr_interp) {
		bool end = in->run_end[*j];

		out[n++] = in->interp[(*j)++];
		if (end)
			break;
	}
	return n;
}

static unsigned int put_rest(const struct merge_input *in, unsigned int *j, uint32_t *out)
{
	unsigned int n = 0;

	while (*j < in->nr_interp)
		out[n++] = in->interp[(*j)++];
	return n;
}

/* Runs of interpreted frames (an unclosed last one counts). */
static unsigned int count_runs(const struct merge_input *in)
{
	unsigned int runs = 0;

	for (unsigned int j = 0; j < in->nr_interp; j++)
		runs += in->run_end[j] || j + 1 == in->nr_interp;
	return runs;
}

unsigned int interp_merge(const struct merge_input *in, uint32_t *out, struct merge_stats *st)
{
	unsigned int n = 0, j = 0, i, outermost = in->nr_native, evals = 0, runs, skip = 0,
		     extra = 0;

	memset(st, 0, sizeof(*st));
	for (i = 0; i < in->nr_native; i++)
		if (in->role[i] == NATIVE_EVAL) {
			outermost = i;
			evals++;
		}
	runs = count_runs(in);
	st->extra_eval = evals > runs;
	st->extra_interp = evals && runs > evals;
	/*
	 * Lined up from the root: the leafmost eval calls whose frames had
	 * returned by the read run nothing, or the leafmost one runs the
	 * frames called since as well. From the leaf: the rootmost differ.
	 */
	if (!in->root_cut) {
		skip = evals > runs ? evals - runs : 0;
		extra = runs > evals ? runs - evals : 0;
	}

	if (outermost == in->nr_native) {
		/* No eval loop call: the leaf's native frames, then every interpreted frame. */
		st->no_eval = in->nr_interp > 0;
		for (i = 0; i < in->nr_native && in->role[i] == NATIVE_OTHER; i++)
			out[n++] = in->native[i];
		if (!in->nr_interp || in->keep_native)
			for (; i < in->nr_native; i++)
				out[n++] = in->native[i];
		return n + put_rest(in, &j, out + n);
	}

	for (i = 0; i < in->nr_native; i++) {
		switch (in->role[i]) {
		case NATIVE_EVAL:
			/* The frames it ran are its callees: leafward of it where it stays. */
			if (skip) {
				skip--;
			} else {
				n += put_run(in, &j, out + n);
				for (; extra; extra--)
					n += put_run(in, &j, out + n);
			}
			if (i == outermost && j < in->nr_interp)
				n += put_rest(in, &j, out + n);
			if (in->keep_native)
				out[n++] = in->native[i];
			break;
		case NATIVE_INTERP:
			/* Between or below the Python frames it is the interpreter working: it goes. */
			if (in->keep_native || i > outermost)
				out[n++] = in->native[i];
			break;
		default:
			out[n++] = in->native[i];
			break;
		}
	}
	return n;
}
