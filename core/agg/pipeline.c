// SPDX-License-Identifier: GPL-2.0
#include "core/agg/pipeline.h"

#include <errno.h>
#include <string.h>

#include "core/agg/stack.h"

static uint64_t value_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool value_equal(const void *a, const void *b)
{
	return a == b;
}

int pipeline__init(struct pipeline *p, const struct pipeline_config *cfg)
{
	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	hashmap__init(&p->tree, value_hash, value_equal);
	p->procs = proctrack__new();
	if (!p->procs)
		return -ENOMEM;
	agg__init(&p->agg);
	return 0;
}

void pipeline__fini(struct pipeline *p)
{
	hashmap__clear(&p->tree);
	agg__fini(&p->agg);
	proctrack__free(p->procs);
	p->procs = NULL;
}

void pipeline__set_unwind(struct pipeline *p, pipeline_unwind_fn fn, void *ctx)
{
	p->unwind = fn;
	p->unwind_ctx = ctx;
}

static bool in_list(const pid_t *ids, int nr, pid_t id)
{
	for (int i = 0; i < nr; i++)
		if (ids[i] == id)
			return true;
	return false;
}

int pipeline__set_tree(struct pipeline *p, pid_t root)
{
	p->tree_root = root;
	return hashmap__add(&p->tree, (void *)(uintptr_t)root, (void *)(uintptr_t)root);
}

void pipeline__note_fork(struct pipeline *p, pid_t pid, pid_t ppid)
{
	if (!p->tree_root || pid == ppid || !hashmap__find(&p->tree, (void *)(uintptr_t)ppid) ||
	    hashmap__find(&p->tree, (void *)(uintptr_t)pid))
		return;
	/* Out of memory: its samples are left out, as if it were not the command's. */
	hashmap__add(&p->tree, (void *)(uintptr_t)pid, (void *)(uintptr_t)pid);
}

static bool in_tree(const struct pipeline *p, pid_t pid)
{
	return !p->tree_root || hashmap__find(&p->tree, (void *)(uintptr_t)pid);
}

bool pipeline__wants_pid(const struct pipeline *p, pid_t pid)
{
	if (!in_tree(p, pid))
		return false;
	if (p->cfg.nr_pids)
		return in_list(p->cfg.pids, p->cfg.nr_pids, pid);
	/* -L: the threads' process is not known up front; keep all. */
	return true;
}

bool pipeline__wants_thread(const struct pipeline *p, pid_t pid, pid_t tid)
{
	const struct pipeline_config *c = &p->cfg;

	/* bcc's idle filter: thread id 0 is the idle task on every CPU. */
	if (tid == 0 && !c->include_idle)
		return false;
	if (c->nr_pids && !in_list(c->pids, c->nr_pids, pid))
		return false;
	if (!in_tree(p, pid))
		return false;
	if (c->nr_tids && !in_list(c->tids, c->nr_tids, tid))
		return false;
	if (c->skip_user_threads || c->skip_kernel_threads) {
		bool kthread = tid && proctrack__is_kernel_thread(p->procs, pid);

		if (kthread ? c->skip_kernel_threads : c->skip_user_threads)
			return false;
	}
	return true;
}

static bool snapshot_wanted(pid_t pid, void *ctx)
{
	return pipeline__wants_pid(ctx, pid);
}

int pipeline__snapshot_processes(struct pipeline *p)
{
	/* A launched command starts after this, and -L threads' processes are found later. */
	if (p->cfg.launched || p->cfg.nr_tids)
		return 0;
	return proctrack__snapshot(p->procs, snapshot_wanted, p);
}

int pipeline__add(struct pipeline *p, struct sample *s)
{
	if (!pipeline__wants_thread(p, s->pid, s->tid)) {
		p->filtered++;
		return 0;
	}
	return pipeline__count(p, s);
}

/*
 * The image a user stack belongs to: the process's image that ran under
 * the sample's comm, or, when its leaf lies in none of that image's
 * mappings but in the image before, that one. A sample taken inside execve
 * (the old image's code made the call; the new image, already current for
 * the tracker, has nothing mapped yet) is the old image's.
 */
static const struct addr_space *image_of(struct pipeline *p, const struct sample *s)
{
	const struct addr_space *as = proctrack__addr_space_for_comm(p->procs, s->pid, s->comm);
	uint64_t leaf = s->user_snapshot ? s->user_snapshot->ip : s->nr_user ? s->user_ips[0] : 0;

	if (as && leaf && as->older && !addr_space__find(as, leaf) &&
	    addr_space__find(as->older, leaf))
		return as->older;
	return as;
}

void pipeline__unwind_now(struct pipeline *p, struct sample *s, uint64_t *buf)
{
	const struct addr_space *as;

	if (!s->user_snapshot)
		return;
	as = image_of(p, s);
	s->nr_user = as && p->unwind ? p->unwind(p->unwind_ctx, as, s->user_snapshot, buf,
						 MAX_STACK_DEPTH)
				     : 0;
	p->not_unwound += !p->unwind;
	s->user_ips = buf;
	s->user_snapshot = NULL;
}

int pipeline__count(struct pipeline *p, struct sample *s)
{
	uint64_t unwound[MAX_STACK_DEPTH];
	const struct addr_space *as = NULL;

	if (!p->cfg.kernel_stacks) {
		s->nr_kernel = 0;
		s->kernel_err = 0;
	}
	if (!p->cfg.user_stacks) {
		s->nr_user = 0;
		s->user_err = 0;
		s->user_snapshot = NULL;
	}
	if ((unsigned int)s->kind >= NR_WEIGHT_KINDS)
		return -EINVAL;
	s->nr_kernel = stack__depth(s->kernel_ips, s->nr_kernel);
	if (s->kind == WEIGHT_OFFCPU_NS) {
		unsigned int above = stack__frames_above(s->kernel_ips, s->nr_kernel,
							 p->cfg.sched_start, p->cfg.sched_end);

		s->kernel_ips += above;
		s->nr_kernel -= above;
	}
	if (s->user_snapshot || s->nr_user) {
		as = image_of(p, s);
		if (!as)
			return -ENOMEM;
	}
	if (s->user_snapshot) {
		s->user_ips = unwound;
		s->nr_user = p->unwind ? p->unwind(p->unwind_ctx, as, s->user_snapshot, unwound,
						   MAX_STACK_DEPTH)
				       : 0;
		p->not_unwound += !p->unwind;
	}
	s->nr_user = stack__depth(s->user_ips, s->nr_user);
	s->nr_user = stack__user_depth(as, s->user_ips, s->nr_user);
	if (s->nr_user == MAX_STACK_DEPTH) {
		if (s->user_ips != unwound)
			memcpy(unwound, s->user_ips, MAX_STACK_DEPTH * sizeof(unwound[0]));
		s->user_ips = unwound;
		s->nr_user = stack__collapse_loop(unwound, s->nr_user);
	}
	if (!s->nr_user)
		as = NULL;
	return agg__add(&p->agg, s, as, p->cfg.by_thread ? s->tid : 0);
}
