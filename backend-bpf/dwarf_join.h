/* SPDX-License-Identifier: GPL-2.0 */
#ifndef PROFILE_BACKEND_BPF_DWARF_JOIN_H
#define PROFILE_BACKEND_BPF_DWARF_JOIN_H

/*
 * The stack-copy programs' records (bpf/profile_maps.h), each CPU's joined
 * into samples: the Python frames walked at the sample, pieces of the copy,
 * then the head that closes them, or (5.15) head, last piece and kernel
 * stack in one record. No BPF and no
 * pipeline here: what a record says is checked against its size, and a
 * sample whose records were lost or bad is dropped (and counted) at its
 * head. Split from backend-bpf/dwarf.c so a fuzz target can feed it.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpf/profile_maps.h"
#include "core/sample/sample.h"

/*
 * A joined sample: its head (copied out, aligned), the kernel stack the
 * record carried (ended by a zero if shorter than PROFILE_MAX_STACK_DEPTH)
 * or NULL when the head names it by stack id, and the user stack copy
 * when the head has user registers (else NULL). Valid during the call.
 */
typedef void (*dwarf_sample_fn)(void *ctx, int cpu, uint64_t time, const struct dwarf_head *head,
				const uint64_t *kstack, const struct user_snapshot *snap);

struct dwarf_join;

struct dwarf_joiner {
	struct dwarf_join *cpus;
	int nr_cpus;
	unsigned int longest_piece;	/* the loaded program's */
	size_t dump_size;		/* --stack-dump-size: the copy is cut there */
	dwarf_sample_fn on_sample;
	void *ctx;
	/*
	 * Samples, not records: a stack copy is a head and its pieces, so lost
	 * records are turned into samples by the records a sample took on
	 * average; heads whose pieces were lost are samples lost for sure.
	 */
	uint64_t records, heads, broken_heads;
	uint64_t bad;		/* records that did not hold what they said */
	int err;		/* -ENOMEM joining pieces, for the drain to return */
};

/* 0, or -ENOMEM. */
int dwarf_joiner__init(struct dwarf_joiner *jn, int nr_cpus, unsigned int longest_piece,
		       size_t dump_size, dwarf_sample_fn on_sample, void *ctx);
void dwarf_joiner__exit(struct dwarf_joiner *jn);
/* One record of cpu's ring (data is only 4-byte aligned); always 0 (a ring callback's). */
int dwarf_joiner__record(struct dwarf_joiner *jn, int cpu, uint64_t time, const void *data,
			 uint32_t size);
/*
 * During the sample callback: the Python frames the program sent before
 * head on cpu (DWARF_REC_PY, leaf first, *nr of them), or NULL when head
 * says none were sent or they did not all arrive whole, in order, of its
 * thread.
 */
const struct interp_frame *dwarf_joiner__py(const struct dwarf_joiner *jn, int cpu,
					    const struct dwarf_head *head, unsigned int *nr);
/* Records of cpu (or every CPU when cpu is out of range) were lost: drop the sample joined. */
void dwarf_joiner__lost(struct dwarf_joiner *jn, int cpu);
/*
 * The ring batch the records point into is about to be reused: pieces
 * still waiting for their head are copied out of it.
 */
void dwarf_joiner__batch_done(struct dwarf_joiner *jn);

#endif
