// SPDX-License-Identifier: GPL-2.0
#include "core/core.h"

#include <errno.h>
#include <string.h>

int core__init(struct profile_core *core, const struct profile_opts *opts)
{
	memset(core, 0, sizeof(*core));
	core->opts = opts;
	core->procs = proctrack__new();
	if (!core->procs)
		return -ENOMEM;
	agg__init(&core->agg);
	return 0;
}

void core__fini(struct profile_core *core)
{
	agg__clear(&core->agg);
	proctrack__free(core->procs);
	core->procs = NULL;
}

static bool in_list(const pid_t *ids, int nr, pid_t id)
{
	for (int i = 0; i < nr; i++)
		if (ids[i] == id)
			return true;
	return false;
}

bool core__wants_pid(const struct profile_core *core, pid_t pid)
{
	const struct profile_opts *o = core->opts;

	if (o->nr_pids)
		return in_list(o->pids, o->nr_pids, pid);
	/* -L: the threads' process is not known up front; keep all. */
	return true;
}

bool core__sample_wanted(const struct profile_core *core, pid_t pid, pid_t tid)
{
	const struct profile_opts *o = core->opts;

	/* bcc's idle filter: thread id 0 is the idle task on every CPU. */
	if (tid == 0 && !o->include_idle)
		return false;
	if (o->nr_pids && !in_list(o->pids, o->nr_pids, pid))
		return false;
	if (o->nr_tids && !in_list(o->tids, o->nr_tids, tid))
		return false;
	return true;
}

static bool snapshot_wanted(pid_t pid, void *ctx)
{
	return core__wants_pid(ctx, pid);
}

int core__snapshot_processes(struct profile_core *core)
{
	const struct profile_opts *o = core->opts;

	/* A launched command starts after this, and -L threads' processes are found later. */
	if (o->command || o->nr_tids)
		return 0;
	return proctrack__snapshot(core->procs, snapshot_wanted, core);
}

int core__add_sample(struct profile_core *core, struct sample *s)
{
	if (!core__sample_wanted(core, s->pid, s->tid)) {
		core->filtered += s->weight;
		return 0;
	}
	return core__count_sample(core, s);
}

int core__count_sample(struct profile_core *core, struct sample *s)
{
	const struct profile_opts *o = core->opts;
	const struct addr_space *as = NULL;

	if (o->user_only) {
		s->nr_kernel = 0;
		s->kernel_err = 0;
	}
	if (o->kernel_only) {
		s->nr_user = 0;
		s->user_err = 0;
	}
	if (s->nr_user) {
		as = proctrack__addr_space_for_comm(core->procs, s->pid, s->comm);
		if (!as)
			return -ENOMEM;
	}
	return agg__add(&core->agg, s, as);
}
