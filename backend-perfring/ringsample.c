// SPDX-License-Identifier: GPL-2.0
/*
 * A ring sample as the core's sample, for the perf backend's on-CPU and
 * off-CPU events alike: the attribute fields that ask for its stacks, its
 * callchain split into kernel and user ips, its user registers and stack
 * copy for the unwinder.
 */
#include "backend-perfring/ringsample.h"

#include <stdio.h>
#include <string.h>

#include "backend-perfring/ringset.h"

/* The user registers an unwinder needs (asm/perf_regs.h numbering). */
#define PERF_REG_BP 6
#define PERF_REG_SP 7
#define PERF_REG_IP 8
#define PERF_REG_DI 5
/* rdi too: glibc's vfork keeps its return address there while the parent waits. */
#define DWARF_REGS_MASK                                                                         \
	((1ull << PERF_REG_DI) | (1ull << PERF_REG_BP) | (1ull << PERF_REG_SP) |               \
	 (1ull << PERF_REG_IP))

void perfring__stack_attr(struct perf_event_attr *attr, const struct backend_config *c,
			  bool copies)
{
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_CALLCHAIN;
	attr->sample_max_stack = MAX_STACK_DEPTH;
	attr->exclude_callchain_kernel = !c->kernel_stacks;
	attr->exclude_callchain_user = !c->user_stacks;
	if (copies && c->user_stacks) {
		/* The user stack is unwound from a copy; the kernel's walk is not needed. */
		attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = DWARF_REGS_MASK;
		attr->sample_stack_user = c->stack_dump_size;
		attr->exclude_callchain_user = 1;
	}
}

void perfring__sample_attr(struct perf_event_attr *attr, const struct backend_config *c,
			   bool launch)
{
	ring_set__cpu_clock_attr(attr, c, launch);
	perfring__stack_attr(attr, c, c->dwarf);
	/* Without the right to sample the kernel, only user-mode samples are allowed. */
	attr->exclude_kernel = c->user_mode_only;
	ring_set__track_tasks(attr);
}

/* The frames of a callchain, its context markers aside: what sample_max_stack bounds. */
static uint64_t callchain_frames(const struct decoded_sample *ds)
{
	uint64_t n = 0;

	for (uint64_t i = 0; i < ds->nr_ips; i++)
		n += ds->ips[i] < (uint64_t)PERF_CONTEXT_MAX;
	return n;
}

int perfring__convert_sample(const struct decoded_sample *ds, struct proctrack *pt,
			     uint64_t *kernel, uint64_t *user, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	decode__split_callchain(ds->ips, ds->nr_ips, kernel, &s->nr_kernel, user, &s->nr_user,
				MAX_STACK_DEPTH);
	/*
	 * The kernel's walk stops at sample_max_stack frames, kernel and user
	 * ones together: with kernel frames first, the user stack is cut short
	 * of MAX_STACK_DEPTH, where the pipeline would not see the cut. It
	 * ends in the marker, in the room the kernel frames left. (A stack of
	 * exactly the budget reads as cut too: the kernel says nothing else.)
	 */
	if (s->nr_kernel && s->nr_user && s->nr_user < MAX_STACK_DEPTH &&
	    callchain_frames(ds) >= MAX_STACK_DEPTH)
		user[s->nr_user++] = STACK_TRUNCATED_IP;
	s->pid = ds->id.pid;
	s->tid = ds->id.tid;
	s->cpu = ds->id.cpu;
	s->kernel_ips = kernel;
	s->user_ips = user;
	s->kind = WEIGHT_SAMPLES;
	s->weight = 1;
	s->time = s->time_end = ds->id.time;	/* picks the process image */
	/* Each CPU's idle task is named after its CPU, as the kernel names it. */
	if (s->tid == 0)
		snprintf(s->comm, sizeof(s->comm), "swapper/%d", s->cpu);
	else
		snprintf(s->comm, sizeof(s->comm), "%s", proctrack__comm_at(pt, s->pid, s->tid, s->time));
	return 0;
}

bool perfring__user_snapshot(const struct decoded_sample *ds, uint64_t mask,
			  struct user_snapshot *snap)
{
	if (!decode__user_reg(ds, mask, PERF_REG_IP, &snap->ip) ||
	    !decode__user_reg(ds, mask, PERF_REG_SP, &snap->sp) ||
	    !decode__user_reg(ds, mask, PERF_REG_BP, &snap->bp))
		return false;	/* a kernel thread: no user stack */
	snap->has_di = decode__user_reg(ds, mask, PERF_REG_DI, &snap->di);
	snap->stack = ds->stack;
	snap->stack_size = ds->stack_size;
	snap->pieces = NULL;	/* in one piece */
	snap->piece_lens = NULL;
	snap->nr_pieces = 0;
	return true;
}
