// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/withheld.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/lib/hashmap.h"

/* One thread's time on a CPU, from its switch records. */
struct thread_on {
	pid_t pid, tid;
	uint64_t in;		/* its latest switch-in while it is on a CPU; 0 while away */
	uint64_t first_out;	/* its first record, when that was a switch-out: on since before */
	uint64_t last;		/* its latest record: older ones (another CPU's ring, late) are skipped */
	uint64_t on_ns;		/* whole intervals on a CPU */
	uint64_t exec, exit;	/* 0: not seen */
	uint64_t samples;	/* user-mode samples the pipeline counted */
	bool switched;		/* a switch record came */
	/*
	 * Its comm at its exit: the tracker forgets an exited thread's a
	 * grace later, and a new thread may take the tid before the end.
	 */
	char comm[TASK_COMM_LEN];
};

struct withheld_time {
	struct pipeline *pipeline;
	uint64_t period_ns;
	uint64_t start;
	struct hashmap threads;	/* tid -> struct thread_on */
	uint64_t ns;
	bool finished;
};

#define TID_KEY(tid) ((void *)(uintptr_t)(uint32_t)(tid))

static uint64_t tid_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool tid_equal(const void *a, const void *b)
{
	return a == b;
}

struct withheld_time *withheld_time__new(struct pipeline *p, uint64_t period_ns)
{
	struct withheld_time *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->pipeline = p;
	w->period_ns = period_ns ? period_ns : 1;
	hashmap__init(&w->threads, tid_hash, tid_equal);
	return w;
}

void withheld_time__free(struct withheld_time *w)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!w)
		return;
	hashmap__for_each(&w->threads, bkt, ent)
		free(ent->value);
	hashmap__clear(&w->threads);
	free(w);
}

void withheld_time__set_start(struct withheld_time *w, uint64_t time)
{
	w->start = time;
}

static struct thread_on *thread_of(struct withheld_time *w, pid_t pid, pid_t tid)
{
	struct thread_on *t = hashmap__find(&w->threads, TID_KEY(tid));

	if (t)
		return t;
	t = calloc(1, sizeof(*t));
	if (!t || hashmap__add(&w->threads, TID_KEY(tid), t)) {
		free(t);
		return NULL;
	}
	t->pid = pid;
	t->tid = tid;
	return t;
}

/*
 * The thread's time on a CPU up to end: its whole intervals, the one it was
 * in when it was first seen (from its exec, else from the start), the one
 * it is in at its exit or at the end.
 */
static uint64_t on_cpu_ns(const struct withheld_time *w, const struct thread_on *t, uint64_t end)
{
	uint64_t on = t->on_ns, from = t->exec ? t->exec : w->start;
	uint64_t to = t->exit ? t->exit : end;

	if (t->first_out && from && from <= t->first_out)
		on += t->first_out - from;
	if (t->in && to >= t->in)
		on += to - t->in;
	/* Samples and no switch at all: on a CPU the whole time. */
	if (!t->switched && t->samples && from && to >= from)
		on += to - from;
	return on;
}

/* The part of the thread's time on a CPU its samples do not cover, as withheld samples. */
static int count_thread(struct withheld_time *w, const struct thread_on *t, uint64_t end)
{
	uint64_t on = on_cpu_ns(w, t, end), sampled = t->samples * w->period_ns, n;
	struct sample s = { 0 };

	if (on <= sampled || !pipeline__wants_thread(w->pipeline, t->pid, t->tid))
		return 0;
	n = (on - sampled + w->period_ns / 2) / w->period_ns;
	if (!n)
		return 0;
	w->ns += n * w->period_ns;
	s.pid = t->pid;
	s.tid = t->tid;
	s.cpu = -1;
	snprintf(s.comm, sizeof(s.comm), "%s",
		 t->comm[0] ? t->comm
			    : proctrack__comm_at(w->pipeline->procs, t->pid, t->tid, t->last));
	/* Both parts withheld: the report's placeholders, not counted as lost. */
	s.kernel_err = -EACCES;
	s.user_err = -EACCES;
	s.kind = WEIGHT_SAMPLES;
	s.weight = n;
	return pipeline__count(w->pipeline, &s);
}

int withheld_time__switch(struct withheld_time *w, pid_t pid, pid_t tid, uint64_t time, bool out)
{
	struct thread_on *t = thread_of(w, pid, tid);
	int err;

	if (!t)
		return -ENOMEM;
	if (t->exit && time > t->exit) {
		/* Its tid again, for a new thread: the old one is complete. */
		err = count_thread(w, t, t->exit);
		*t = (struct thread_on){ .pid = pid, .tid = tid };
		if (err)
			return err;
	}
	if (time < t->last)
		return 0;
	t->last = time;
	if (!out) {
		t->in = time;
	} else if (t->in) {
		t->on_ns += time - t->in;
		t->in = 0;
	} else if (!t->switched) {
		t->first_out = time;
	}
	t->switched = true;
	return 0;
}

int withheld_time__task(struct withheld_time *w, bool exit, pid_t pid, pid_t tid, uint64_t time)
{
	struct thread_on *t = thread_of(w, pid, tid);

	if (!t)
		return -ENOMEM;
	if (exit) {
		t->exit = time;
		snprintf(t->comm, sizeof(t->comm), "%s",
			 proctrack__comm_at(w->pipeline->procs, pid, tid, time));
	} else if (!t->exec)
		t->exec = time;
	return 0;
}

int withheld_time__sample(struct withheld_time *w, pid_t pid, pid_t tid)
{
	struct thread_on *t = thread_of(w, pid, tid);

	if (!t)
		return -ENOMEM;
	t->samples++;
	return 0;
}

int withheld_time__finish(struct withheld_time *w, uint64_t end)
{
	struct hashmap_entry *ent;
	size_t bkt;
	int err = 0;

	if (w->finished)
		return 0;
	w->finished = true;
	hashmap__for_each(&w->threads, bkt, ent) {
		err = count_thread(w, ent->value, end);
		if (err)
			break;
	}
	return err;
}

uint64_t withheld_time__ns(const struct withheld_time *w)
{
	return w ? w->ns : 0;
}
