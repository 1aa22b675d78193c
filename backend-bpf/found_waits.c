// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/found_waits.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpf/python_maps.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"

/* Threads a scan looks at, at most (a host's Python threads beyond it: not read this way). */
#define MAX_SCANNED 4096
/*
 * How long a thread is looked at after the reader first knows it: the walk
 * learns it a little later (its table is filled after the reader's), and a
 * wait begun in between has no frames either (blocked.py's main, from
 * Thread.start's short waits into its Thread.join).
 */
#define NEW_FOR_NS 2000000000LL
/* Start entries looked up a scan, at most (a burst of new threads: the first of them). */
#define LOOKUPS_A_SCAN 256

/* A wait read while it lasted: what its drained sum must match, and its frames. */
struct found_wait {
	uint64_t ts;			/* its switch-out (the start entry's) */
	uint32_t tgid;
	int32_t user_stack_id, kernel_stack_id;
	uint32_t status;
	unsigned int nr;
	struct interp_frame frames[];
};

struct found_waits {
	const struct interp_reader *ir;
	struct pipeline *pipeline;
	int start_fd;
	/*
	 * The reader's threads at the last scan (lists[last]), in tid order,
	 * and when each was first known (CLOCK_MONOTONIC ns); a scan fills
	 * the other list and makes it the last.
	 */
	struct {
		pid_t tid[MAX_SCANNED];
		int64_t since[MAX_SCANNED];
		size_t nr;
	} lists[2];
	unsigned int last;
	struct hashmap waits;		/* tid -> struct found_wait */
	struct interp_frame buf[MAX_INTERP_DEPTH];
	struct found_wait *given;	/* the last one applied: its sample holds its frames */
	uint64_t applied;
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

struct found_waits *found_waits__new(const struct interp_reader *ir, struct pipeline *p,
				     int start_fd)
{
	struct found_waits *fw;

	if (!ir || !ir->tids || !ir->read)
		return NULL;
	fw = calloc(1, sizeof(*fw));
	if (!fw)
		return NULL;
	fw->ir = ir;
	fw->pipeline = p;
	fw->start_fd = start_fd;
	hashmap__init(&fw->waits, key_hash, key_equal);
	return fw;
}

void found_waits__free(struct found_waits *fw)
{
	size_t bkt;
	struct hashmap_entry *ent;

	if (!fw)
		return;
	hashmap__for_each(&fw->waits, bkt, ent)
		free(ent->value);
	hashmap__clear(&fw->waits);
	free(fw->given);
	free(fw);
}

/* When tid was first known, if it was at the last scan; else now. */
static int64_t known_since(const struct found_waits *fw, pid_t tid, int64_t now)
{
	const pid_t *tids = fw->lists[fw->last].tid;
	size_t lo = 0, hi = fw->lists[fw->last].nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (tids[mid] == tid)
			return fw->lists[fw->last].since[mid];
		if (tids[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return now;
}

/* tid, new to the reader: if it waits without frames, they are read now. 0 or -ENOMEM. */
static int read_if_waiting(struct found_waits *fw, pid_t tid)
{
	struct offcpu_start st, again;
	__u32 key = (__u32)tid;
	struct found_wait *w, *old;
	uint32_t status = 0;
	unsigned int nr;

	if (bpf_map_lookup_elem(fw->start_fd, &key, &st) || (st.py_stack & PY_STACK_HASH))
		return 0;	/* running, or its switch-out was walked */
	old = hashmap__find(&fw->waits, TID_KEY(tid));
	if (old && old->ts == st.ts)
		return 0;	/* this wait was read at an earlier scan */
	nr = fw->ir->read(fw->ir->ctx, (pid_t)st.tgid, tid, fw->buf, MAX_INTERP_DEPTH, &status);
	if (!nr || nr > MAX_INTERP_DEPTH)
		return 0;
	/* Switched in (and maybe out) meanwhile: the frames may be those it ran. */
	if (bpf_map_lookup_elem(fw->start_fd, &key, &again) || again.ts != st.ts)
		return 0;
	w = malloc(sizeof(*w) + nr * sizeof(w->frames[0]));
	if (!w)
		return -ENOMEM;
	*w = (struct found_wait){ .ts = st.ts, .tgid = st.tgid, .user_stack_id = st.user_stack_id,
				  .kernel_stack_id = st.kernel_stack_id, .status = status, .nr = nr };
	memcpy(w->frames, fw->buf, nr * sizeof(w->frames[0]));
	/* Named while the process lives: the wait may end only with it. */
	pipeline__interp_name_now(fw->pipeline, (pid_t)st.tgid, w->frames, nr);
	old = hashmap__remove(&fw->waits, TID_KEY(tid));
	free(old);
	if (hashmap__add(&fw->waits, TID_KEY(tid), w)) {
		free(w);
		return -ENOMEM;
	}
	return 0;
}

int found_waits__scan(struct found_waits *fw)
{
	int64_t now_ns = mono_ns();
	unsigned int next;
	pid_t *tids;
	int64_t *since;
	size_t nr, looked = 0;
	int err = 0;

	if (!fw)
		return 0;
	next = !fw->last;
	tids = fw->lists[next].tid;
	since = fw->lists[next].since;
	nr = fw->ir->tids(fw->ir->ctx, tids, MAX_SCANNED);
	if (nr > MAX_SCANNED)
		nr = MAX_SCANNED;
	for (size_t i = 0; i < nr; i++) {
		since[i] = known_since(fw, tids[i], now_ns);
		if (!err && now_ns - since[i] < NEW_FOR_NS && looked++ < LOOKUPS_A_SCAN)
			err = read_if_waiting(fw, tids[i]);
	}
	fw->lists[next].nr = nr;
	fw->last = next;
	return err;
}

void found_waits__apply(struct found_waits *fw, const struct offcpu_key *k, struct sample *s)
{
	struct found_wait *w;

	if (!fw || (k->py_stack & PY_STACK_HASH))
		return;
	w = hashmap__find(&fw->waits, TID_KEY(k->tid));
	if (!w || w->tgid != k->tgid || w->user_stack_id != k->user_stack_id ||
	    w->kernel_stack_id != k->kernel_stack_id)
		return;
	s->interp_frames = w->frames;
	s->nr_interp = w->nr;
	s->interp_status = w->status;
	s->read_interp = false;
	fw->applied++;
	/* Its sample is added before the next apply: its frames are freed then. */
	hashmap__remove(&fw->waits, TID_KEY(k->tid));
	free(fw->given);
	fw->given = w;
}

uint64_t found_waits__applied(const struct found_waits *fw)
{
	return fw ? fw->applied : 0;
}
