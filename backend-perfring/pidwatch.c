// SPDX-License-Identifier: GPL-2.0
/*
 * The exits of every task, by task id, for the last
 * RETENTION_NS: long enough that the side-band's drain, which applies
 * them to the process tracker in time order, has applied anything older.
 * A task id holds its last TIMES_PER_TID times (a pid that comes round
 * that often within the retention is answered "taken" for the older
 * ones); past MAX_TIDS ids, the oldest are forgotten early and the span
 * they covered answers "cannot tell", as a lost record's does.
 */
#include "backend-perfring/pidwatch.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/ring.h"
#include "compat/cpus.h"
#include "compat/perf_event.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"

#define RETENTION_NS (10 * 1000000000LL)
#define PRUNE_EVERY_NS 1000000000LL
#define TIMES_PER_TID 4
#define MAX_TIDS 16384
/* 64 KiB a CPU: about 1,300 fork or exit records between two reads. */
#define WATCH_DATA_PAGES 16
#define WATCH_SAMPLE_TYPE (PERF_SAMPLE_TID | PERF_SAMPLE_TIME)

struct tid_times {
	uint64_t times[TIMES_PER_TID];	/* a ring of the newest, unordered */
	unsigned int n, next;
	uint64_t newest;
	uint64_t dropped_max;		/* the newest time pushed out of times[] (0: none) */
};

struct pid_watch {
	int nr;
	int *fds;
	struct perf_ring *rings;
	struct hashmap tids;		/* (void *)tid -> struct tid_times */
	/* A span whose records may be missing: lost by the kernel, or forgotten early. */
	uint64_t unsure_from, unsure_until;
	uint64_t newest;		/* the newest record's time */
	uint64_t last_sync;		/* when the rings were last read empty */
	uint64_t last_prune;
	struct pid_watch_stats st;
};

static uint64_t tid_hash(const void *key)
{
	return hash_u64((uint64_t)(uintptr_t)key);
}

static bool tid_equal(const void *a, const void *b)
{
	return a == b;
}

#define TID_KEY(tid) ((const void *)(uintptr_t)(uint32_t)(tid))

static void unsure(struct pid_watch *w, uint64_t from, uint64_t until)
{
	if (!w->unsure_until || from < w->unsure_from)
		w->unsure_from = from;
	if (until > w->unsure_until)
		w->unsure_until = until;
}

static void note(struct pid_watch *w, uint32_t tid, uint64_t time)
{
	struct tid_times *t = hashmap__find(&w->tids, TID_KEY(tid));

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t || hashmap__add(&w->tids, TID_KEY(tid), t)) {
			free(t);
			unsure(w, time, time);	/* out of memory: this one is not known */
			return;
		}
	}
	if (t->n == TIMES_PER_TID) {
		uint64_t old = t->times[t->next];

		t->dropped_max = old > t->dropped_max ? old : t->dropped_max;
	} else {
		t->n++;
	}
	t->times[t->next] = time;
	t->next = (t->next + 1) % TIMES_PER_TID;
	t->newest = time > t->newest ? time : t->newest;
	w->st.records++;
}

static int on_record(const struct perf_event_header *hdr, void *ctx)
{
	struct pid_watch *w = ctx;
	struct decoded_task task;
	struct sample_id id;
	uint64_t lost;

	if (decode__sample_id(hdr, WATCH_SAMPLE_TYPE, true, &id))
		return 0;
	if (id.time > w->newest)
		w->newest = id.time;
	if (hdr->type == PERF_RECORD_LOST && !decode__lost(hdr, &lost)) {
		/* The records it stands for were written since the rings were last read. */
		w->st.lost += lost;
		unsure(w, w->last_sync, id.time);
		return 0;
	}
	/*
	 * Exits only. A pid changes hands only after its main thread's exit
	 * record; a fork record is written once for each event that asks,
	 * each with its own reading of the clock, so the image's own fork may
	 * come dated a little after the start the tracker gave it.
	 */
	if (hdr->type == PERF_RECORD_EXIT && !decode__task(hdr, &task))
		note(w, task.tid, id.time);
	return 0;
}

/* Forget the ids whose newest time is before cutoff; the span becomes unsure if early. */
static void prune(struct pid_watch *w, uint64_t cutoff, bool early)
{
	struct hashmap_entry *e, *next;
	size_t bkt;

	for (bkt = 0; bkt < w->tids.nr_buckets; bkt++)
		for (e = w->tids.buckets[bkt]; e; e = next) {
			struct tid_times *t = e->value;

			next = e->next;
			if (t->newest >= cutoff)
				continue;
			if (early)
				unsure(w, 0, t->newest);
			hashmap__remove(&w->tids, e->key);
			free(t);
		}
	if (w->unsure_until && w->unsure_until < cutoff && !early)
		w->unsure_from = w->unsure_until = 0;
}

void pid_watch__sync(struct pid_watch *w)
{
	uint64_t now;

	if (!w)
		return;
	now = (uint64_t)mono_ns();
	for (int i = 0; i < w->nr; i++)
		if (ring__consume(&w->rings[i], on_record, w) < 0)
			unsure(w, w->last_sync, now);
	w->last_sync = now;
	if (now - w->last_prune >= PRUNE_EVERY_NS) {
		prune(w, now > RETENTION_NS ? now - RETENTION_NS : 0, false);
		w->last_prune = now;
	}
	if (w->tids.size > MAX_TIDS)
		prune(w, now - PRUNE_EVERY_NS, true);
}

bool pid_watch__handover(void *ctx, pid_t tid, uint64_t after, uint64_t until)
{
	struct pid_watch *w = ctx;
	const struct tid_times *t;
	bool taken = false;

	pid_watch__sync(w);
	w->st.answers++;
	t = hashmap__find(&w->tids, TID_KEY(tid));
	for (unsigned int i = 0; t && i < t->n && !taken; i++)
		taken = t->times[i] > after && t->times[i] <= until;
	if (t && t->dropped_max > after)
		taken = true;
	if (w->unsure_until && w->unsure_from <= until && w->unsure_until > after)
		taken = true;
	w->st.taken += taken;
	return taken;
}

void pid_watch__stats(const struct pid_watch *w, struct pid_watch_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!w)
		return;
	*out = w->st;
	out->tids = w->tids.size;
	out->bytes = hashmap__bytes(&w->tids, sizeof(struct tid_times)) +
		     (size_t)w->nr * (WATCH_DATA_PAGES + 1) * (size_t)sysconf(_SC_PAGESIZE);
}

void pid_watch__close(struct pid_watch *w)
{
	struct hashmap_entry *e;
	size_t bkt;

	if (!w)
		return;
	for (int i = 0; i < w->nr; i++) {
		ring__fini(&w->rings[i]);
		if (w->fds[i] >= 0)
			close(w->fds[i]);
	}
	hashmap__for_each(&w->tids, bkt, e)
		free(e->value);
	hashmap__clear(&w->tids);
	free(w->rings);
	free(w->fds);
	free(w);
}

int pid_watch__open(struct pid_watch **out, struct errmsg *why)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.sample_type = WATCH_SAMPLE_TYPE,
		.task = 1,
		.sample_id_all = 1,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* Read when asked, never woken for. */
		.watermark = 1,
		.wakeup_watermark = 1U << 30,
	};
	struct pid_watch *w = calloc(1, sizeof(*w));
	int *cpus = NULL, nr, err = 0;

	*out = NULL;
	if (!w)
		return -ENOMEM;
	hashmap__init(&w->tids, tid_hash, tid_equal);
	nr = cpus__online(&cpus);
	if (nr <= 0) {
		free(w);
		errmsg__set(why, "the online CPUs could not be read");
		return nr < 0 ? nr : -ENODEV;
	}
	w->fds = malloc(nr * sizeof(*w->fds));
	w->rings = calloc(nr, sizeof(*w->rings));
	if (!w->fds || !w->rings)
		err = -ENOMEM;
	for (int i = 0; !err && i < nr; i++) {
		int fd = perf_event_open_cloexec(&attr, -1, cpus[i], -1, 0);

		if (fd < 0) {
			char reason[256];

			perf_open_error(fd, true, reason, sizeof(reason));
			errmsg__set(why, "a CPU-wide event of task records: %s", reason);
			err = fd;
			break;
		}
		w->fds[w->nr++] = fd;
		err = ring__mmap(&w->rings[i], fd, WATCH_DATA_PAGES);
		if (err)
			errmsg__set(why, "its ring could not be mapped: %s", strerror(-err));
	}
	free(cpus);
	if (err) {
		pid_watch__close(w);
		return err;
	}
	w->last_prune = w->last_sync = (uint64_t)mono_ns();
	*out = w;
	return 0;
}
