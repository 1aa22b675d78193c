// SPDX-License-Identifier: GPL-2.0
/*
 * The end of ended images: settled once no sample of them can still come,
 * their mappings released, then freed; the comms, kinds and pid entries
 * of ended threads and processes forgotten a grace later (retire.c).
 */
#include "core/proc/proctrack_internal.h"

#include <stdint.h>
#include <stdlib.h>

/* Whether pid's current image is as and /proc still shows the process (threads left). */
static bool still_running(struct proctrack *pt, const struct addr_space *as)
{
	struct proc *p = proctrack__find_proc(pt, as->pid);
	struct proc_status st;

	if (!p || p->as != as)
		return false;	/* a later image began: this one is over */
	/*
	 * Not a zombie waiting for its parent, nor a thread of another
	 * process that took the number (/proc/TID resolves too).
	 */
	procfs__read_status(as->pid, &st);
	return st.tgid == as->pid && st.state != 'Z' && st.state != 'X';
}

/* A thread that exited a grace ago: its comm, and its process's kind if it was the main one. */
static void retire_thread(struct proctrack *pt, const struct retiree *r)
{
	struct thread_comm *tc = proctrack__find_comm(pt, r->tid);

	/* One set since the exit is a new thread's that took the tid. */
	if (tc && tc->seq <= r->comm_seq) {
		hashmap__remove(&pt->comms, &r->tid);
		free(tc);
		pt->counts.forgotten_threads++;
	}
	/* Read again if the pid runs anything later. */
	if (r->tid == r->pid)
		hashmap__remove(&pt->kinds, (void *)(uintptr_t)r->pid);
}

/* A pid whose image was freed a grace ago: its entry, unless a new image began since. */
static void retire_pid(struct proctrack *pt, const struct retiree *r)
{
	struct proc *p = proctrack__find_proc(pt, r->pid);

	if (p && p->as != pt->gone)
		return;
	/* Gone already (the pid ended twice within the grace): the later one's time counts too. */
	if (r->time > pt->forgot_until)
		pt->forgot_until = r->time;
	if (!p)
		return;
	hashmap__remove(&pt->procs, &r->pid);
	free(p);
	pt->counts.forgotten_pids++;
}

size_t proctrack__settle(struct proctrack *pt, uint64_t grace_ns)
{
	struct retiree r;
	size_t n = 0;

	if (pt->newest_time <= grace_ns)
		return 0;
	/* Bounded by the exits and freed images queued. */
	while (retire_queue__pop_before(&pt->retiring, pt->newest_time - grace_ns, &r)) {
		if (r.tid)
			retire_thread(pt, &r);
		else
			retire_pid(pt, &r);
	}
	for (size_t i = 0; i < pt->nr_ended; i++) {
		struct addr_space *as = pt->ended[i];

		if (as->settled || as->end_time >= pt->newest_time - grace_ns)
			continue;
		if (as->leader_exited && still_running(pt, as)) {
			/* Its other threads run on: it ends again with the last one's exit. */
			as->end_time = pt->newest_time;
			continue;
		}
		as->settled = true;
		n++;
	}
	return n;
}

size_t proctrack__release_settled(struct proctrack *pt)
{
	size_t kept = 0, n = 0;

	for (size_t i = 0; i < pt->nr_ended; i++) {
		struct addr_space *as = pt->ended[i];

		if (!as->settled) {
			pt->ended[kept++] = as;
			continue;
		}
		addr_space__release_maps(as);
		as->generation++;
		as->released = true;
		n++;
		/* Out of memory, it is only not freed before the tracker is. */
		image_list__push(&pt->released, &pt->nr_released, &pt->cap_released, as);
	}
	pt->nr_ended = kept;
	return n;
}

/* Take as out of its pid's chain of images; false if it cannot be (out of memory). */
static bool unlink_image(struct proctrack *pt, struct addr_space *as)
{
	struct proc *p = proctrack__find_proc(pt, as->pid);
	struct addr_space *newer;

	if (!p)
		return true;
	if (p->as == as) {
		struct addr_space *gone = proctrack__gone_space(pt);
		struct retiree r = { .time = pt->newest_time, .pid = as->pid };

		if (!gone)
			return false;
		p->as = gone;
		/* The pid's entry goes a grace later, unless another process takes it first. */
		retire_queue__push(&pt->retiring, &r);
		return true;
	}
	/* Bounded by the images the records made for this pid. */
	for (newer = p->as; newer && newer->older != as; newer = newer->older)
		;
	if (newer) {
		/*
		 * What ran before the newer image is over: a sample dated then
		 * is late, not the older images' (stretched over as's time) nor
		 * the current one's (if none were left).
		 */
		struct addr_space *gone = proctrack__gone_space(pt);

		if (!gone)
			return false;
		newer->older = gone;
	}
	return true;
}

size_t proctrack__free_released(struct proctrack *pt,
				void (*forget)(void *ctx, const struct addr_space *as), void *ctx)
{
	size_t n = 0, kept = 0;

	for (size_t i = 0; i < pt->nr_released; i++) {
		struct addr_space *as = pt->released[i];

		if (!unlink_image(pt, as)) {
			pt->released[kept++] = as;
			continue;
		}
		if (forget)
			forget(ctx, as);
		if (as->prev_all)
			as->prev_all->next_all = as->next_all;
		else
			pt->all = as->next_all;
		if (as->next_all)
			as->next_all->prev_all = as->prev_all;
		addr_space__free(as);
		n++;
	}
	pt->nr_released = kept;
	return n;
}
