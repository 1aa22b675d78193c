// SPDX-License-Identifier: GPL-2.0
#include "core/proc/retire.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int retire_queue__push(struct retire_queue *q, const struct retiree *r)
{
	if (q->tail == q->cap) {
		size_t live = q->tail - q->head;

		if (q->head && q->head >= live) {
			/* At least half the array is taken out: slide the rest down. */
			memmove(q->items, q->items + q->head, live * sizeof(*q->items));
		} else {
			size_t ncap = q->cap ? 2 * q->cap : 256;
			struct retiree *items = realloc(q->items, ncap * sizeof(*items));

			if (!items)
				return -ENOMEM;
			memmove(items, items + q->head, live * sizeof(*items));
			q->items = items;
			q->cap = ncap;
		}
		q->head = 0;
		q->tail = live;
	}
	q->items[q->tail++] = *r;
	return 0;
}

bool retire_queue__pop_before(struct retire_queue *q, uint64_t cutoff, struct retiree *out)
{
	if (q->head == q->tail || q->items[q->head].time >= cutoff)
		return false;
	*out = q->items[q->head++];
	if (q->head == q->tail)
		q->head = q->tail = 0;
	return true;
}

size_t retire_queue__len(const struct retire_queue *q)
{
	return q->tail - q->head;
}

void retire_queue__free(struct retire_queue *q)
{
	free(q->items);
	*q = (struct retire_queue){ 0 };
}
