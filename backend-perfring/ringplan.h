/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring sizes for every ring set of a run, planned together within the
 * memory the kernel lets this user lock for perf rings: each mmap'ed ring
 * of 2^n data pages costs 2^n + 1 pages, charged first to the user's
 * kernel.perf_event_mlock_kb per online CPU (shared by all the user's
 * processes), the rest to RLIMIT_MEMLOCK (perf_mmap(); both since 2.6.31).
 * Root, CAP_IPC_LOCK and perf_event_paranoid -1 have no such limit.
 */
#ifndef PERFRING_RINGPLAN_H
#define PERFRING_RINGPLAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How long the reader may be kept from the rings on a busy host. */
#define RING_PLAN_DELAY_MS 250
/* No ring wants less than perf record's default (516 KiB with the metadata page). */
#define RING_PLAN_WANT_PAGES 128
/* Root: one ring at most this, all rings at most RING_PLAN_ROOT_TOTAL pages. */
#define RING_PLAN_ROOT_MAX_PAGES 1024
#define RING_PLAN_ROOT_TOTAL_PAGES 32768

struct ring_budget {
	bool unlimited;
	const char *unlimited_why;	/* "root", "CAP_IPC_LOCK", "perf_event_paranoid -1" */
	uint64_t mlock_kb;		/* kernel.perf_event_mlock_kb, per online CPU */
	unsigned int online_cpus;
	uint64_t rlimit_bytes;		/* RLIMIT_MEMLOCK's soft limit */
	uint64_t pages;			/* all of it, in pages */
};

/* One ring set: nr_rings rings of the same size. */
struct ring_need {
	const char *what;		/* "perf", "off-CPU", for messages */
	unsigned int nr_rings;
	uint64_t records_per_s;		/* per ring */
	uint64_t record_bytes;		/* a typical record, stack copies included */
	uint64_t max_record_bytes;	/* the largest a record can be */
	/* Out: */
	unsigned int min_pages, want_pages, pages;
};

/* The budget of this process, from /proc/sys and its credentials. */
void ring_budget__read(struct ring_budget *b, size_t page_size);
/* The same from given numbers (tests, and ring_budget__read). */
void ring_budget__set(struct ring_budget *b, uint64_t mlock_kb, unsigned int online_cpus,
		      uint64_t rlimit_bytes, size_t page_size);

/*
 * Sizes for every need: each its smallest useful ring (room for four of its
 * largest records) first, then the ones furthest from what they want
 * (records_per_s x record_bytes x RING_PLAN_DELAY_MS, at least
 * RING_PLAN_WANT_PAGES) doubled while the budget allows. Returns 0, or -ENOMEM with a one-line reason in why when
 * even the smallest rings do not fit.
 */
int ring_plan(struct ring_need *needs, int nr, const struct ring_budget *b, size_t page_size,
	      char *why, size_t len);
/* A line for -v: the budget and where it comes from. */
void ring_budget__describe(const struct ring_budget *b, size_t page_size, char *buf, size_t len);

#endif
