// SPDX-License-Identifier: GPL-2.0
/*
 * One stack walked: steps replayed from the step cache while the stack words
 * they read hold the same values, libunwind run (and its steps recorded)
 * from the first frame whose step is new. unwind.c says why that holds.
 */
#include <stdlib.h>
#include <string.h>

#include "core/lib/clock.h"
#include "unwind/sigmask.h"
#include "unwind/unwind_internal.h"

static struct step_entry *step_slot(struct unwinder *u, const struct step_key *k)
{
	uint64_t h = hash_u64(k->ip ^ hash_u64(k->sp ^ hash_u64(k->bp + k->exact)) ^
			      ((uint64_t)k->space_id << 32 | k->space_gen));

	return &u->steps[h & (((uint64_t)1 << u->step_bits) - 1)];
}

/*
 * Each time libunwind has run as many steps as half the cache holds, its
 * size is weighed: doubled (emptied) where at least twice as many steps
 * were replayed as run since, else kept. The same stacks sampled again (a
 * program's hot loops: 99% replayed) grow it to its full 3.9 MB within
 * seconds; stacks seen a few times (a new process's first samples, copied
 * while the bpf backend's tables are compiled: a compile loop's thousands)
 * replay a fifth to a half of them and keep it at 120 KB, where the full
 * size was most of such a run's unwinding memory.
 */
static void steps_grow(struct unwinder *u)
{
	uint64_t replayed = u->st.cached_steps - u->weighed_replayed;
	uint64_t run = u->st.steps - u->st.cached_steps - u->weighed_run;
	struct step_entry *bigger;

	if (u->step_bits >= STEP_CACHE_BITS || run < ((uint64_t)1 << u->step_bits) / 2)
		return;
	u->weighed_run += run;
	u->weighed_replayed += replayed;
	if (replayed < 2 * run)
		return;
	bigger = calloc((size_t)1 << (u->step_bits + 1), sizeof(*bigger));
	if (!bigger)
		return;
	free(u->steps);
	u->steps = bigger;
	u->step_bits++;
}

static bool same_key(const struct step_key *a, const struct step_key *b)
{
	return a->ip == b->ip && a->sp == b->sp && a->bp == b->bp && a->exact == b->exact &&
	       a->space_id == b->space_id && a->space_gen == b->space_gen;
}

/* The cached step from k, if the stack words it read hold the same values now. */
static const struct step_entry *replay(struct unwind_ctx *ctx, const struct step_key *k)
{
	const struct step_entry *e = step_slot(ctx->u, k);
	uint64_t sp = ctx->copy_sp;

	if (!e->valid || !same_key(&e->key, k))
		return NULL;
	for (unsigned int i = 0; i < e->nr_reads; i++) {
		uint64_t a = k->sp + (int64_t)e->read_off[i], v;

		if (a < sp || !unwind_ctx__copy_word(ctx, a - sp, &v) || v != e->read_val[i])
			return NULL;
	}
	return e;
}

static void remember(struct unwind_ctx *ctx, const struct step_key *k, bool end,
		     const struct unwind_regs *next, bool next_exact)
{
	struct step_entry *e;

	if (ctx->uncacheable)
		return;
	for (unsigned int i = 0; i < ctx->nr_log; i++)
		if ((int64_t)(ctx->log[i].addr - k->sp) != (int32_t)(ctx->log[i].addr - k->sp))
			return;	/* a read far from the frame: not kept by offset */
	e = step_slot(ctx->u, k);
	e->key = *k;
	e->valid = true;
	e->end = end;
	e->next_exact = next_exact;
	if (next)
		e->next = *next;
	e->nr_reads = ctx->nr_log;
	for (unsigned int i = 0; i < ctx->nr_log; i++) {
		e->read_off[i] = (int32_t)(ctx->log[i].addr - k->sp);
		e->read_val[i] = ctx->log[i].val;
	}
}

static void step_key_of(struct step_key *k, const struct addr_space *as,
			const struct unwind_regs *r, bool exact)
{
	memset(k, 0, sizeof(*k));
	k->ip = r->ip;
	k->sp = r->sp;
	k->bp = r->bp;
	k->exact = exact;
	k->space_id = as->id;
	k->space_gen = as->generation;
}

/*
 * Run libunwind from the frame of *cur, recording each step, until the stack
 * ends, a step fails, limit frames are in ips, or the next frame's step is
 * in the cache: then *cur is that frame and the caller replays from it
 * (returns true). Consecutive samples of a process mostly differ in their
 * innermost frames: libunwind walks those, the cache the deep rest.
 *
 * A fresh libunwind cursor looks up its ip itself, as for the interrupted
 * leaf; a caller's frame is looked up at its return address - 1, the call
 * (which may be the last instruction of its function), as libunwind does
 * after a step. So a caller's frame starts libunwind at ip - 1, unless
 * *exact: the frame a signal trampoline returns to was interrupted at ip.
 */
static bool unwind_from(struct unwind_ctx *ctx, struct unwind_regs *cur, bool *exact,
			uint64_t *ips, unsigned int *np, unsigned int limit)
{
	struct unwind_regs start = *cur, next;
	unsigned int n = *np;
	bool more = false;
	unw_cursor_t c;
	struct step_key k;
	unw_word_t v;

	if (!*exact)
		start.ip--;
	ctx->regs = &start;
	/* The sample's registers are the leaf's alone: rdi is known only there. */
	ctx->at_leaf = n == 1 && *exact;
	if (unw_init_remote(&c, ctx->u->uas, ctx) < 0)
		return false;
	while (n < limit) {
		bool sig;
		int ret;

		step_key_of(&k, ctx->as, cur, *exact);
		ctx->nr_log = 0;
		ctx->uncacheable = false;
		ret = unw_step(&c);
		/* From here on libunwind stands in a caller's frame: not the sample's rdi. */
		ctx->at_leaf = false;
		/*
		 * After a step, libunwind (1.6) says whether the frame it
		 * stepped from had a signal frame's CFI ('S'): *cur.
		 */
		sig = ret > 0 && unw_is_signal_frame(&c) > 0;
		if (ret > 0) {
			if (unw_get_reg(&c, UNW_X86_64_RIP, &v))
				break;
			next.ip = v;
			if (unw_get_reg(&c, UNW_X86_64_RSP, &v))
				break;
			next.sp = v;
			/* bp may be unrecoverable and unneeded further up: keep going */
			if (unw_get_reg(&c, UNW_X86_64_RBP, &v)) {
				v = 0;
				ctx->uncacheable = true;
			}
			next.bp = v;
		}
		if (ret < 0)
			break;	/* not remembered: an error may depend on more than we key on */
		if (ret == 0 || next.ip == 0) {
			remember(ctx, &k, true, NULL, false);
			break;
		}
		remember(ctx, &k, false, &next, sig);
		ips[n++] = next.ip;
		*cur = next;
		*exact = sig;
		ctx->u->st.steps++;
		step_key_of(&k, ctx->as, cur, sig);
		if (n < limit && replay(ctx, &k)) {
			more = true;
			break;
		}
	}
	*np = n;
	return more;
}

unsigned int unwind_walk(struct unwind_ctx *c, uint64_t *ips, unsigned int max)
{
	struct unwinder *u = c->u;
	const struct addr_space *as = c->as;
	const struct unwind_regs *regs = c->regs;
	/* One frame more than asked, to know whether the stack was cut. */
	uint64_t frames[MAX_STACK_DEPTH + 1];
	unsigned int n = 1, limit = (max < MAX_STACK_DEPTH ? max : MAX_STACK_DEPTH) + 1;
	struct unwind_regs cur = *regs;
	bool exact = true;	/* the leaf */
	uint64_t t0 = (uint64_t)mono_ns(), dt;
	struct step_key k;

	if (!max || !regs->ip)
		return 0;
	steps_grow(u);
	u->st.stacks++;
	frames[0] = regs->ip;
	while (n < limit) {
		const struct step_entry *e;

		step_key_of(&k, as, &cur, exact);
		e = replay(c, &k);
		if (!e) {
			bool more;

			unwind_sigmask__quiet(true);
			more = unwind_from(c, &cur, &exact, frames, &n, limit);
			unwind_sigmask__quiet(false);
			if (more)
				continue;
			if (c->ran_off_copy)
				u->st.dump_exhausted++;
			break;
		}
		if (e->end)
			break;
		cur = e->next;
		exact = e->next_exact;
		frames[n++] = cur.ip;
		u->st.steps++;
		u->st.cached_steps++;
	}
	if (n == limit) {
		n = limit - 1;
		frames[n - 1] = STACK_TRUNCATED_IP;
		u->st.truncated++;
	}
	memcpy(ips, frames, n * sizeof(ips[0]));
	dt = ((uint64_t)mono_ns() - t0) / 100;
	u->hist[dt < HIST_BUCKETS ? dt : HIST_BUCKETS - 1]++;
	return n;
}
