// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames in a run: the registry of Python processes (interp/python)
 * made and freed, hooked into the pipeline (each sample's image looked at,
 * the frames read for a backend that cannot walk them in the kernel) and
 * into the model, which names and places their frames (struct interp_ops).
 * Finding the processes and reading their threads is python_scan.c's.
 */
#include "app/run/python.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/run/python_early.h"
#include "app/run/python_internal.h"
#include "app/run/python_watch.h"
#include "app/run/scan_budget_internal.h"
#include "core/lib/clock.h"
#include "core/model/interp_merge.h"
#include "core/model/resolve.h"
#include "interp/python/registry.h"

static unsigned int walk(void *ctx, const struct addr_space *as, const struct sample *s,
			 struct interp_frame *out, unsigned int max, uint32_t *status)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);
	pid_t tid = s->tid;

	*status = INTERP_NONE;
	if (!p || p->gone)
		return 0;
	/* A thread started since the last read: the reader thread's table gets it at the tick. */
	if (!py_process__thread(p, tid) && may_scan_early(p->next_scan_ms, mono_ms())) {
		run_python__scan_threads(rp, p, mono_ms());
		rp->changed |= py_process__thread(p, tid) != NULL;
	}
	return py_process__walk(p, tid, out, max, status);
}

/*
 * A stack's frames are named through its process's page snapshot: fresh
 * pages for each stack. Pages kept from earlier stacks would show code
 * objects and strings as they were then (a string freed since and its
 * memory another's: a live function named under an exception's message).
 */
static void begin(void *ctx, const struct addr_space *as)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	if (p && p->snap)
		py_snap__reset(p->snap);
}

static int name(void *ctx, const struct addr_space *as, const struct interp_frame *f,
		struct interp_name *out)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);
	struct py_code_info ci;
	int err;

	/*
	 * Never read: its process ended, or had its pid taken, before it was
	 * found (the registry does not read a process through a pid another
	 * held by then, issue 46).
	 */
	if (!p)
		return as->end_time || as->leader_exited ? -ESRCH : -ENOENT;
	err = py_process__name(p, f, &ci);
	/* Not named while it lived: its memory is not another's to read for it. */
	if (err && err != -ESTALE && (p->gone || as->end_time || as->leader_exited))
		err = -ESRCH;
	if (err)
		return err;
	out->name = ci.name;
	out->file = ci.file;
	out->short_file = rp->full_paths ? ci.file : py_short_filename(ci.file);
	out->line = ci.line > 0 ? (uint32_t)ci.line : 0;
	out->first_line = ci.firstline > 0 ? (uint32_t)ci.firstline : 0;
	return 0;
}

/* Frames whose samples may come after their process ended: their code objects cached now. */
static void name_now(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		     unsigned int nr)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);
	struct py_code_info ci;
	bool begun = false;

	if (!p || p->gone)
		return;
	/* Those named already cost no read: the perf backend asks at every switch-out. */
	for (unsigned int i = 0; i < nr; i++) {
		if (py_process__is_shim(p, &frames[i]) || py_process__named(p, &frames[i]))
			continue;
		if (!begun)
			begin(rp, as);
		begun = true;
		py_process__name(p, &frames[i], &ci);
	}
}

static void mapped(void *ctx, pid_t pid, const char *path)
{
	struct run_python *rp = ctx;

	if (py_registry__interpreter_name(path))
		python_watch__add(&rp->watch, pid, mono_ms());
}

static bool is_marker(void *ctx, const struct addr_space *as, const struct interp_frame *f)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	return p && py_process__is_shim(p, f);
}

static bool run_end(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		    unsigned int i, unsigned int n)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	return !p || py_process__run_end(p, frames, i, n);
}

/*
 * The interpreter's own C functions worth keeping between Python frames:
 * where a thread waits or works for the program (py-spy keeps the same).
 */
static bool worth_keeping(const char *name)
{
	static const char *const prefixes[] = { "time_", "sys_", "gc_", "os_", "unicode_",
						"thread_", "stringio_", "sre_", "PyGILState_",
						"PyThread_", "lock_", "_thread" };

	for (size_t i = 0; name && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static uint8_t role(void *ctx, const struct addr_space *as, uint64_t ip, const char *fn)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	if (!p)
		return NATIVE_OTHER;
	if (py_process__in_eval(p, ip))
		return NATIVE_EVAL;
	if (!py_process__in_interpreter(p, as, ip))
		return NATIVE_OTHER;
	return worth_keeping(fn) ? NATIVE_INTERP_KEEP : NATIVE_INTERP;
}

struct run_python *run_python__new(struct pipeline *pl, struct resolver *res, bool raw,
				   bool full_paths)
{
	struct run_python *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->reg = py_registry__new();
	rp->early = python_early__new();
	if (!rp->reg || !rp->early) {
		py_registry__free(rp->reg);
		python_early__free(rp->early);
		free(rp);
		return NULL;
	}
	py_registry__set_tracker(rp->reg, pl->procs);
	rp->raw = raw;
	rp->full_paths = full_paths;
	pipeline__set_interp(pl, &(struct pipeline_interp){ rp, run_python__saw_image, walk, name_now,
							      mapped });
	resolver__set_interp(res, &(struct interp_ops){ .ctx = rp,
							.begin = begin,
							.name = name,
							.is_marker = is_marker,
							.run_end = run_end,
							.role = role,
							.keep_native = raw });
	return rp;
}

void run_python__free(struct run_python *rp)
{
	if (!rp)
		return;
	py_registry__free(rp->reg);
	python_early__free(rp->early);
	free(rp->procs);
	free(rp->threads);
	free(rp->order);
	free(rp->pending);
	free(rp);
}

void run_python__set_backend(struct run_python *rp, struct backend *b,
			     const struct backend_ops *ops)
{
	rp->backend = b;
	rp->ops = ops;
	rp->changed = true;
}

bool run_python__watching(const struct run_python *rp)
{
	return python_watch__busy(&rp->watch);
}

const struct interp_reader *run_python__reader(struct run_python *rp)
{
	return python_early__reader(rp->early);
}

void run_python__ended(struct run_python *rp, const struct addr_space *as)
{
	py_registry__forget(rp->reg, as);
	rp->changed = true;
}
