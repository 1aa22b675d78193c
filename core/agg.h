/* SPDX-License-Identifier: GPL-2.0 */
/* Counts identical raw stacks: same process image, comm, and addresses. */
#ifndef CORE_AGG_H
#define CORE_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "core/hashmap.h"
#include "core/proctrack.h"
#include "core/sample.h"

struct agg_entry {
	const struct addr_space *as;	/* where user addresses resolve; may be NULL */
	pid_t pid;
	char comm[TASK_COMM_LEN];
	int kernel_err;
	int user_err;
	uint32_t nr_kernel;
	uint32_t nr_user;
	uint64_t count;
	/* Its text once formatted during the run (struct printed_stack), else NULL. */
	void *printed;
	uint64_t ips[];			/* nr_kernel kernel ips, then nr_user user ips */
};

struct agg {
	struct hashmap map;		/* entry -> entry */
	uint64_t total;			/* sum of all weights */
	/* Entries added since the report last looked (report__prepare). */
	struct agg_entry **fresh;
	size_t nr_fresh, cap_fresh;
};

void agg__init(struct agg *agg);
void agg__clear(struct agg *agg);

/* Count s (its weight) against the stack it carries. Returns 0 or -ENOMEM. */
int agg__add(struct agg *agg, const struct sample *s, const struct addr_space *as);
size_t agg__size(const struct agg *agg);

#define agg__for_each(agg, bkt, ent, e)                                         \
	hashmap__for_each(&(agg)->map, bkt, ent) if (((e) = (ent)->value), 1)

#endif
