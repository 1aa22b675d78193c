// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/nsids.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "backend-bpf/interruptible.h"
#include "backend-bpf/shared_maps.h"
#include "bpf/nsids_maps.h"
#include "bpf/profile.skel.h"
#include "bpf/profile_nsids.skel.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"

bool bpf_nsids__test_force;

/* Records are 32 bytes: a page holds 128. */
#define RECORD_PAGES 16
/* Names not renewed for this long are forgotten, here and in the kernel's map. */
#define FORGET_NS (10 * 1000000000ULL)

struct name {
	__u32 host;			/* tgid, or tid by_tid, in the initial namespace */
	__u32 tgid, tid;		/* in this process's namespace; 0 outside it */
	uint64_t seen_ns;		/* CLOCK_MONOTONIC of its last record */
	bool doomed;			/* old at the last pass of forget_old */
};

struct nsid_names {
	struct perf_buffer *pb;
	int nsids_fd;
	struct hashmap names;		/* host id -> struct name */
	bool by_tid;
	uint64_t unnamed;		/* weight of tasks without a record */
	uint64_t forgot_at;
	nsid_keep_fn keep;		/* names in use however old (nsid_names__set_keep) */
	void *keep_ctx;
};

struct bpf_nsids {
	struct profile_nsids_bpf *skel;
	struct nsid_names *names;
};

static uint64_t hash_host(const void *key)
{
	return hash_u64(*(const __u32 *)key);
}

static bool equal_host(const void *a, const void *b)
{
	return *(const __u32 *)a == *(const __u32 *)b;
}

static struct profile_nsids_bpf *load(struct profile_bpf *counting, unsigned int entries)
{
	struct profile_nsids_bpf *skel = profile_nsids_bpf__open();
	int err;

	if (!skel)
		return NULL;
	bpf_map__set_max_entries(skel->maps.nsids, entries);
	/* Settings, filter, stacks, statistics and counts: the counting program's. */
	err = shared_maps__reuse(skel->obj, counting->obj);
	if (!err)
		err = bpf_interruptible__load(skel->skeleton);
	if (err) {
		profile_nsids_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

int bpf_nsids__probe(struct profile_bpf *counting)
{
	struct profile_nsids_bpf *skel = load(counting, 1);

	if (!skel)
		return -errno;
	profile_nsids_bpf__destroy(skel);
	return 0;
}

/* Outside the namespace: the program stops counting it (until it names the id again). */
static void mark_outside(struct nsid_names *n, __u32 host)
{
	struct nsid_entry e;

	if (!bpf_map_lookup_elem(n->nsids_fd, &host, &e)) {
		e.outside = 1;
		bpf_map_update_elem(n->nsids_fd, &host, &e, BPF_EXIST);
	}
}

static int add_name(struct nsid_names *n, const struct nsid_record *rec, __u32 tgid, __u32 tid)
{
	__u32 host = n->by_tid ? rec->tid : rec->tgid;
	struct name *nm = hashmap__find(&n->names, &host);

	if (!nm) {
		nm = calloc(1, sizeof(*nm));
		if (!nm)
			return -ENOMEM;
		nm->host = host;
		if (hashmap__add(&n->names, &nm->host, nm)) {
			free(nm);
			return -ENOMEM;
		}
	}
	nm->tgid = tgid;
	nm->tid = tid;
	nm->seen_ns = (uint64_t)mono_ns();
	nm->doomed = false;
	if (!tgid)
		mark_outside(n, host);
	return 0;
}

/*
 * Whether a record's ids (this namespace's) are those of a task the kernel
 * has already unhashed: a thread at its last switch-out, or sampled on its
 * way out. The kernel writes -1 for what it cannot find then, or 0 where it
 * does not mark them (seen: -1 for both on 4.19, -1 for the tid and the
 * live leader's tgid on 6.18). Taken as the task's name, they would rename
 * what was counted of it (of its whole process, by process) to ids no task
 * has, and the pipeline would drop it unsaid. Both 0 is a task outside the
 * namespace.
 */
static bool leaving(__u32 tgid, __u32 tid)
{
	if (!tgid && !tid)
		return false;
	return !tgid || !tid || tgid == UINT32_MAX || tid == UINT32_MAX;
}

/*
 * A sample record of the bpf-output event: pid and tid (PERF_SAMPLE_TID, in
 * this namespace), then the raw data's u32 size and the data.
 */
static enum bpf_perf_event_ret on_event(void *ctx, int cpu, struct perf_event_header *hdr)
{
	struct nsid_names *n = ctx;
	const char *body = (const char *)(hdr + 1);
	struct nsid_record rec;
	__u32 ids[2], size;

	(void)cpu;
	/* Lost records are sent again within NSID_RENAME_NS; samples meanwhile are unnamed. */
	if (hdr->type != PERF_RECORD_SAMPLE || hdr->size < sizeof(*hdr) + 12 + sizeof(rec))
		return LIBBPF_PERF_EVENT_CONT;
	memcpy(ids, body, sizeof(ids));
	memcpy(&size, body + 8, sizeof(size));
	if (size < sizeof(rec))
		return LIBBPF_PERF_EVENT_CONT;
	memcpy(&rec, body + 12, sizeof(rec));
	if (leaving(ids[0], ids[1]))
		return LIBBPF_PERF_EVENT_CONT;
	return add_name(n, &rec, ids[0], ids[1]) ? LIBBPF_PERF_EVENT_ERROR
						  : LIBBPF_PERF_EVENT_CONT;
}

struct nsid_names *nsid_names__new(int records_fd, int nsids_fd, bool by_tid)
{
	struct nsid_names *n = calloc(1, sizeof(*n));
	struct perf_event_attr attr;

	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	n->nsids_fd = nsids_fd;
	n->by_tid = by_tid;
	hashmap__init(&n->names, hash_host, equal_host);
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_BPF_OUTPUT;
	/* The kernel writes the task's ids as this process's pid namespace sees them. */
	attr.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TID;
	attr.sample_period = 1;
	attr.wakeup_events = 1;
	n->pb = perf_buffer__new_raw(records_fd, RECORD_PAGES, &attr, on_event, n, NULL);
	if (!n->pb) {
		int err = errno;

		nsid_names__free(n);
		errno = err;
		return NULL;
	}
	n->forgot_at = (uint64_t)mono_ns();
	return n;
}

void nsid_names__set_keep(struct nsid_names *n, nsid_keep_fn keep, void *ctx)
{
	n->keep = keep;
	n->keep_ctx = ctx;
}

/*
 * Names not renewed for FORGET_NS: tasks gone, or not sampled for long.
 * A name is forgotten at the second pass in a row that finds it old and
 * not kept: counts taken before the first pass (an off-CPU interval that
 * ended just before it, its thread no longer kept) are drained meanwhile,
 * and a task that runs again after the first sends a record, which makes
 * its name new. The kernel's entries go with the names, or when they have
 * none (their record was lost): the task is named again at its next event.
 */
static void forget_old(struct nsid_names *n, uint64_t now)
{
	int fd = n->nsids_fd;
	__u32 key = UINT32_MAX, next;	/* no task has this id: the walk starts at the first */
	struct hashmap_entry *ent;
	size_t bkt, nr = 0, cap = 0;
	__u32 *old = NULL;

	hashmap__for_each(&n->names, bkt, ent) {
		struct name *nm = ent->value;

		if (nm->seen_ns + FORGET_NS >= now || (n->keep && n->keep(n->keep_ctx, nm->host))) {
			nm->doomed = false;
			continue;
		}
		if (!nm->doomed) {
			nm->doomed = true;
			continue;
		}
		if (nr == cap) {
			__u32 *more = realloc(old, (cap = cap ? cap * 2 : 64) * sizeof(*old));

			if (!more)
				break;	/* forgotten next time */
			old = more;
		}
		old[nr++] = nm->host;
	}
	for (size_t i = 0; i < nr; i++)
		free(hashmap__remove(&n->names, &old[i]));
	free(old);
	while (!bpf_map_get_next_key(fd, &key, &next)) {
		struct nsid_entry e;

		key = next;
		if (!bpf_map_lookup_elem(fd, &key, &e) && e.named + FORGET_NS < now &&
		    !hashmap__find(&n->names, &key))
			bpf_map_delete_elem(fd, &key);
	}
}

int nsid_names__consume(struct nsid_names *n)
{
	int err = perf_buffer__consume(n->pb);
	uint64_t now = (uint64_t)mono_ns();

	if (err < 0)
		return err;
	if (now - n->forgot_at >= FORGET_NS / 2) {
		forget_old(n, now);
		n->forgot_at = now;
	}
	return 0;
}

int nsid_names__rename(struct nsid_names *n, __u32 *tgid, __u32 *tid, uint64_t weight)
{
	__u32 host = n->by_tid ? *tid : *tgid;
	const struct name *nm = hashmap__find(&n->names, &host);

	if (!nm) {
		n->unnamed += weight;
		return -ENOENT;
	}
	if (!nm->tgid)
		return 0;
	*tgid = nm->tgid;
	if (n->by_tid)
		*tid = nm->tid;
	return 1;
}

uint64_t nsid_names__unnamed(const struct nsid_names *n)
{
	return n->unnamed;
}

void nsid_names__free(struct nsid_names *n)
{
	struct hashmap_entry *ent;
	size_t bkt;

	if (!n)
		return;
	perf_buffer__free(n->pb);
	hashmap__for_each(&n->names, bkt, ent)
		free(ent->value);
	hashmap__clear(&n->names);
	free(n);
}

struct bpf_nsids *bpf_nsids__open(struct profile_bpf *counting, bool by_tid)
{
	struct bpf_nsids *n = calloc(1, sizeof(*n));
	int err;

	if (!n) {
		errno = ENOMEM;
		return NULL;
	}
	n->skel = load(counting, NSIDS_ENTRIES);
	if (n->skel)
		n->names = nsid_names__new(bpf_map__fd(n->skel->maps.nsid_records),
					   bpf_map__fd(n->skel->maps.nsids), by_tid);
	if (!n->names) {
		err = errno;
		bpf_nsids__close(n);
		errno = err;
		return NULL;
	}
	return n;
}

int bpf_nsids__prog_fd(const struct bpf_nsids *n)
{
	return bpf_program__fd(n->skel->progs.profile_sample_nsids);
}

struct nsid_names *bpf_nsids__names(struct bpf_nsids *n)
{
	return n->names;
}

void bpf_nsids__close(struct bpf_nsids *n)
{
	if (!n)
		return;
	nsid_names__free(n->names);
	profile_nsids_bpf__destroy(n->skel);
	free(n);
}
