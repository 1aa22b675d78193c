// SPDX-License-Identifier: GPL-2.0
/*
 * Process lifetimes as the side-band records tell them: each exec or fork
 * begins an image of a pid, each exit may end one; mmaps add to the
 * current image; a sample finds the images of its pid that ran at its
 * time. What learns of new processes (interpreters, say) hooks in here.
 */
#include "core/proc/proctrack_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/clock.h"

static struct addr_space *new_space(struct proctrack *pt, pid_t pid)
{
	struct addr_space *as = calloc(1, sizeof(*as));

	if (!as)
		return NULL;
	as->files = &pt->files;
	as->pid = pid;
	as->uid = (uid_t)-1;
	as->id = pt->next_id++;
	as->next_all = pt->all;
	if (pt->all)
		pt->all->prev_all = as;
	pt->all = as;
	return as;
}

struct proc *proctrack__find_proc(struct proctrack *pt, pid_t pid)
{
	return hashmap__find(&pt->procs, &pid);
}

static struct proc *add_proc(struct proctrack *pt, pid_t pid, struct addr_space *as)
{
	struct proc *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->pid = pid;
	p->as = as;
	if (hashmap__add(&pt->procs, &p->pid, p)) {
		free(p);
		return NULL;
	}
	return p;
}

bool proctrack__knows(struct proctrack *pt, pid_t pid)
{
	return proctrack__find_proc(pt, pid) != NULL;
}

struct addr_space *proctrack__addr_space(struct proctrack *pt, pid_t pid)
{
	struct proc *p = proctrack__find_proc(pt, pid);
	struct addr_space *as;
	char path[64];
	int64_t began;

	if (p)
		return p->as;
	as = new_space(pt, pid);
	if (!as)
		return NULL;
	/*
	 * Found running now: it began after any process of its pid the tracker
	 * forgot, whose late samples stay late (0 at first: covers all time).
	 */
	as->start_time = pt->forgot_until;
	/* pid 0 (idle) has no user space; a vanished process has none left. */
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		addr_space__load_maps_file(as, path);
		/*
		 * The main thread's comm kept now, dated: read at a later drain it
		 * may be of a process that took the pid since (issue 32).
		 */
		if (procfs__read_comm(pid, pid, as->comm, sizeof(as->comm), &began))
			proctrack__keep_read_comm(pt, pid, as->comm, began);
		as->uid = procfs__read_uid(pid);
		for (size_t i = 0; i < as->nr_maps; i++)
			proctrack__open_binary(pt, as, &as->maps[i], NULL);
	}
	p = add_proc(pt, pid, as);
	return p ? p->as : NULL;
}

/*
 * pid's image to add mappings to: its current one, or, if that one was
 * released (its process ended long ago), a new one from the newest record
 * on: another process took the pid, and its fork record was lost.
 */
static struct addr_space *live_space(struct proctrack *pt, pid_t pid)
{
	struct addr_space *as = proctrack__addr_space(pt, pid);

	if (as && as->released) {
		proctrack__read_image_start(pt, pid, pt->newest_time);
		as = proctrack__addr_space(pt, pid);
		if (as && as->released)
			return NULL;
	}
	return as;
}

void proctrack__set_record_time(struct proctrack *pt, int64_t wall_ns)
{
	pt->record_wall_ns = wall_ns;
}

int proctrack__mmap(struct proctrack *pt, pid_t pid, const struct mapping *m)
{
	return proctrack__mmap_build_id(pt, pid, m, NULL);
}

int proctrack__mmap_build_id(struct proctrack *pt, pid_t pid, const struct mapping *m,
			     const struct build_id *bid)
{
	struct mapping mine = *m;
	struct addr_space *as;

	if (!m->exec)
		return 0;
	as = live_space(pt, pid);
	if (!as)
		return -ENOMEM;
	proctrack__open_binary(pt, as, &mine, bid && bid->size ? bid : NULL);
	return addr_space__insert(as, &mine);
}

/* The clock settling goes by: the newest exec, fork or exit applied. */
static void note_time(struct proctrack *pt, uint64_t time)
{
	if (time > pt->newest_time)
		pt->newest_time = time;
}

/* Append as to a growing list of images; 0 or -ENOMEM. */
int image_list__push(struct addr_space ***list, size_t *nr, size_t *cap, struct addr_space *as)
{
	if (*nr == *cap) {
		size_t ncap = *cap ? 2 * *cap : 256;
		struct addr_space **l = realloc(*list, ncap * sizeof(*l));

		if (!l)
			return -ENOMEM;
		*list = l;
		*cap = ncap;
	}
	(*list)[(*nr)++] = as;
	return 0;
}

/*
 * as ended at time (side-band clock): listed once for settling. Without a
 * time nothing can be dated against it, and it keeps its mappings.
 */
static int image_ended(struct proctrack *pt, struct addr_space *as, uint64_t time)
{
	if (!time || as->released)
		return 0;
	if (as->end_time) {
		as->end_time = time > as->end_time ? time : as->end_time;
		return 0;	/* listed already */
	}
	as->end_time = time;
	return image_list__push(&pt->ended, &pt->nr_ended, &pt->cap_ended, as);
}

int proctrack__exec(struct proctrack *pt, pid_t pid, const char *comm, uint64_t time)
{
	struct proc *p = proctrack__find_proc(pt, pid);
	struct addr_space *as = new_space(pt, pid);

	note_time(pt, time);
	if (!as)
		return -ENOMEM;
	snprintf(as->comm, sizeof(as->comm), "%s", comm ? comm : "");
	as->start_time = time;
	as->start_wall_ns = pt->record_wall_ns ? pt->record_wall_ns : wall_ns();
	/* A set-user-ID program changes it: read it now, while the process runs. */
	as->uid = procfs__read_uid(pid);
	if (p) {
		as->older = p->as;
		as->by_exec = true;
		p->as = as;
		return image_ended(pt, as->older, time);
	}
	return add_proc(pt, pid, as) ? 0 : -ENOMEM;
}

/*
 * The image of a sample of pid dated t1, before every image the tracker
 * has for it: a process it forgot may have run then (late: [unknown] user
 * frames, not another process's names), else the pid's current one.
 */
static struct addr_space *before_known(struct proctrack *pt, pid_t pid, uint64_t t1)
{
	struct addr_space *gone = t1 && t1 < pt->forgot_until ? proctrack__gone_space(pt) : NULL;

	return gone ? gone : proctrack__addr_space(pt, pid);
}

unsigned int proctrack__images(struct proctrack *pt, pid_t pid, uint64_t t0, uint64_t t1,
			       struct addr_space **out, unsigned int max)
{
	/* An unknown pid is read from /proc only if no forgotten process may have run then. */
	struct proc *p = proctrack__find_proc(pt, pid);
	struct addr_space *as = p ? p->as : NULL;
	uint64_t end = UINT64_MAX;	/* of the image before, newest first */
	unsigned int n = 0;

	if (!max)
		return 0;
	/* Bounded by the images the records made: one per exec or fork of pid. */
	for (; as && n < max; end = as->start_time, as = as->older) {
		if (as->start_time > t1)
			continue;	/* began after the interval */
		if (end < t0)
			break;		/* ended before it, as did all older ones */
		out[n++] = as;
		if (as->start_time <= t0)
			break;		/* it covers the interval's start: older ones ran before */
	}
	if (!n)
		out[n++] = before_known(pt, pid, t1);
	return out[0] ? n : 0;
}

/* A new image of pid from time on, named as /proc names the process now. */
int proctrack__read_image_start(struct proctrack *pt, pid_t pid, uint64_t time)
{
	char comm[TASK_COMM_LEN] = "";
	int64_t began;

	procfs__read_comm(pid, pid, comm, sizeof(comm), &began);
	return proctrack__exec(pt, pid, comm, time);
}

int proctrack__fork(struct proctrack *pt, pid_t pid, pid_t ppid, uint64_t time)
{
	struct addr_space *parent = proctrack__addr_space(pt, ppid);
	struct addr_space *as;
	struct proc *p;

	note_time(pt, time);
	if (!parent)
		return -ENOMEM;
	as = new_space(pt, pid);
	if (!as)
		return -ENOMEM;
	memcpy(as->comm, parent->comm, sizeof(as->comm));
	as->start_time = time;
	as->start_wall_ns = pt->record_wall_ns ? pt->record_wall_ns : wall_ns();
	as->uid = parent->uid;
	if (parent->nr_maps) {
		/* Shared until either side maps or unmaps something: a fork costs no copy. */
		if (!parent->maps_refs) {
			parent->maps_refs = malloc(sizeof(*parent->maps_refs));
			if (!parent->maps_refs)
				return -ENOMEM;
			*parent->maps_refs = 1;
		}
		++*parent->maps_refs;
		as->maps_refs = parent->maps_refs;
		as->maps = parent->maps;
		as->nr_maps = parent->nr_maps;
		as->cap_maps = parent->cap_maps;
	}
	p = proctrack__find_proc(pt, pid);
	if (p) {
		/* pid reuse within one profile */
		as->older = p->as;
		p->as = as;
		return image_ended(pt, as->older, time);
	}
	return add_proc(pt, pid, as) ? 0 : -ENOMEM;
}

int proctrack__exit(struct proctrack *pt, pid_t pid, pid_t tid, uint64_t time)
{
	struct proc *p = proctrack__find_proc(pt, pid);
	struct retiree r = { .time = time ? time : pt->newest_time, .comm_seq = pt->comm_seq,
			     .pid = pid, .tid = tid };

	note_time(pt, time);
	/* Its comm (and the main thread's: its process's kind) go a grace later. */
	if (tid > 0)
		retire_queue__push(&pt->retiring, &r);
	if (!p || p->as->released)
		return 0;	/* never sampled nor mapped, or let go already: nothing to let go */
	if (pid == tid)
		p->as->leader_exited = true;
	/* Until then a thread's exit is not the end: the leader's marks it, the last one's dates it. */
	if (!p->as->leader_exited)
		return 0;
	return image_ended(pt, p->as, time);
}

/* The image pids whose own was freed point at (made once); NULL when out of memory. */
struct addr_space *proctrack__gone_space(struct proctrack *pt)
{
	if (!pt->gone) {
		pt->gone = new_space(pt, 0);
		if (pt->gone)
			pt->gone->settled = pt->gone->released = true;
	}
	return pt->gone;
}
