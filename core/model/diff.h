/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Two profiles compared: one profile of both, a stack per distinct printed
 * stack (comm and frame names: files carry no addresses) with its value in
 * each (columns "base" and "new"), and the change of each function's self
 * share, in points of each profile's own total.
 */
#ifndef CORE_MODEL_DIFF_H
#define CORE_MODEL_DIFF_H

#include <stddef.h>

#include "core/model/profile.h"

/* base and new (one column each) into out (differential). Returns 0 or -ENOMEM. */
int profile__diff(const struct profile *base, const struct profile *new, struct profile *out);

struct diff_function {
	const char *name;	/* the frame's name; "[unknown]" for none */
	double base, new;	/* self share, percent of each profile's total */
};

/*
 * Each function's self share (samples where it is the leaf) in both, sorted
 * by the change (the largest growth first). *out is freed by the caller.
 * Returns 0 or -ENOMEM.
 */
int profile__diff_functions(const struct profile *diff, struct diff_function **out, size_t *nr);

/* The totals of the two columns. */
void profile__diff_totals(const struct profile *diff, uint64_t *base, uint64_t *new);

#endif
