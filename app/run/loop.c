// SPDX-License-Identifier: GPL-2.0
/*
 * The sample loop of a run: wait, drain, resolve a little, and at their
 * ticks let go of what ended processes held, drop idle tables and print
 * -v's minute line, until the duration ends, a signal arrives or the
 * command exits.
 */
#include "app/run/run_internal.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <unistd.h>

#include "app/run/node.h"
#include "app/run/python.h"
#include "app/run/signals.h"
#include "backend-perfring/pidwatch.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"
#include "core/model/resolve.h"
#include "core/sym/symbolize.h"
#include "unwind/unwind.h"

/* Drain at least this often, so that /proc is read while processes live. */
#define DRAIN_INTERVAL_MS 100
/* Between drains, frames are resolved for the report, a little at a time. */
#define PREPARE_BUDGET_MS 20

/*
 * Symbol and unwind tables of a file not looked up for this long are freed
 * (they are read again when needed): on a host that keeps running new
 * binaries, a binary run once is given back a minute later, while a cc1 run
 * again and again costs one reading a minute at most.
 */
#define TABLES_IDLE_MS 60000
#define PYTHON_START_INTERVAL_MS 10

unsigned int run__test_settle_grace_ms;

static void forget_space(void *ctx, const struct addr_space *as)
{
	struct run *r = ctx;

	symbolizer__forget_space(r->sym, as);
	if (r->python)
		run_python__ended(r->python, as);
	run_node__ended(r->node, as);
}

/*
 * Free the tables of files idle for TABLES_IDLE_MS (read again if needed),
 * and give back the free heap pages: main keeps the temporaries of a burst of
 * loads in the heap (first touches are dear), not beyond a sweep.
 */
static void drop_idle_tables(struct run *r)
{
	symbolizer__drop_idle(r->sym, TABLES_IDLE_MS);
	if (r->unwinder)
		unwinder__drop_idle(r->unwinder, TABLES_IDLE_MS);
	malloc_trim(0);
}

/*
 * Let go of what ended processes held, once nothing still to come can need
 * it. False when the model has stacks it has not looked at yet: they may
 * name images about to go, so the caller tries again after the next drain.
 */
static bool release_ended(struct run *r)
{
	struct proctrack *pt = r->pipeline.procs;

	if (!pt)
		return true;
	if (!resolver__caught_up(r->resolver, &r->pipeline.agg))
		return false;
	/* Members ended a grace ago: no sample of theirs is still to come. */
	pipeline__forget_ended(&r->pipeline, settle_grace_ns());
	if (proctrack__settle(pt, settle_grace_ns()) &&
	    resolver__finish_settled(r->resolver, &r->pipeline.agg)) {
		r->released_images += proctrack__release_settled(pt);
		/* Every stack naming them has its frames: nothing points at them any more. */
		r->freed_images += proctrack__free_released(pt, forget_space, r);
	}
	return true;
}

/* With -v, a line a minute: how a long run grows, its stacks and the rest. */
#define STATUS_INTERVAL_MS 60000

static void print_status(struct run *r, int64_t elapsed_ms)
{
	size_t stacks = agg__bytes(&r->pipeline.agg) + resolver__stack_bytes(r->resolver);
	long pages = 0, resident = 0;
	struct proctrack_counts pc = { 0 };
	struct symbolizer_stats syms;
	struct unwind_stats unw = { 0 };
	struct backend_stats st;
	FILE *f;

	r->ops->stats(r->backend, &st);
	if (r->pipeline.procs)
		proctrack__counts(r->pipeline.procs, &pc);
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	symbolizer__stats(r->sym, &syms);
	if (r->unwinder)
		unwinder__stats(r->unwinder, &unw);
	pr_info("%lld s: %llu samples, %zu unique raw stacks (%.1f MB), RSS %.1f MB, tables of "
		"%zu+%zu files held (%llu+%llu dropped while idle), %zu pids and %zu threads "
		"tracked\n",
		(long long)(elapsed_ms / 1000), (unsigned long long)st.samples,
		agg__size(&r->pipeline.agg), stacks / 1048576.0,
		resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0, syms.loaded, unw.images,
		(unsigned long long)syms.dropped, (unsigned long long)unw.images_dropped, pc.procs,
		pc.comms);
}

/* Sample until the duration ends, a signal arrives, or the command exits. */
int run__sample_loop(struct run *r)
{
	const struct run_opts *o = &r->eff;
	int64_t start = mono_ms(), deadline = o->duration ? start + (int64_t)o->duration * 1000 : 0;
	int64_t next_status = start + STATUS_INTERVAL_MS;
	int64_t next_settle = start + settle_interval_ms(), next_sweep = next_settle;
	int err = 0;

	progress__init(&r->progress, o, mono_ms());
	for (;;) {
		/*
		 * A launched Python command is found at its exec, before its
		 * threads block: the first second looks at it often, as at
		 * any process that has just mapped an interpreter's file.
		 */
		int timeout = r->python && ((r->launched && mono_ms() - start < 1000) ||
					    run_python__watching(r->python))
				      ? PYTHON_START_INTERVAL_MS
				      : DRAIN_INTERVAL_MS;

		if (signals__stop_requested())
			break;
		if (r->launched && launch__poll(&r->child))
			break;
		if (deadline) {
			int64_t left = deadline - mono_ms();

			if (left <= 0)
				break;
			if (left < timeout)
				timeout = (int)left;
		}
		err = r->ops->wait(r->backend, signals__wake_fd(), timeout);
		if (err)
			break;
		signals__drain_wakeups();
		err = r->ops->drain(r->backend);
		if (err == -ENOMEM || r->pipeline.dropped_oom) {
			/* Stop counting; report what was counted. */
			out_of_memory(r);
			err = 0;
			break;
		}
		if (err)
			break;
		/* Its rings are read when asked, and here: a quiet run must not let them fill. */
		pid_watch__sync(r->pidwatch);
		if (r->python)
			run_python__tick(r->python);
		resolver__prepare(r->resolver, &r->pipeline.agg, PREPARE_BUDGET_MS);
		/* Not caught up at the tick (a busy host): the next drain tries again. */
		if (mono_ms() >= next_settle && release_ended(r))
			next_settle = mono_ms() + settle_interval_ms();
		/* Apart from the settling, which a busy host may put off for many drains. */
		if (mono_ms() >= next_sweep) {
			drop_idle_tables(r);
			next_sweep = mono_ms() + settle_interval_ms();
		}
		if (log_verbosity() >= LOG_INFO && mono_ms() >= next_status) {
			print_status(r, mono_ms() - start);
			next_status += STATUS_INTERVAL_MS;
		}
		if (r->progress.on) {
			struct backend_stats st;

			r->ops->stats(r->backend, &st);
			progress__update(&r->progress, &st, mono_ms());
		}
	}
	progress__clear(&r->progress);
	return err;
}
