// SPDX-License-Identifier: GPL-2.0
#include "core/agg/stack.h"

#include "core/sample/sample.h"

/* PERF_CONTEXT_MAX: every context marker of a callchain is at or above it. */
#define CONTEXT_MARKER_MIN ((uint64_t)-4095)

unsigned int stack__depth(const uint64_t *ips, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		if (ips[i] == STACK_TRUNCATED_IP)
			return i + 1;
		if (!ips[i] || ips[i] >= CONTEXT_MARKER_MIN)
			return i;
	}
	return nr;
}

unsigned int stack__user_depth(const struct addr_space *as, const uint64_t *ips, unsigned int nr)
{
	/* A process whose mappings are not known (not readable, gone before seen): keep all. */
	if (!as || !as->nr_maps)
		return nr;
	for (unsigned int i = 1; i < nr; i++)
		if (ips[i] != STACK_TRUNCATED_IP &&
		    !addr_space__find(as, stack__lookup_addr(ips[i], i)))
			return i;
	return nr;
}

unsigned int stack__collapse_loop(uint64_t *ips, unsigned int nr)
{
	unsigned int run = 1;

	if (nr < MAX_STACK_DEPTH)
		return nr;
	while (run < nr && ips[nr - 1 - run] == ips[nr - 1])
		run++;
	if (run < STACK_LOOP_MIN) {
		/* No loop, but cut all the same: the root is lost, the marker takes its slot. */
		ips[nr - 1] = STACK_TRUNCATED_IP;
		return nr;
	}
	ips[nr - run + 1] = STACK_TRUNCATED_IP;
	return nr - run + 2;
}

unsigned int stack__frames_above(const uint64_t *ips, unsigned int nr, uint64_t start,
				 uint64_t end)
{
	for (unsigned int i = 0; i < nr && start; i++)
		if (ips[i] >= start && ips[i] < end)
			return i;
	return 0;
}
