// SPDX-License-Identifier: GPL-2.0
#include "core/agg/pipeline.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "core/agg/stack.h"
#include "core/lib/interrupt.h"

/* Threads of a process now, from /proc (a -p process's); at least its main one. */
static int count_threads(pid_t pid)
{
	char path[64];
	struct dirent *de;
	DIR *dir;
	int n = 0;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	dir = opendir(path);
	if (!dir)
		return 1;
	while ((de = readdir(dir)))
		n += de->d_name[0] != '.';
	closedir(dir);
	return n ? n : 1;
}

int pipeline__init(struct pipeline *p, const struct pipeline_config *cfg)
{
	int err = 0;

	memset(p, 0, sizeof(*p));
	p->cfg = *cfg;
	members__init(&p->tree);
	members__init(&p->pids);
	members__init(&p->tids);
	/* Begun before the run, each; their ends come with their exit records. */
	for (int i = 0; i < cfg->nr_pids && !err; i++)
		err = members__begin(&p->pids, cfg->pids[i], 0, count_threads(cfg->pids[i]));
	for (int i = 0; i < cfg->nr_tids && !err; i++)
		err = members__begin(&p->tids, cfg->tids[i], 0, 1);
	p->procs = err ? NULL : proctrack__new();
	if (!p->procs) {
		members__fini(&p->pids);
		members__fini(&p->tids);
		return -ENOMEM;
	}
	agg__init(&p->agg);
	p->window_start = p->window_end = UINT64_MAX;
	return 0;
}

void pipeline__set_window(struct pipeline *p, uint64_t t0, uint64_t t1)
{
	p->window_start = t0;
	p->window_end = t1 < t0 ? t0 : t1;
}

void pipeline__fini(struct pipeline *p)
{
	members__fini(&p->tree);
	members__fini(&p->pids);
	members__fini(&p->tids);
	agg__fini(&p->agg);
	proctrack__free(p->procs);
	p->procs = NULL;
}

void pipeline__set_unwind(struct pipeline *p, pipeline_unwind_fn fn, void *ctx)
{
	p->unwind = fn;
	p->unwind_ctx = ctx;
}

int pipeline__set_tree(struct pipeline *p, pid_t root)
{
	p->tree_root = root;
	/* Held before its exec, one thread: its time is from now. */
	return members__begin(&p->tree, root, 0, 1);
}

/* The member of ms with id, if one is live. */
static struct member *live(const struct members *ms, pid_t id)
{
	struct member *m = members__find(ms, id);

	return m && m->end == MEMBER_LIVE ? m : NULL;
}

int pipeline__note_fork(struct pipeline *p, pid_t pid, pid_t ppid, pid_t tid, uint64_t time)
{
	struct member *m;

	/* A thread of -L's number that is not the member: it exited unseen. */
	if ((m = live(&p->tids, tid)))
		member__end(&p->tids, m, time);
	if (pid == ppid) {
		/* A new thread: one more to exit before the process's number is free. */
		if ((m = live(&p->tree, pid)))
			member__thread_born(&p->tree, m, time);
		if ((m = live(&p->pids, pid)))
			member__thread_born(&p->pids, m, time);
		return 0;
	}
	/* A new process: a member's number is taken, so the member is over (its exit unseen). */
	if ((m = live(&p->pids, pid)))
		member__end(&p->pids, m, time);
	if (!p->tree_root)
		return 0;
	if (live(&p->tree, ppid))
		return members__begin(&p->tree, pid, time, 1);
	if ((m = live(&p->tree, pid)))
		member__end(&p->tree, m, time);
	return 0;
}

void pipeline__note_exit(struct pipeline *p, pid_t pid, pid_t tid, uint64_t time)
{
	struct member *m;

	if ((m = live(&p->tree, pid)))
		member__thread_exited(&p->tree, m, pid == tid, time);
	if ((m = live(&p->pids, pid)))
		member__thread_exited(&p->pids, m, pid == tid, time);
	if ((m = live(&p->tids, tid)))
		member__end(&p->tids, m, time);
}

void pipeline__forget_ended(struct pipeline *p, uint64_t grace)
{
	members__forget_ended(&p->tree, grace);
	members__forget_ended(&p->pids, grace);
	members__forget_ended(&p->tids, grace);
}

uint64_t pipeline__members_ended(const struct pipeline *p)
{
	return p->tree.ended + p->pids.ended + p->tids.ended;
}

bool pipeline__wants_pid(const struct pipeline *p, pid_t pid)
{
	if (p->tree_root && !members__find(&p->tree, pid))
		return false;
	if (p->cfg.nr_pids)
		return members__find(&p->pids, pid) != NULL;
	/* -L: the threads' process is not known up front; keep all. */
	return true;
}

bool pipeline__wants_thread(const struct pipeline *p, pid_t pid, pid_t tid)
{
	const struct pipeline_config *c = &p->cfg;

	/* bcc's idle filter: thread id 0 is the idle task on every CPU. */
	if (tid == 0 && !c->include_idle)
		return false;
	if (c->nr_pids && !members__find(&p->pids, pid))
		return false;
	if (p->tree_root && !members__find(&p->tree, pid))
		return false;
	if (c->nr_tids && !members__find(&p->tids, tid))
		return false;
	if (c->skip_user_threads || c->skip_kernel_threads) {
		bool kthread = tid && proctrack__is_kernel_thread(p->procs, pid);

		if (kthread ? c->skip_kernel_threads : c->skip_user_threads)
			return false;
	}
	return true;
}

/*
 * Whether s was taken in the lifetimes of the members its filters name: a
 * sample of a process that took a member's number after it ended is that
 * process's, not the member's (issue 32). Times as image_of reads them.
 */
static bool in_lifetimes(const struct pipeline *p, const struct sample *s)
{
	uint64_t t0 = s->time, t1 = s->time_end ? s->time_end : s->time;
	const struct member *m;

	if (!t0 && !t1) {
		t0 = p->window_start;
		t1 = p->window_end;
	}
	if (p->tree_root && (!(m = members__find(&p->tree, s->pid)) || !member__covers(m, t0, t1)))
		return false;
	if (p->cfg.nr_pids &&
	    (!(m = members__find(&p->pids, s->pid)) || !member__covers(m, t0, t1)))
		return false;
	return !p->cfg.nr_tids ||
	       ((m = members__find(&p->tids, s->tid)) && member__covers(m, t0, t1));
}

static bool snapshot_wanted(pid_t pid, void *ctx)
{
	/* After Ctrl-C the rest of /proc is skipped: set-up ends within a process's time. */
	return !interrupt__pending() && pipeline__wants_pid(ctx, pid);
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

/* Images of one pid a sample's interval may hold: more are left out (the newest kept). */
#define MAX_IMAGES 8

/* The user addresses of s that pick an image: all of them, or a snapshot's ip. */
static unsigned int user_addrs(const struct sample *s, const uint64_t **ips, uint64_t *one)
{
	if (s->user_snapshot) {
		*one = s->user_snapshot->ip;
		*ips = one;
		return *one != 0;
	}
	*ips = s->user_ips;
	return s->nr_user;
}

/* The mapping of a file (or the vdso) that holds addr in as, or NULL. */
static const struct mapping *file_at(const struct addr_space *as, uint64_t addr)
{
	const struct mapping *m = addr_space__find(as, addr);

	return m && (mapping__is_file(m) || !strcmp(m->path, "[vdso]")) ? m : NULL;
}

/* How many of the addresses lie in files as maps. */
static unsigned int files_mapped(const struct addr_space *as, const uint64_t *ips, unsigned int nr)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr; i++)
		n += ips[i] != STACK_TRUNCATED_IP && file_at(as, stack__lookup_addr(ips[i], i));
	return n;
}

/* Whether a and b name every address alike: the same offset of the same file, or neither a file. */
static bool same_files(const struct addr_space *a, const struct addr_space *b,
		       const uint64_t *ips, unsigned int nr)
{
	for (unsigned int i = 0; i < nr; i++) {
		uint64_t addr = stack__lookup_addr(ips[i], i);
		const struct mapping *x, *y;

		if (ips[i] == STACK_TRUNCATED_IP)
			continue;
		x = file_at(a, addr);
		y = file_at(b, addr);
		if (!x && !y)
			continue;
		if (!x || !y || x->dev != y->dev || x->ino != y->ino ||
		    x->pgoff - x->start != y->pgoff - y->start || strcmp(x->path, y->path))
			return false;
	}
	return true;
}

/*
 * Of several images that may have run in the sample's interval, the one
 * that maps most of its addresses to files: the image a stack was taken in
 * maps every address it executed in a file, the others only by chance (a
 * frame-pointer walk's last words may be no address at all). Where two map
 * as many and would name them differently (the same layout, another file),
 * neither: *ambiguous.
 */
static const struct addr_space *choose_image(struct addr_space **cand, unsigned int n,
					     const uint64_t *ips, unsigned int nr, bool *ambiguous)
{
	unsigned int best = 0, score[MAX_IMAGES];
	const struct addr_space *chosen = NULL;

	for (unsigned int i = 0; i < n; i++) {
		score[i] = files_mapped(cand[i], ips, nr);
		if (score[i] > best)
			best = score[i];
	}
	*ambiguous = false;
	for (unsigned int i = 0; i < n; i++) {
		if (score[i] != best)
			continue;
		if (!chosen)
			chosen = cand[i];	/* the newest of the best */
		else if (best && !same_files(chosen, cand[i], ips, nr))
			*ambiguous = true;
	}
	return *ambiguous ? NULL : chosen;
}

/*
 * The image a user stack belongs to: the one of the sample's process that
 * ran at the sample's time (or, for counts summed in the kernel, in the
 * window they were summed over, told apart by the addresses). Never its
 * comm: any process may take any name. A sample taken inside execve (the
 * old image's code made the call; the new image has nothing mapped yet) is
 * the old image's. *ambiguous when no single image can be chosen.
 */
static const struct addr_space *image_of_sample(struct pipeline *p, const struct sample *s,
						bool *ambiguous, bool *two_processes)
{
	struct addr_space *cand[MAX_IMAGES];
	uint64_t t0 = s->time, t1 = s->time_end ? s->time_end : s->time, one;
	const uint64_t *ips;
	unsigned int nr = user_addrs(s, &ips, &one), n;

	*ambiguous = false;
	*two_processes = false;
	if (!t0 && !t1) {
		t0 = p->window_start;
		t1 = p->window_end;
	}
	n = proctrack__images(p->procs, s->pid, t0, t1, cand, MAX_IMAGES);
	if (!n)
		return NULL;
	/* Newest first: an image that did not begin with an exec of the next began a process. */
	for (unsigned int i = 0; i + 1 < n; i++)
		*two_processes |= !cand[i]->by_exec;
	if (n > 1)
		return choose_image(cand, n, ips, nr, ambiguous);
	if (nr && !cand[0]->nr_maps && cand[0]->older && file_at(cand[0]->older, ips[0]))
		return cand[0]->older;
	return cand[0];
}

static const struct addr_space *image_of(struct pipeline *p, const struct sample *s,
					 bool *ambiguous)
{
	bool two_processes;

	return image_of_sample(p, s, ambiguous, &two_processes);
}

/*
 * Interpreted frames counted in the kernel over an interval in which the
 * pid was more than one process's (one ended, another took the pid): read
 * in one of them, and which cannot be told; the same code objects at the
 * same addresses (a non-PIE interpreter's frozen modules) would be named
 * from the other's memory (issue 46). Dropped, marked, counted. A sample
 * dated exactly has one image, never two processes.
 */
static void drop_interp_of_two_processes(struct pipeline *p, struct sample *s)
{
	s->nr_interp = 0;
	s->interp_frames = NULL;
	s->interp_status = INTERP_FRAMES | INTERP_ENDED;
	p->interp_other_process += s->weight;
}

void pipeline__unwind_now(struct pipeline *p, struct sample *s, uint64_t *buf)
{
	const struct addr_space *as;
	bool ambiguous;

	if (!s->user_snapshot)
		return;
	as = image_of(p, s, &ambiguous);
	p->ambiguous_images += ambiguous;
	s->nr_user = as && p->unwind ? p->unwind(p->unwind_ctx, as, s->user_snapshot, buf,
						 MAX_STACK_DEPTH)
				     : 0;
	p->not_unwound += !p->unwind;
	s->user_ips = buf;
	s->unwound_snapshot = s->user_snapshot;
	s->user_snapshot = NULL;
}

size_t pipeline__test_oom_after;

static void interp_part(struct pipeline *p, struct sample *s, const struct addr_space *as,
			struct interp_frame *buf);

void pipeline__interp_now(struct pipeline *p, struct sample *s, struct interp_frame *buf)
{
	const struct addr_space *as;
	bool ambiguous;

	if (!s->read_interp || s->interp_frames || (!s->user_snapshot && !s->nr_user)) {
		s->unwound_snapshot = NULL;
		return;
	}
	as = image_of(p, s, &ambiguous);
	if (as && !ambiguous)
		interp_part(p, s, as, buf);
	s->read_interp = false;
	s->unwound_snapshot = NULL;
}

void pipeline__set_interp(struct pipeline *p, const struct pipeline_interp *interp)
{
	p->interp = *interp;
}

/* pid's current image, if pid is known already (not one to read /proc for now). */
static struct addr_space *known_image(struct pipeline *p, pid_t pid)
{
	if (!p->procs || !proctrack__knows(p->procs, pid))
		return NULL;
	return proctrack__addr_space(p->procs, pid);
}

void pipeline__interp_unknown_thread(struct pipeline *p, pid_t pid)
{
	struct addr_space *as = p->interp.saw_image ? known_image(p, pid) : NULL;

	if (as)
		p->interp.saw_image(p->interp.ctx, as, INTERP_NO_THREAD);
}

void pipeline__interp_name_now(struct pipeline *p, pid_t pid, const struct interp_frame *frames,
			       unsigned int nr)
{
	struct addr_space *as = p->interp.name_now ? known_image(p, pid) : NULL;

	if (as)
		p->interp.name_now(p->interp.ctx, as, frames, nr);
}

void pipeline__interp_mapped(struct pipeline *p, pid_t pid, const struct mapping *m)
{
	if (p->interp.mapped && m->exec && m->path)
		p->interp.mapped(p->interp.ctx, pid, m->path);
}

/* The interpreter's part of s, its image as known: looked for, read now if s asks. */
static void interp_part(struct pipeline *p, struct sample *s, const struct addr_space *as,
			struct interp_frame *buf)
{
	if (!p->interp.saw_image || !as)
		return;
	p->interp.saw_image(p->interp.ctx, as, s->interp_status);
	if (s->read_interp && !s->interp_frames && p->interp.walk) {
		s->nr_interp = p->interp.walk(p->interp.ctx, as, s, buf, MAX_INTERP_DEPTH,
					      &s->interp_status);
		s->interp_frames = buf;
	}
}

int pipeline__count(struct pipeline *p, struct sample *s)
{
	uint64_t unwound[MAX_STACK_DEPTH];
	struct interp_frame interp[MAX_INTERP_DEPTH];
	const struct addr_space *as = NULL;
	bool two_processes = false, interp_here = false;

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
	if (!in_lifetimes(p, s)) {
		p->filtered++;
		return 0;
	}
	s->nr_kernel = stack__depth(s->kernel_ips, s->nr_kernel);
	if (s->kind == WEIGHT_OFFCPU_NS) {
		unsigned int above = stack__frames_above(s->kernel_ips, s->nr_kernel,
							 p->cfg.sched_start, p->cfg.sched_end);

		s->kernel_ips += above;
		s->nr_kernel -= above;
	}
	if (s->user_snapshot || s->nr_user) {
		bool ambiguous;

		as = image_of_sample(p, s, &ambiguous, &two_processes);
		if (ambiguous) {
			/* Its user frames print [unknown]; a snapshot is not unwound, its ip stays. */
			p->ambiguous_images++;
			if (s->user_snapshot) {
				unwound[0] = s->user_snapshot->ip;
				s->user_ips = unwound;
				s->nr_user = 1;
				s->user_snapshot = NULL;
			}
		} else if (!as) {
			p->dropped_oom++;
			return 0;
		} else if (as->released) {
			p->late_images++;
		} else {
			/* After the unwind below: a walker may want the native frames too. */
			interp_here = true;
		}
	} else if (s->nr_interp && s->interp_frames) {
		/*
		 * Interpreted frames read in the kernel without the native user
		 * stack (its stack map's slot taken by another stack, -EEXIST): they
		 * are named by the process's image all the same. Without it every
		 * frame printed "[python: unreadable]" (kernel matrix, 5.4: a
		 * sleeping thread's 3.2 s).
		 */
		bool ambiguous;

		/* With no native address to tell images apart, the newest of the window's. */
		as = image_of_sample(p, s, &ambiguous, &two_processes);
		if (as && !as->released)
			interp_part(p, s, as, interp);
	}
	if (s->user_snapshot) {
		s->user_ips = unwound;
		s->nr_user = p->unwind ? p->unwind(p->unwind_ctx, as, s->user_snapshot, unwound,
						   MAX_STACK_DEPTH)
				       : 0;
		p->not_unwound += !p->unwind;
	}
	if (interp_here)
		interp_part(p, s, as, interp);
	if (two_processes && s->nr_interp && s->interp_frames)
		drop_interp_of_two_processes(p, s);
	s->nr_user = stack__depth(s->user_ips, s->nr_user);
	s->nr_user = stack__user_depth(as, s->user_ips, s->nr_user);
	if (s->nr_user == MAX_STACK_DEPTH) {
		if (s->user_ips != unwound)
			memcpy(unwound, s->user_ips, MAX_STACK_DEPTH * sizeof(unwound[0]));
		s->user_ips = unwound;
		s->nr_user = stack__collapse_loop(unwound, s->nr_user);
	}
	if (s->interp_status && s->kind == WEIGHT_SAMPLES) {
		p->interp_samples[(s->interp_status & 0xff) <= INTERP_LOST ? s->interp_status & 0xff
									   : INTERP_UNREADABLE] +=
			s->weight;
		if (s->interp_status & (INTERP_TRUNCATED | INTERP_FAULT))
			p->interp_cut += s->weight;
	}
	/* A stack with interpreted frames keeps its image: they are named by it. */
	if (!s->nr_user && !s->nr_interp)
		as = NULL;
	if (pipeline__test_oom_after && agg__size(&p->agg) >= pipeline__test_oom_after) {
		p->dropped_oom++;	/* the test seam: memory "ran out" at this many stacks */
		return 0;
	}
	/* Out of memory: counted, not an error that would stop a backend's drain mid-ring. */
	if (agg__add(&p->agg, s, as, p->cfg.by_thread ? s->tid : 0) == -ENOMEM)
		p->dropped_oom++;
	return 0;
}
