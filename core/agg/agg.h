/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counts identical raw stacks: same process image, thread (when threads are
 * kept apart), comm and addresses. Each stack carries one total per weight
 * kind, so on-CPU samples and off-CPU time can share a profile.
 */
#ifndef CORE_AGG_AGG_H
#define CORE_AGG_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "core/agg/sample.h"
#include "core/lib/hashmap.h"
#include "core/proc/proctrack.h"

struct agg_entry {
	const struct addr_space *as;	/* where user addresses resolve; may be NULL */
	pid_t pid;
	pid_t tid;			/* 0 unless stacks are kept apart by thread */
	char comm[TASK_COMM_LEN];
	int kernel_err;
	int user_err;
	uint32_t nr_kernel;
	uint32_t nr_user;
	uint64_t weights[NR_WEIGHT_KINDS];
	uint64_t ips[];			/* nr_kernel kernel ips, then nr_user user ips */
};

struct agg {
	struct hashmap map;		/* entry -> entry */
	uint64_t totals[NR_WEIGHT_KINDS];
	/* Entries added since they were last looked at, oldest first (work done during the run). */
	struct agg_entry **fresh;
	size_t nr_fresh, cap_fresh;
};

void agg__init(struct agg *agg);
void agg__fini(struct agg *agg);

/*
 * Count s's weight against the stack it carries (its ips as given: the
 * pipeline has applied the stack rules), kept apart by tid if tid != 0.
 * Returns 0 or -ENOMEM.
 */
int agg__add(struct agg *agg, const struct sample *s, const struct addr_space *as, pid_t tid);
size_t agg__size(const struct agg *agg);
/* The sum of the weights of one kind: samples kept, or ns off-CPU. */
uint64_t agg__total(const struct agg *agg, enum weight_kind kind);

/* The first n of agg->fresh have been looked at. */
void agg__forget_fresh(struct agg *agg, size_t n);

#define agg__for_each(agg, bkt, ent, e)                                         \
	hashmap__for_each(&(agg)->map, bkt, ent) if (((e) = (ent)->value), 1)

#endif
