// SPDX-License-Identifier: GPL-2.0
/*
 * The resolver's stacks: each counted stack made a profile stack of frames
 * (frames.c), stacks of the same frames sharing one run of them; while
 * sampling, those whose names are final, a little after each drain; at the
 * end, the rest and every stack's values.
 */
#include "core/model/resolve_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/agg/stack.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"

/* Frames of one stack at most: kernel (and a marker), user with their inlined calls. */
#define MAX_RESOLVED_FRAMES                                                                \
	(2 * MAX_STACK_DEPTH + 3 + MAX_STACK_DEPTH * (DWARF_MAX_FRAMES - 1) + MAX_INTERP_DEPTH + 2)

struct resolver *resolver__new(struct symbolizer *sym, const struct resolve_spec *spec)
{
	struct resolver *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->sym = sym;
	r->spec = *spec;
	r->spec.source_lines |= spec->inline_frames;
	if (r->spec.source_lines)
		symbolizer__want_source(sym);
	profile__init(&r->prof);
	resolver__init_frames(r);
	idtable__init(&r->runs);
	return r;
}

/* What the resolver keeps to build the profile, once it has moved out. */
static void forget_all(struct resolver *r)
{
	resolver__forget_frames(r);
	idtable__clear(&r->runs);
	free(r->pending);
	r->pending = NULL;
	r->nr_pending = r->cap_pending = 0;
}

void resolver__free(struct resolver *r)
{
	if (!r)
		return;
	forget_all(r);
	profile__fini(&r->prof);
	free(r);
}

void resolver__set_interp(struct resolver *r, const struct interp_ops *ops)
{
	r->interp = *ops;
}

void resolver__get_interp(const struct resolver *r, struct interp_ops *ops)
{
	*ops = r->interp;
}

void resolver__interp_counts_other(const struct resolver *r, struct interp_merge_counts *out)
{
	*out = r->interp_counts_other;
}

void resolver__interp_counts(const struct resolver *r, struct interp_merge_counts *out)
{
	*out = r->interp_counts;
}

/* The columns of a kind of profile, and each stack's values in them. */
static void set_columns(struct profile *p, const struct resolve_spec *spec)
{
	switch (spec->kind) {
	case PROFILE_OFF_CPU:
		p->columns[0] = (struct profile_column){ "off-cpu", "microseconds", true };
		p->nr_columns = 1;
		break;
	case PROFILE_WALL:
		p->columns[0] = (struct profile_column){ "cpu", "microseconds", true };
		p->columns[1] = (struct profile_column){ "off-cpu", "microseconds", true };
		p->nr_columns = 2;
		p->period = spec->period_ns / 1000;
		break;
	default:
		/* cpu-clock counts nanoseconds: a sample stands for its period. */
		p->columns[0] = (struct profile_column){ "samples", "count", true };
		p->columns[1] = (struct profile_column){ "cpu", "nanoseconds", false };
		p->nr_columns = 2;
		p->period_column = 1;
		p->period = spec->period_ns;
		break;
	}
}

static void set_values(struct profile_stack *s, const struct agg_entry *e,
		       const struct resolve_spec *spec)
{
	uint64_t samples = e->weights[WEIGHT_SAMPLES];
	uint64_t off = (e->weights[WEIGHT_OFFCPU_NS] + 500) / 1000;	/* µs */

	switch (spec->kind) {
	case PROFILE_OFF_CPU:
		s->values[0] = off;
		break;
	case PROFILE_WALL:
		s->values[0] = samples * spec->period_ns / 1000;
		s->values[1] = off;
		break;
	default:
		s->values[0] = samples;
		s->values[1] = samples * spec->period_ns;
		break;
	}
}

/*
 * Whether a user stack whose root frame is name stopped at a Go stack
 * switch: these functions move to the system stack (g0) and call on it,
 * so what called them is on the goroutine's stack. A rule on names, hence
 * here and not with the other ends of stacks in core/agg/stack.c.
 */
static bool go_stack_switch(const char *name)
{
	static const char *const fns[] = { "runtime.systemstack", "runtime.morestack",
					   "runtime.mcall" };

	for (size_t i = 0; name && i < sizeof(fns) / sizeof(fns[0]); i++) {
		size_t n = strlen(fns[i]);

		if (!strncmp(name, fns[i], n) && (!name[n] || !strcmp(name + n, ".abi0")))
			return true;
	}
	return false;
}

/* Frames of st (kernel leaf..root, then user leaf..root) into idx; returns how many or -ENOMEM. */
static int stack_of(struct resolver *r, const struct agg_stack *st,
		    const struct resolve_spec *spec, struct profile_stack *s, uint32_t *idx)
{
	unsigned int n = 0;
	int i;

	if (spec->kernel_frames) {
		if (st->kernel_err) {
			if ((i = resolver__missed_frame_index(r, true)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->kernel_missed = true;
			s->kernel_withheld = st->kernel_err == -EACCES;
			s->collision |= st->kernel_err == -EEXIST;
			s->map_full |= st->kernel_err == -ENOMEM;
		}
		for (unsigned int k = 0; k < st->nr_kernel && !st->kernel_err; k++) {
			if ((i = resolver__kernel_frame_index(r, st->ips[k], k)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
	}
	s->nr_kernel = (uint16_t)n;
	if (spec->user_frames) {
		if (st->user_err) {
			if ((i = resolver__missed_frame_index(r, false)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
			s->user_missed = true;
			s->user_withheld = st->user_err == -EACCES;
			s->collision |= st->user_err == -EEXIST;
			s->map_full |= st->user_err == -ENOMEM;
		}
		for (unsigned int u = 0; u < st->nr_user && !st->user_err; u++) {
			i = resolver__user_frame_index(r, st->as, st->ips[st->nr_kernel + u], u);
			if (i < 0)
				return i;
			/* --inline: the inlined calls, innermost first, then the frame holding them. */
			if (spec->inline_frames)
				for (int k = r->prof.frames[i].nr_inline; k > 0; k--)
					idx[n++] = (uint32_t)(i - k);
			idx[n++] = (uint32_t)i;
		}
		if (n > s->nr_kernel && go_stack_switch(r->prof.frames[idx[n - 1]].name)) {
			if ((i = resolver__user_frame_index(r, st->as, STACK_GO_SWITCH_IP, 1)) < 0)
				return i;
			idx[n++] = (uint32_t)i;
		}
		if (st->nr_interp ||
		    (st->interp_status & (INTERP_FAULT | INTERP_TRUNCATED | INTERP_ENDED))) {
			if ((i = resolver__mix_interp(r, st, idx, s->nr_kernel, n)) < 0)
				return i;
			n = (unsigned int)i;
		}
	}
	s->nr_user = (uint16_t)(n - s->nr_kernel);
	return (int)n;
}

struct run_query {
	const struct profile *p;
	const uint32_t *idx;
	unsigned int nr, nr_kernel;
};

static bool run_match(const void *ctx, uint32_t id)
{
	const struct run_query *q = ctx;
	const struct profile_stack *s = &q->p->stacks[id];

	return s->nr_kernel == q->nr_kernel && s->nr_kernel + s->nr_user == q->nr &&
	       !memcmp(q->p->stack_frames + s->first, q->idx, q->nr * sizeof(*q->idx));
}

/*
 * s with its nr frames idx; stacks of the same frames (other pids, other
 * comms) share their run. Returns the stack's index or -ENOMEM.
 */
static int add_run(struct resolver *r, struct profile_stack *s, const uint32_t *idx,
		   unsigned int nr)
{
	struct run_query q = { &r->prof, idx, nr, s->nr_kernel };
	uint64_t hash = hash_bytes(idx, nr * sizeof(*idx), s->nr_kernel);
	int64_t found = idtable__find(&r->runs, hash, run_match, &q);
	int i;

	if (found >= 0) {
		s->first = r->prof.stacks[found].first;
		return profile__add_stack_run(&r->prof, s);
	}
	i = profile__add_stack(&r->prof, s, idx, nr);
	/* Out of memory here only costs the sharing. */
	if (i >= 0)
		idtable__add(&r->runs, hash, (uint32_t)i);
	return i;
}

/* e as a profile stack (values left zero); returns its index or -ENOMEM. */
static int add_stack(struct resolver *r, const struct agg_entry *e)
{
	uint32_t idx[MAX_RESOLVED_FRAMES];
	struct profile_stack s = { 0 };
	const struct agg_stack *st = e->raw;
	int n;

	if (!st)
		return -EINVAL;	/* released, by another resolver */
	n = stack_of(r, st, &r->spec, &s, idx);
	if (n < 0)
		return n;
	s.comm = resolver__intern(r, st->comm);
	s.pid = st->pid;
	s.tid = st->tid;
	if (r->oom)
		return -ENOMEM;
	return add_run(r, &s, idx, (unsigned int)n);
}

/* Whether every frame of st has its final name now (see user_frame_final). */
static bool stack_final(const struct resolver *r, const struct agg_stack *st)
{
	if (!r->spec.user_frames || st->user_err)
		return true;
	for (unsigned int i = 0; i < st->nr_user; i++)
		if (!resolver__user_frame_final(st->as, st->ips[st->nr_kernel + i], i))
			return false;
	return true;
}

/*
 * A stack whose names are final becomes a profile stack, and its raw form
 * goes; of the others, the final frames resolve.
 */
static bool prepare_entry(struct resolver *r, struct agg *agg, struct agg_entry *e)
{
	const struct agg_stack *st = e->raw;
	int i;

	if (!st || e->model)
		return true;
	if (stack_final(r, st)) {
		i = add_stack(r, e);
		if (i < 0) {
			r->oom = true;
			return false;
		}
		e->model = (uint32_t)i + 1;
		agg__release(agg, e);
		return true;
	}
	for (unsigned int k = 0; k < st->nr_kernel && r->spec.kernel_frames; k++)
		resolver__kernel_frame_index(r, st->ips[k], k);
	for (unsigned int u = 0; u < st->nr_user; u++) {
		uint64_t ip = st->ips[st->nr_kernel + u];

		if (resolver__user_frame_final(st->as, ip, u))
			resolver__user_frame_index(r, st->as, ip, u);
	}
	return false;
}

static void add_pending(struct resolver *r, size_t id)
{
	if (r->nr_pending == r->cap_pending) {
		size_t cap = r->cap_pending ? 2 * r->cap_pending : 1024;
		size_t *p = realloc(r->pending, cap * sizeof(*p));

		if (!p) {
			r->oom = true;
			return;
		}
		r->pending = p;
		r->cap_pending = cap;
	}
	r->pending[r->nr_pending++] = id;
}

void resolver__prepare(struct resolver *r, struct agg *agg, int budget_ms)
{
	int64_t t0 = mono_ms();
	size_t done = 0;

	/* What is left waits for the next call, or for the end. */
	while (agg->nr_seen < agg->nr && !r->oom) {
		size_t id = agg->nr_seen++;

		if (!prepare_entry(r, agg, agg__entry(agg, id)) && !r->oom)
			add_pending(r, id);
		/* Checking the clock every 64 entries is cheap enough. */
		if (!(++done % 64) && mono_ms() - t0 >= budget_ms)
			break;
	}
}

bool resolver__caught_up(const struct resolver *r, const struct agg *agg)
{
	return agg->nr_seen == agg->nr && !r->oom;
}

bool resolver__finish_settled(struct resolver *r, struct agg *agg)
{
	size_t kept = 0;

	for (size_t i = 0; i < r->nr_pending && !r->oom; i++) {
		size_t id = r->pending[i];
		struct agg_entry *e;

		if (id >= agg->nr)
			continue;	/* not this agg's: it was emptied since */
		e = agg__entry(agg, id);
		if (!e->raw || e->model)
			continue;
		if (!e->raw->as || !e->raw->as->settled || !prepare_entry(r, agg, e))
			r->pending[kept++] = id;
	}
	if (r->oom)
		return false;
	r->nr_pending = kept;
	return true;
}

size_t resolver__stack_bytes(const struct resolver *r)
{
	/*
	 * What is in use, not what was reserved: the arrays double, and the
	 * half not written yet is not resident (a one-hour soak counted 740 MB
	 * "held" in a process of 640 MB). The frames are the stacks' too: each
	 * is a code address first seen in one of them, and a busy host's
	 * compilers keep showing new ones (about 1 MB a minute under make
	 * bench's compile loop).
	 */
	return r->prof.nr_stacks * sizeof(*r->prof.stacks) +
	       r->prof.nr_stack_frames * sizeof(*r->prof.stack_frames) +
	       r->runs.nr_slots * sizeof(*r->runs.slots) + r->nr_pending * sizeof(*r->pending) +
	       r->prof.nr_frames * (sizeof(*r->prof.frames) + sizeof(*r->keys)) +
	       r->frames.nr_slots * sizeof(*r->frames.slots);
}

int resolver__build(struct resolver *r, const struct agg *agg, const struct resolve_meta *meta,
		    struct profile *out)
{
	struct agg_entry *e;
	size_t id;
	int err = 0;

	/* A failure while preparing may have been a large allocation: the build tries again. */
	r->oom = false;
	set_columns(&r->prof, &r->spec);
	r->prof.start_ns = meta->start_ns;
	r->prof.duration_ns = meta->duration_ns;
	r->prof.title = resolver__intern(r, meta->title ? meta->title : "");
	r->prof.comment = resolver__intern(r, meta->comment);
	agg__for_each(agg, id, e) {
		int i = e->model ? (int)e->model - 1 : add_stack(r, e);

		if (i < 0 || r->oom || (size_t)i >= r->prof.nr_stacks) {
			err = i == -EINVAL ? -EINVAL : -ENOMEM;
			break;
		}
		set_values(&r->prof.stacks[i], e, &r->spec);
		/* A signal while the report is built stops it within a stack's time. */
		if (interrupt__pending()) {
			err = -EINTR;
			break;
		}
	}
	/* The profile moves out; the resolver keeps nothing that points into it. */
	*out = r->prof;
	profile__init(&r->prof);
	forget_all(r);
	return err;
}
