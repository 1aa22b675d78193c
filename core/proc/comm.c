// SPDX-License-Identifier: GPL-2.0
/*
 * Thread comms (from records, else /proc, else ":TID") and process kinds
 * (kernel thread or not), cached per tid and pid until retired.
 */
#include "core/proc/proctrack_internal.h"

#include "core/lib/pidstart.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct thread_comm *proctrack__find_comm(struct proctrack *pt, pid_t tid)
{
	return hashmap__find(&pt->comms, &tid);
}

/*
 * Keep tid's comm, dated seq: a record's (a COMM, a FORK) by the tracker's
 * counter, so that one set after the thread's exit is taken for a new
 * thread's; one read from /proc (or a placeholder) by 0, older than any
 * exit: read again if wanted once an exit of the tid is a grace old.
 */
static int store_comm(struct proctrack *pt, pid_t tid, const char *comm, uint64_t seq,
		      int64_t began_wall_ns)
{
	struct thread_comm *tc = proctrack__find_comm(pt, tid);

	if (!tc) {
		tc = calloc(1, sizeof(*tc));
		if (!tc)
			return -ENOMEM;
		tc->tid = tid;
		if (hashmap__add(&pt->comms, &tc->tid, tc)) {
			free(tc);
			return -ENOMEM;
		}
	}
	snprintf(tc->comm, sizeof(tc->comm), "%s", comm);
	tc->seq = seq;
	tc->began_wall_ns = began_wall_ns;
	return 0;
}

int proctrack__set_comm(struct proctrack *pt, pid_t tid, const char *comm)
{
	return store_comm(pt, tid, comm, ++pt->comm_seq, 0);
}

bool proctrack__is_kernel_thread(struct proctrack *pt, pid_t pid)
{
	uintptr_t kind = (uintptr_t)hashmap__find(&pt->kinds, (void *)(uintptr_t)pid);

	if (!kind) {
		kind = (uintptr_t)procfs__read_kind(pid);
		/* Not remembered when out of memory: read again next time. */
		hashmap__add(&pt->kinds, (void *)(uintptr_t)pid, (void *)kind);
	}
	return kind == KIND_KERNEL;
}

const char *proctrack__comm(struct proctrack *pt, pid_t pid, pid_t tid)
{
	struct thread_comm *tc = proctrack__find_comm(pt, tid);
	char buf[TASK_COMM_LEN + 2];
	int64_t began;

	if (tc)
		return tc->comm;
	if (!procfs__read_comm(pid, tid, buf, sizeof(buf), &began))
		snprintf(buf, sizeof(buf), ":%d", (int)tid);	/* as perf script does */
	if (store_comm(pt, tid, buf, 0, began))
		return ":?";
	return proctrack__find_comm(pt, tid)->comm;
}

int proctrack__keep_read_comm(struct proctrack *pt, pid_t tid, const char *comm, int64_t began)
{
	return proctrack__find_comm(pt, tid) ? 0 : store_comm(pt, tid, comm, 0, began);
}

const char *proctrack__comm_at(struct proctrack *pt, pid_t pid, pid_t tid, uint64_t time)
{
	const char *comm = proctrack__comm(pt, pid, tid);
	struct thread_comm *tc = proctrack__find_comm(pt, tid);

	/* A record's comm is dated by the records' order (seq): it is the thread's. */
	if (!tc || tc->seq || !time || !pt->clock_to_wall_ns ||
	    !pidstart__after(tc->began_wall_ns, (int64_t)time + pt->clock_to_wall_ns))
		return comm;
	snprintf(pt->comm_unknown, sizeof(pt->comm_unknown), ":%d", (int)tid);
	return pt->comm_unknown;
}

void proctrack__set_clock_to_wall(struct proctrack *pt, int64_t offset)
{
	pt->clock_to_wall_ns = offset;
}

int proctrack__inherit_comm(struct proctrack *pt, pid_t tid, pid_t ppid, pid_t ptid)
{
	return proctrack__set_comm(pt, tid, proctrack__comm(pt, ppid, ptid));
}
