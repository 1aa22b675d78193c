// SPDX-License-Identifier: GPL-2.0
/*
 * The processes a backend walks in the kernel, in the order its bounded
 * table keeps them, whatever runtime they run: each owner's first, then
 * each owner's second, and so on, by the order they were found. One user's
 * crowd of processes then takes its share of the table, not the slots of
 * every process found after it.
 */
#include "app/run/fair_order_internal.h"

#include <stdlib.h>

static int by_owner(const void *a, const void *b)
{
	const struct fair_slot *x = a, *y = b;

	if (x->uid != y->uid)
		return x->uid < y->uid ? -1 : 1;
	return (x->found > y->found) - (x->found < y->found);
}

static int by_rank(const void *a, const void *b)
{
	const struct fair_slot *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->found > y->found) - (x->found < y->found);
}

void order_fairly(struct fair_slot *slots, size_t n)
{
	qsort(slots, n, sizeof(*slots), by_owner);
	for (size_t i = 0; i < n; i++)
		slots[i].rank = i && slots[i].uid == slots[i - 1].uid ? slots[i - 1].rank + 1 : 0;
	qsort(slots, n, sizeof(*slots), by_rank);
}

/* How many, and the owner with the most processes, for -v. */
void note_left_out(struct left_out *lo, const struct fair_slot *order, size_t n, size_t kept)
{
	size_t best = 0;
	uid_t uid = 0;

	if (n - kept <= lo->procs)
		return;
	/* In rank order, an owner's count is its last rank + 1: the largest rank wins. */
	for (size_t i = 0; i < n; i++)
		if (order[i].rank + 1 > best) {
			best = order[i].rank + 1;
			uid = order[i].uid;
		}
	lo->procs = n - kept;
	lo->of = n;
	lo->uid = uid;
	lo->uid_procs = best;
}
