/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal to app/run (scripts/check-includes.sh keeps it there): which
 * processes a backend's bounded table of interpreter processes keeps, each
 * owner its share, whatever runtime they run (fair_order.c), and what a
 * table left out, for -v.
 */
#ifndef APP_RUN_FAIR_ORDER_INTERNAL_H
#define APP_RUN_FAIR_ORDER_INTERNAL_H

#include <stddef.h>
#include <sys/types.h>

/* A process to tell a backend of, and its place in the order. */
struct fair_slot {
	uid_t uid;			/* its owner */
	size_t found;			/* the order it was found in (the caller's index of it) */
	size_t rank;			/* how many of its owner's processes were found before it */
};

/* The most processes a backend's table left out at once, and whose most of them were. */
struct left_out {
	size_t procs, of;
	uid_t uid;
	size_t uid_procs;
};

/*
 * slots (uid and found filled in) in the order a backend's bounded table
 * keeps them, their ranks set.
 */
void order_fairly(struct fair_slot *slots, size_t n);

/* A table kept the first kept of order's n (order_fairly's): noted if it left out the most yet. */
void note_left_out(struct left_out *lo, const struct fair_slot *order, size_t n, size_t kept);

#endif
