// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/pywaits.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/pyfilter.h"
#include "backend-perfring/ringset.h"
#include "compat/tracepoint.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"

/*
 * Threads in the kernel's filter at most: its text is bounded by a page
 * ("prev_pid == 4194304 || " is 23 bytes), and the kernel tests each
 * predicate at every switch of the host, so more events of more filters
 * would tax every switch for a crowd of threads that never wait. Which
 * threads when more are known: pyfilter.h. Waits of the others are read
 * at the drain, as before.
 */
#define MAX_FILTER_TIDS 128
/* Threads a choice looks at, at most (past it, the first in the reader's list, by tid). */
#define MAX_CANDIDATES 65536
/* A thread that switched out this recently is one whose waits the filter is for. */
#define BUSY_NS 2000000000ULL
#define FILTER_BYTES 4096
/* Reads held at once, all threads together: past it, waits read at the drain. */
#define MAX_READS 65536
/*
 * The two events fire at the same sched_switch, each taking its own time
 * after its own work (the off-CPU event walks the stacks first): their
 * times differ by microseconds. A thread cannot switch out again sooner.
 */
#define SAME_SWITCH_NS 200000
/* Threads with no reads held whose entries one drain lets go, at most (the rest at the next). */
#define FORGET_BATCH 256
#define RING_PAGES 8
/* put_off: a trial second, the takes that make it busy, and the pause after one. */
#define TRIAL_NS 1000000000LL
#define BUSY_TAKEN 1000
#define BACK_OFF_NS 4000000000LL
/* What no thread matches: sched_switch's prev_pid is never negative. */
#define NO_THREAD_FILTER "prev_pid == -1"

struct pw_read {
	uint64_t time, read_ns;
	uint32_t nr, status;
	struct interp_frame *frames;
};

/* One thread's reads not taken yet, oldest first. */
struct pw_thread {
	struct pw_read *reads;
	size_t head, nr, cap;
};

struct py_waits {
	const struct backend_config *cfg;
	struct ring_set *rs;
	struct perf_event_attr attr;
	bool enabled;
	struct hashmap threads;		/* tid -> struct pw_thread */
	size_t held;			/* reads held, all threads */
	char filter[FILTER_BYTES];	/* the kernel's now */
	pid_t filter_tids[MAX_FILTER_TIDS];	/* its threads, in tid order */
	size_t nr_filter_tids;
	bool refused;			/* the events or a filter: read at the drain */
	struct pipeline *pipeline;
	uint64_t reads, taken, dropped;
	size_t most_tids;		/* most threads known at once */
	int64_t trial_start, off_until;	/* judge's, CLOCK_MONOTONIC ns */
	uint64_t trial_taken, trial_late, put_offs;
	uint64_t missed;		/* switch-outs in the filter that no read matched */
	/*
	 * The reader's threads at the last refresh, by tid, with their latest
	 * switch-out (noted by py_waits__take); listed and pick: its scratch.
	 */
	struct pyfilter_thread *cands, *pick;
	struct interp_tid *listed;
	size_t nr_cands, cap;
	uint64_t latest;		/* the latest switch-out seen (the records' clock) */
	struct pyfilter_left most_left;	/* the choice that left the most threads out */
	uid_t most_left_uid;		/* the owner of its process then, -1 unknown */
	bool told_left;
};

#define TID_KEY(tid) ((void *)(uintptr_t)(uint32_t)(tid))

static uint64_t key_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool key_equal(const void *a, const void *b)
{
	return a == b;
}

static void drop_reads(struct py_waits *w, struct pw_thread *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(t->reads[t->head + i].frames);
	t->head += n;
	t->nr -= n;
	w->held -= n;
	if (!t->nr)
		t->head = 0;
}

static void free_thread(struct pw_thread *t)
{
	if (t)
		free(t->reads);
	free(t);
}

/* A read of the reader thread, at the drain of these events. */
static int on_sample(void *ctx, const struct perf_event_header *hdr)
{
	struct py_waits *w = ctx;
	const struct interp_frame *frames;
	struct decoded_sample ds;
	struct pw_thread *t;
	struct pw_read *r;
	unsigned int nr;
	uint32_t status;
	uint64_t read_ns;

	if (decode__sample(hdr, w->attr.sample_type, 0, &ds)) {
		ring_set__count_bad(w->rs);
		return 0;
	}
	if (!ring_set__sample_interp(w->rs, &frames, &nr, &status, &read_ns))
		return 0;	/* not read by the reader thread: the drain reads it */
	w->reads++;
	if (w->held >= MAX_READS) {
		w->dropped++;
		return 0;
	}
	t = hashmap__find(&w->threads, TID_KEY(ds.id.tid));
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hashmap__add(&w->threads, TID_KEY(ds.id.tid), t)) {
			free(t);
			return -ENOMEM;
		}
	}
	if (t->head + t->nr == t->cap) {
		if (t->head) {
			memmove(t->reads, t->reads + t->head, t->nr * sizeof(*t->reads));
			t->head = 0;
		} else {
			size_t cap = t->cap ? 2 * t->cap : 8;
			struct pw_read *reads = realloc(t->reads, cap * sizeof(*reads));

			if (!reads)
				return -ENOMEM;
			t->reads = reads;
			t->cap = cap;
		}
	}
	r = &t->reads[t->head + t->nr];
	*r = (struct pw_read){ .time = ds.id.time, .read_ns = read_ns, .nr = nr, .status = status };
	if (nr > MAX_INTERP_DEPTH)
		r->nr = nr = MAX_INTERP_DEPTH;
	if (nr) {
		r->frames = malloc(nr * sizeof(*frames));
		if (!r->frames)
			return -ENOMEM;
		memcpy(r->frames, frames, nr * sizeof(*frames));
	}
	t->nr++;
	w->held++;
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct pyfilter_thread *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

static int cmp_listed(const void *a, const void *b)
{
	const struct interp_tid *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* Room for nr candidates (at most MAX_CANDIDATES) in each array. */
static int grow(struct py_waits *w, size_t nr)
{
	size_t cap = nr < MAX_CANDIDATES ? nr : MAX_CANDIDATES;
	struct pyfilter_thread *cands, *pick;
	struct interp_tid *listed;

	if (cap <= w->cap)
		return 0;
	cap = cap < MAX_CANDIDATES / 2 ? 2 * cap : MAX_CANDIDATES;
	cands = realloc(w->cands, cap * sizeof(*cands));
	if (!cands)
		return -ENOMEM;
	w->cands = cands;
	pick = realloc(w->pick, cap * sizeof(*pick));
	if (!pick)
		return -ENOMEM;
	w->pick = pick;
	listed = realloc(w->listed, cap * sizeof(*listed));
	if (!listed)
		return -ENOMEM;
	w->listed = listed;
	w->cap = cap;
	return 0;
}

/*
 * The reader's threads now into w->cands, by tid, each keeping the latest
 * switch-out noted of it (a tid taken by another process starts afresh).
 * *known: how many the reader knows. 0 or -ENOMEM.
 */
static int gather(struct py_waits *w, size_t *known)
{
	const struct interp_reader *ir = w->cfg->interp_reader;
	struct pyfilter_thread *old = w->cands, *now = w->pick;
	size_t nr, k = 0;
	bool sorted = true;
	int err;

	nr = ir->threads(ir->ctx, w->listed, w->cap);
	if (nr > w->cap && w->cap < MAX_CANDIDATES) {
		err = grow(w, nr);
		if (err)
			return err;
		old = w->cands;
		now = w->pick;
		nr = ir->threads(ir->ctx, w->listed, w->cap);
	}
	*known = nr;
	if (nr > w->cap)
		nr = w->cap;
	for (size_t i = 1; i < nr && sorted; i++)
		sorted = cmp_listed(&w->listed[i - 1], &w->listed[i]) <= 0;
	if (!sorted)
		qsort(w->listed, nr, sizeof(*w->listed), cmp_listed);
	for (size_t i = 0; i < nr; i++) {
		struct pyfilter_thread t = { .pid = w->listed[i].pid, .tid = w->listed[i].tid };

		while (k < w->nr_cands && cmp_cand(&old[k], &t) < 0)
			k++;
		if (k < w->nr_cands && !cmp_cand(&old[k], &t))
			t.last = old[k].last;
		now[i] = t;
	}
	w->cands = now;
	w->pick = old;
	w->nr_cands = nr;
	return 0;
}

/* The owner of pid now, (uid_t)-1 when it cannot be told. */
static uid_t owner(pid_t pid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) ? (uid_t)-1 : st.st_uid;
}

/* What a choice left out: said once when it first happens, the most of it at the end. */
static void note_left(struct py_waits *w, size_t known, const struct pyfilter_left *left)
{
	if (!left->threads || left->threads <= w->most_left.threads)
		return;
	w->most_left = *left;
	w->most_left_uid = owner(left->pid);
	if (w->told_left)
		return;
	w->told_left = true;
	pr_info("perf: %zu Python threads known, %d in the kernel's sched_switch filter: those "
		"that switched out in the last %llu s first, then each process's in turn; %zu "
		"left out (%zu of them pid %d's, uid %d), their waits read at the drain\n",
		known, MAX_FILTER_TIDS, BUSY_NS / 1000000000ULL, left->threads,
		left->pid_threads, (int)left->pid, (int)w->most_left_uid);
}

/*
 * "prev_pid == A || ..." for the threads chosen among the reader's now
 * (none: a pid no thread has); the threads in it into tids, their number
 * returned (-ENOMEM).
 */
static ssize_t build_filter(struct py_waits *w, char *buf, size_t len, pid_t *tids)
{
	struct pyfilter_left left;
	size_t nr, known, used = 0;
	int err;

	err = gather(w, &known);
	if (err)
		return err;
	if (known > w->most_tids)
		w->most_tids = known;
	if (w->nr_cands)
		memcpy(w->pick, w->cands, w->nr_cands * sizeof(*w->pick));
	nr = pyfilter__choose(w->pick, w->nr_cands, w->latest, BUSY_NS, tids, MAX_FILTER_TIDS,
			      &left);
	left.threads += known - w->nr_cands;
	note_left(w, known, &left);
	snprintf(buf, len, "%s", NO_THREAD_FILTER);
	for (size_t i = 0; i < nr; i++) {
		int n = snprintf(buf + used, len - used, "%sprev_pid == %d", i ? " || " : "",
				 (int)tids[i]);

		if (n < 0 || (size_t)n >= len - used) {
			/* Cut: none, rather than a filter that says something else. */
			snprintf(buf, len, "%s", NO_THREAD_FILTER);
			return 0;
		}
		used += (size_t)n;
	}
	return (ssize_t)nr;
}

/* Where the events cannot be had, the frames are read at the drain, as before. */
static int give_up(struct py_waits *w, const char *why)
{
	w->refused = true;
	pr_info("perf: off-CPU waits' Python frames are read at the drain, when short waits may "
		"be over: %s\n",
		why);
	return 0;
}

/*
 * The events, at the first Python thread known: each CPU's first event
 * owns its ring and matches no thread; the threads' filter, which changes,
 * is on events added beside it (ring_set__refilter).
 */
static int start_events(struct py_waits *w)
{
	struct perf_event_attr attr = w->attr;
	struct errmsg errm = { 0 };
	pid_t all = -1;
	int err;

	err = ring_set__open(&w->rs, "Python waits", w->pipeline, w->cfg, &attr, &all, 1,
			     RING_PAGES, &errm);
	if (err == -ENOMEM)
		return err;
	if (err)
		return give_up(w, errm.text);
	ring_set__on_sample(w->rs, on_sample, w);
	ring_set__read_interp_at_each_sample(w->rs);
	err = ring_set__set_filter(w->rs, NO_THREAD_FILTER);
	if (!err)
		err = ring_set__enable(w->rs, &errm);
	if (err) {
		ring_set__close(w->rs);
		w->rs = NULL;
		return err == -ENOMEM ? err : give_up(w, errm.text[0] ? errm.text : strerror(-err));
	}
	pr_info("perf: off-CPU waits' Python frames read at their switch-out from now on "
		"(sched_switch filtered to the Python threads, %d at most)\n",
		MAX_FILTER_TIDS);
	return 0;
}

/*
 * A busy second: where most of a second's waits were over before the
 * reader read them (threads handing work to each other in microseconds: a
 * queue's ping-pong, 20,000 switches a second), the reader, woken at each,
 * only slows the program (round trips halved, against a third off with
 * the reads at the drain). Then none for BACK_OFF_NS, and a second's trial
 * again. The second is the records' (CLOCK_MONOTONIC, as mono_ns()): a
 * main thread behind its rings, handling seconds of them in one drain,
 * judges them all the same.
 */
static void judge(struct py_waits *w, uint64_t time, bool late)
{
	w->trial_taken++;
	w->trial_late += late;
	if (!w->trial_start || time < (uint64_t)w->trial_start)
		w->trial_start = (int64_t)time;
	if (time - (uint64_t)w->trial_start < TRIAL_NS)
		return;
	if (w->trial_taken >= BUSY_TAKEN && w->trial_late * 2 > w->trial_taken && !w->off_until) {
		w->off_until = mono_ns() + BACK_OFF_NS;
		w->put_offs++;
	}
	w->trial_start = (int64_t)time;
	w->trial_taken = w->trial_late = 0;
}

/* Whether the reads at the switch are put off now (judge); after the pause, a trial again. */
static bool put_off(struct py_waits *w)
{
	if (!w->off_until)
		return false;
	if (mono_ns() < w->off_until)
		return true;
	w->off_until = 0;
	w->trial_start = 0;
	w->trial_taken = w->trial_late = 0;
	return false;
}

/* The kernel's filter brought up to the threads known now. */
static int refresh(struct py_waits *w)
{
	char filter[FILTER_BYTES];
	pid_t tids[MAX_FILTER_TIDS];
	ssize_t nr = 0;
	int err;

	if (put_off(w))
		snprintf(filter, sizeof(filter), "%s", NO_THREAD_FILTER);
	else
		nr = build_filter(w, filter, sizeof(filter), tids);
	if (nr < 0)
		return (int)nr;
	if (!strcmp(filter, w->filter))
		return 0;
	if (!w->rs) {
		err = start_events(w);
		if (err || !w->rs)
			return err;
	}
	err = ring_set__refilter(w->rs, &w->attr, filter, true);
	if (err == -ENOMEM)
		return err;
	if (err) {
		/* The events keep the filter they had: those threads' waits, at most. */
		w->refused = true;
		pr_warn("perf: the sched_switch filter of Python threads was refused (%s): the "
			"frames of their waits are read at the drain from now on\n",
			strerror(-err));
		return 0;
	}
	memcpy(w->filter, filter, sizeof(filter));
	memcpy(w->filter_tids, tids, (size_t)nr * sizeof(*tids));
	w->nr_filter_tids = (size_t)nr;
	return 0;
}

int py_waits__open(struct py_waits **out, struct pipeline *p, const struct backend_config *cfg)
{
	struct sched_switch_layout layout;
	struct py_waits *w;
	char why[256];
	int id;

	*out = NULL;
	if (!cfg->interp || !cfg->interp_reader || !cfg->interp_reader->threads)
		return 0;
	if (sched_switch__read(&layout, &id, geteuid() == 0, why, sizeof(why)))
		return 0;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->cfg = cfg;
	w->pipeline = p;
	w->most_left_uid = (uid_t)-1;
	hashmap__init(&w->threads, key_hash, key_equal);
	w->attr.size = sizeof(w->attr);
	w->attr.type = PERF_TYPE_TRACEPOINT;
	w->attr.config = (uint64_t)id;
	w->attr.sample_period = 1;
	w->attr.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	w->attr.use_clockid = 1;
	w->attr.clockid = CLOCK_MONOTONIC;
	w->attr.disabled = 1;
	w->attr.wakeup_events = 1;	/* the reader woken at each of their switch-outs */
	snprintf(w->filter, sizeof(w->filter), "%s", NO_THREAD_FILTER);
	*out = w;
	return 0;
}

void py_waits__close(struct py_waits *w)
{
	size_t bkt;
	struct hashmap_entry *ent;

	if (!w)
		return;
	ring_set__close(w->rs);
	hashmap__for_each(&w->threads, bkt, ent) {
		struct pw_thread *t = ent->value;

		drop_reads(w, t, t->nr);
		free_thread(t);
	}
	hashmap__clear(&w->threads);
	if (w->reads)
		pr_info("python: %llu switch-outs of Python threads read at the switch (the kernel's "
			"filter had %zu threads at most), %llu of them taken by the off-CPU waits; "
			"%llu waits of those threads found no read (read at the drain)\n",
			(unsigned long long)w->reads, w->most_tids, (unsigned long long)w->taken,
			(unsigned long long)w->missed);
	if (w->put_offs)
		pr_info("python: the reads at the switch were put off %llu times for %lld s: most "
			"waits of a busy second were over before the reader read them\n",
			(unsigned long long)w->put_offs, BACK_OFF_NS / 1000000000LL);
	if (w->dropped || w->most_tids > MAX_FILTER_TIDS)
		pr_info("python: %llu off-CPU reads let go (%d held at most); %zu Python threads "
			"at most, %d in the kernel's filter\n",
			(unsigned long long)w->dropped, MAX_READS, w->most_tids, MAX_FILTER_TIDS);
	if (w->most_left.threads)
		pr_info("python: threads left out of the kernel's filter: %zu at most, %zu of them "
			"switching out lately; the most of one process: %zu of pid %d (uid %d)\n",
			w->most_left.threads, w->most_left.busy, w->most_left.pid_threads,
			(int)w->most_left.pid, (int)w->most_left_uid);
	free(w->cands);
	free(w->pick);
	free(w->listed);
	free(w);
}

int py_waits__enable(struct py_waits *w, struct errmsg *err)
{
	if (!w)
		return 0;
	w->enabled = true;
	return w->rs ? ring_set__enable(w->rs, err) : 0;
}

void py_waits__disable(struct py_waits *w)
{
	if (!w)
		return;
	w->enabled = false;
	if (w->rs)
		ring_set__disable(w->rs);
}

int py_waits__drain(struct py_waits *w)
{
	int err;

	if (!w)
		return 0;
	if (w->enabled && !w->refused) {
		err = refresh(w);
		if (err)
			return err;
	}
	return w->rs ? ring_set__drain(w->rs) : 0;
}

void py_waits__outcome(struct py_waits *w, uint64_t time, bool late)
{
	judge(w, time, late);
}

/* Whether tid is in the kernel's filter now (its switch-outs are read at the switch). */
static bool filtered(const struct py_waits *w, pid_t tid)
{
	size_t lo = 0, hi = w->nr_filter_tids;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->filter_tids[mid] == tid)
			return true;
		if (w->filter_tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/*
 * A switch-out of a thread in the filter that no read matched: the reader
 * fell behind its wake-ups (ring full, or not given the CPU), and the wait
 * is read at the drain, over by then. put_off counts it as late: where the
 * reads miss most waits they only cost the program.
 */
static bool missed(struct py_waits *w, pid_t tid, uint64_t time)
{
	if (filtered(w, tid)) {
		judge(w, time, true);
		w->missed++;
	}
	return false;
}

/* A switch-out of tid at time: a candidate's makes it busy (pyfilter.h). */
static void note_switch_out(struct py_waits *w, pid_t tid, uint64_t time)
{
	size_t lo = 0, hi = w->nr_cands;

	if (time > w->latest)
		w->latest = time;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (w->cands[mid].tid == tid) {
			if (time > w->cands[mid].last)
				w->cands[mid].last = time;
			return;
		}
		if (w->cands[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
}

bool py_waits__take(struct py_waits *w, pid_t tid, uint64_t time, struct interp_frame *frames,
		    unsigned int *nr, uint32_t *status, uint64_t *read_ns)
{
	struct pw_thread *t = w ? hashmap__find(&w->threads, TID_KEY(tid)) : NULL;
	size_t best = SIZE_MAX, i;
	uint64_t best_d = SAME_SWITCH_NS + 1;
	struct pw_read *r;

	if (w)
		note_switch_out(w, tid, time);
	if (!t)
		return w ? missed(w, tid, time) : false;
	/* The read closest to the switch-out's time, within SAME_SWITCH_NS; older ones go. */
	for (i = 0; i < t->nr; i++) {
		uint64_t rt = t->reads[t->head + i].time;
		uint64_t d = rt > time ? rt - time : time - rt;

		if (rt > time + SAME_SWITCH_NS)
			break;
		if (d <= SAME_SWITCH_NS && d < best_d) {
			best = i;
			best_d = d;
		}
	}
	if (best == SIZE_MAX) {
		/* Those before it, older than the window, can match no later switch-out. */
		drop_reads(w, t, i);
		return missed(w, tid, time);
	}
	r = &t->reads[t->head + best];
	*nr = r->nr;
	*status = r->status;
	*read_ns = r->read_ns;
	if (r->nr)
		memcpy(frames, r->frames, r->nr * sizeof(*frames));
	drop_reads(w, t, best + 1);
	w->taken++;
	return true;
}

void py_waits__forget(struct py_waits *w, uint64_t up_to)
{
	pid_t idle[FORGET_BATCH];
	size_t bkt, nr_idle = 0;
	struct hashmap_entry *ent;

	if (!w || up_to < SAME_SWITCH_NS)
		return;
	hashmap__for_each(&w->threads, bkt, ent) {
		struct pw_thread *t = ent->value;
		size_t n = 0;

		while (n < t->nr && t->reads[t->head + n].time + SAME_SWITCH_NS < up_to)
			n++;
		drop_reads(w, t, n);
		if (!t->nr && nr_idle < FORGET_BATCH)
			idle[nr_idle++] = (pid_t)(uintptr_t)ent->key;
	}
	/*
	 * Threads with nothing held go (those that exited, or wait no more):
	 * a host's short-lived threads would otherwise each keep an entry.
	 */
	for (size_t i = 0; i < nr_idle; i++)
		free_thread(hashmap__remove(&w->threads, TID_KEY(idle[i])));
}

void py_waits__memory(const struct py_waits *w, struct backend_stats *st)
{
	size_t bkt;
	struct hashmap_entry *ent;

	if (!w)
		return;
	ring_set__memory(w->rs, st);
	/* The candidates of the filter's choice, copies of the reader's list. */
	st->copy_bytes += w->cap * (2 * sizeof(*w->cands) + sizeof(*w->listed));
	/* The reads held for a switch-out to take are copies waiting too. */
	st->copy_bytes += hashmap__bytes(&w->threads, sizeof(struct pw_thread));
	hashmap__for_each(&w->threads, bkt, ent) {
		const struct pw_thread *t = ent->value;

		st->copy_bytes += t->cap * sizeof(*t->reads);
		for (size_t i = 0; i < t->nr; i++)
			st->copy_bytes += t->reads[t->head + i].nr * sizeof(struct interp_frame);
	}
}

struct ring_set *py_waits__ring_set(const struct py_waits *w)
{
	return w ? w->rs : NULL;
}
