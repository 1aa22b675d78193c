// SPDX-License-Identifier: GPL-2.0
/*
 * Python processes found and their threads read, within the main loop's
 * budget (scan_budget_internal.h): at each sample's image, the processes
 * running at the start (looked at before sampling until SCAN_BUDGET_MS,
 * the rest in the first ticks), the launched command and the processes
 * that mapped an interpreter's file; every tick, the thread lists due, and
 * the backend told of what changed.
 */
#include "app/run/python.h"

#include <dirent.h>
#include <stdint.h>
#include <stdlib.h>

#include "app/run/python_early.h"
#include "app/run/python_internal.h"
#include "app/run/python_watch.h"
#include "app/run/scan_budget_internal.h"
#include "app/run/signals.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"
#include "interp/python/registry.h"

void run_python__scan_threads(struct run_python *rp, struct py_process *p, int64_t now)
{
	int64_t t0 = mono_ns(), cost_us;

	py_process__scan_threads(p);
	cost_us = (mono_ns() - t0) / 1000;
	p->next_scan_ms = scan_again_ms(now, cost_us);
	p->rescan = false;
	if (cost_us > rp->slowest_us) {
		rp->slowest_us = cost_us;
		rp->slowest_pid = p->pid;
		rp->slowest_uid = p->uid;
	}
}

/*
 * Whether the user chose pid's process (-p, -L, the launched command's
 * tree): a Python process as soon as it maps an interpreter, before it runs
 * one, as a command stopped before Py_Initialize (realprograms' SIGSTOP) or
 * just exec'd is. Others count once they run one: anyone can map libpython.
 */
static bool chosen(const struct run_python *rp, pid_t pid)
{
	const struct pipeline *pl = rp->pl;

	if (rp->child > 0 && pid == rp->child)
		return true;
	return pl && (pl->tree_root || pl->cfg.nr_pids || pl->cfg.nr_tids) &&
	       pipeline__wants_pid(pl, pid);
}

void run_python__saw_image(void *ctx, const struct addr_space *as, uint32_t status)
{
	struct run_python *rp = ctx;
	struct py_process *p;
	bool fresh;

	/* A process found already costs one lookup a sample: nothing to ask of the run. */
	p = py_registry__find(rp->reg, as);
	fresh = false;
	if (!p)
		p = py_registry__look(rp->reg, as, chosen(rp, as->pid), &fresh);
	if (!p || p->gone)
		return;
	/* A thread the kernel's walk did not know (started since): its list is read at the tick. */
	if ((status & 0xff) == INTERP_NO_THREAD || (status & 0xff) == INTERP_BAD_THREAD) {
		p->rescan = true;
	}
	if (!fresh)
		return;
	rp->changed = true;
	/* Its threads at once: the first samples of the process get their frames. */
	run_python__scan_threads(rp, p, mono_ms());
	if (p->interp.micro >= 0)
		pr_info("python: pid %d runs CPython %d.%d.%d (%s)\n", (int)p->pid,
			p->interp.major, p->interp.minor, p->interp.micro, p->interp_path);
	else
		pr_info("python: pid %d runs CPython %d.%d (%s)\n", (int)p->pid, p->interp.major,
			p->interp.minor, p->interp_path);
}

/* Looks at pid's image as a sample of it would; whether that is done (found, or ended). */
static bool look_at(void *ctx, pid_t pid)
{
	struct run_python *rp = ctx;
	struct addr_space *as;

	if (!rp->pl || !proctrack__knows(rp->pl->procs, pid))
		return false;
	as = proctrack__addr_space(rp->pl->procs, pid);
	if (!as)
		return false;
	run_python__saw_image(rp, as, 0);
	return py_registry__find(rp->reg, as) != NULL || as->end_time;
}

/*
 * The processes found at the start, looked at until deadline; whether all
 * were. A signal ends the looks: the run is stopping.
 */
static bool look_pending(struct run_python *rp, int64_t deadline)
{
	while (rp->next_pending < rp->nr_pending) {
		if (mono_ms() >= deadline || signals__stop_requested())
			return false;
		look_at(rp, rp->pending[rp->next_pending++]);
	}
	free(rp->pending);
	rp->pending = NULL;
	rp->nr_pending = rp->next_pending = 0;
	return true;
}

/*
 * The thread lists due (asked again, or their time come), from where the
 * last tick stopped, until deadline: a crowd of processes, each with
 * thousands of thread states, is read over many ticks, each process in
 * turn, and the tick still ends in time.
 */
static bool scan_due(struct run_python *rp, int64_t now, int64_t deadline)
{
	size_t nr = py_registry__count(rp->reg);

	if (rp->scan_cursor >= nr)
		rp->scan_cursor = 0;
	for (size_t k = 0; k < nr; k++) {
		size_t i = (rp->scan_cursor + k) % nr;
		struct py_process *p = py_registry__get(rp->reg, i);

		if (p->gone || (!p->rescan && now < p->next_scan_ms))
			continue;
		if (mono_ms() >= deadline || signals__stop_requested()) {
			rp->scan_cursor = i;
			return false;
		}
		run_python__scan_threads(rp, p, now);
		rp->changed = true;
	}
	rp->scan_cursor = 0;
	return true;
}

void run_python__tick(struct run_python *rp)
{
	int64_t now = mono_ms(), deadline = now + TICK_BUDGET_MS;
	bool in_time;

	/* A launched command becomes Python at its exec: looked at every tick, not only at samples. */
	if (rp->child > 0)
		look_at(rp, rp->child);
	/* As are the processes that mapped an interpreter's file, for their first seconds. */
	python_watch__sweep(&rp->watch, now, look_at, rp);
	in_time = look_pending(rp, deadline);
	in_time = scan_due(rp, now, deadline) && in_time;
	rp->ticks_over += !in_time;
	if (rp->changed) {
		if (rp->backend && rp->ops && rp->ops->set_interp)
			run_python__tell_backend(rp);
		python_early__publish(rp->early, rp->reg);
		rp->changed = false;
	}
}

void run_python__scan(struct run_python *rp, struct pipeline *pl, pid_t child)
{
	size_t cap = 0;
	struct dirent *d;
	DIR *dir;

	rp->child = child;
	if (!pl->procs)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	/* Bounded by the pid space; a look at a process not named like Python reads no file. */
	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX || !pipeline__wants_pid(pl, (pid_t)pid) ||
		    !proctrack__knows(pl->procs, (pid_t)pid))
			continue;
		if (rp->nr_pending == cap) {
			pid_t *more = realloc(rp->pending, (cap ? 2 * cap : 256) * sizeof(*more));

			if (!more)
				break;
			rp->pending = more;
			cap = cap ? 2 * cap : 256;
		}
		rp->pending[rp->nr_pending++] = (pid_t)pid;
	}
	closedir(dir);
	rp->pl = pl;
	/* The Python processes of an ordinary host are found before the first sample. */
	look_pending(rp, mono_ms() + SCAN_BUDGET_MS);
	run_python__tick(rp);
}
