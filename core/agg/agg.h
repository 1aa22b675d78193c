/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Counts identical raw stacks: same process image, thread (when threads are
 * kept apart), comm and addresses. Each stack carries one total per weight
 * kind, so on-CPU samples and off-CPU time can share a profile.
 *
 * A stack is known by a keyed 128-bit fingerprint of all that. Its raw form
 * (the addresses) is kept only until its consumer, the model, has taken
 * what it needs (agg__release): under a compile loop most samples are new
 * stacks of new processes, and their addresses would otherwise be most of
 * the profiler's memory.
 */
#ifndef CORE_AGG_AGG_H
#define CORE_AGG_AGG_H

#include <stddef.h>
#include <stdint.h>

#include "core/lib/hashmap.h"
#include "core/proc/proctrack.h"
#include "core/sample/sample.h"

/* A stack as it was counted. Laid out without padding: all of it is the key. */
struct agg_stack {
	const struct addr_space *as;	/* where user addresses resolve; may be NULL */
	pid_t pid;
	pid_t tid;			/* 0 unless stacks are kept apart by thread */
	char comm[TASK_COMM_LEN];
	int kernel_err;
	int user_err;
	uint32_t nr_kernel;
	uint32_t nr_user;
	uint32_t nr_interp;
	uint32_t interp_status;		/* enum interp_status and its flags */
	/*
	 * nr_kernel kernel ips, then nr_user user ips, then nr_interp
	 * interpreter frames (struct interp_frame: INTERP_FRAME_WORDS words each).
	 */
	uint64_t ips[];
};

static inline const struct interp_frame *agg_stack__interp(const struct agg_stack *st)
{
	return (const struct interp_frame *)(st->ips + st->nr_kernel + st->nr_user);
}

struct agg_entry {
	uint64_t fp[2];			/* the fingerprint of the stack (hash_bytes128) */
	uint64_t weights[NR_WEIGHT_KINDS];
	struct agg_stack *raw;		/* NULL once released */
	uint32_t model;			/* the consumer's: 1 + what the stack became; 0: nothing yet */
};

#define AGG_CHUNK_SHIFT 10	/* 1024 entries a chunk: entries never move */

struct agg {
	struct idtable index;		/* entry ids by fingerprint */
	struct agg_entry **chunks;
	size_t nr, nr_chunks, cap_chunks;
	uint64_t totals[NR_WEIGHT_KINDS];
	/* Entries from this id on were added since they were last looked at (work done during the run). */
	size_t nr_seen;
	size_t nr_released;
	size_t raw_bytes;		/* of the raw stacks not released */
	size_t nr_forgotten;		/* entries agg__forget_entries() let go */
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
/* Bytes held for the stacks counted: entries, their index, raw stacks not released. */
size_t agg__bytes(const struct agg *agg);

static inline struct agg_entry *agg__entry(const struct agg *agg, size_t id)
{
	return &agg->chunks[id >> AGG_CHUNK_SHIFT][id & ((1u << AGG_CHUNK_SHIFT) - 1)];
}

/*
 * Free e's raw stack: its consumer has what it needs of it (e->model).
 * Samples of the same stack still count into e.
 */
void agg__release(struct agg *agg, struct agg_entry *e);

/*
 * The stacks have moved into a profile (the report): their entries go,
 * their number and the totals stay. Stacks counted after this are new.
 */
void agg__forget_entries(struct agg *agg);

/* Entries in the order they were first counted. */
#define agg__for_each(agg, id, e)                                                          \
	for ((id) = 0; (id) < (agg)->nr && (((e) = agg__entry((agg), (id))), 1); (id)++)

#endif
