// SPDX-License-Identifier: GPL-2.0
/*
 * Side-band records applied to the process tracker: mappings (with the
 * inode from /proc before MMAP2), execs and comms, forks, exits, each at
 * its record's time; after a loss, the running processes read again.
 */
#include "backend-perfring/ringset_internal.h"

#include <string.h>
#include <sys/sysmacros.h>

#include "backend-perfring/decode.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"

static int handle_mmap(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_mmap mm;
	struct build_id bid = { 0 };
	struct mapping m;
	uint64_t dev = 0;
	int err;

	if (decode__mmap(hdr, rs->sample_type, rs->sample_id_all, &mm)) {
		rs->bad_records++;
		return 0;
	}
	pr_debug("mmap pid %d %#llx-%#llx pgoff %#llx %s\n", (int)mm.pid,
		 (unsigned long long)mm.addr, (unsigned long long)(mm.addr + mm.len),
		 (unsigned long long)mm.pgoff, mm.filename);
	/* pid -1: kernel and module maps; kallsyms covers those. */
	if ((int32_t)mm.pid <= 0 || !pipeline__wants_pid(rs->pipeline, mm.pid) || !mm.len)
		return 0;
	if (hdr->type == PERF_RECORD_MMAP2) {
		dev = makedev(mm.maj, mm.min);
	} else if (mm.exec && mm.filename[0] == '/' &&
		   map_inode__lookup(&rs->maps, mm.pid, mm.addr, mm.pgoff, mm.filename, &dev,
				     &mm.ino)) {
		/* Without an inode the unwinder cannot open the file: said at the end. */
		rs->maps_without_inode++;
		pr_debug("%s: no inode for %s of pid %d: it is gone\n", rs->what, mm.filename,
			 (int)mm.pid);
	}
	/* The kernel read it from the very file mapped: the tracker checks files against it. */
	bid.size = mm.build_id_size;
	memcpy(bid.data, mm.build_id, mm.build_id_size);
	m = (struct mapping){ .start = mm.addr, .end = mm.addr + mm.len, .pgoff = mm.pgoff,
			      .dev = dev, .ino = mm.ino, .exec = mm.exec,
			      .path = (char *)mm.filename };
	err = proctrack__mmap_build_id(rs->pipeline->procs, mm.pid, &m, &bid);
	/* An interpreter's file mapped: its process is looked for from now, not at its samples. */
	if (!err)
		pipeline__interp_mapped(rs->pipeline, mm.pid, &m);
	return err;
}

/* When a side-band record was written (its sample_id), 0 if it does not say. */
static uint64_t record_time(const struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct sample_id id;

	if (decode__sample_id(hdr, rs->sample_type, rs->sample_id_all, &id))
		return 0;
	return id.time;
}

static int handle_comm(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct proctrack *pt = rs->pipeline->procs;
	struct decoded_comm cm;
	int err;

	if (decode__comm(hdr, rs->sample_type, rs->sample_id_all, &cm)) {
		rs->bad_records++;
		return 0;
	}
	if (!pipeline__wants_pid(rs->pipeline, cm.pid))
		return 0;
	/* Without comm_exec (before 3.16), a COMM of the main thread stands for an exec. */
	if (cm.exec || (!rs->comm_exec && cm.pid == cm.tid)) {
		err = proctrack__exec(pt, cm.pid, cm.comm, record_time(rs, hdr));
		if (!err && rs->on_task)
			err = rs->on_task(rs->on_task_ctx, false, cm.pid, cm.tid, record_time(rs, hdr));
		if (err)
			return err;
	}
	return proctrack__set_comm(pt, cm.tid, cm.comm);
}

static int handle_fork(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct proctrack *pt = rs->pipeline->procs;
	struct decoded_task tk;
	int err;

	if (decode__task(hdr, &tk)) {
		rs->bad_records++;
		return 0;
	}
	/* Before the checks below: a process that takes a member's number ends it. */
	err = pipeline__note_fork(rs->pipeline, tk.pid, tk.ppid, tk.tid, record_time(rs, hdr));
	if (err)
		return err;
	if (!pipeline__wants_pid(rs->pipeline, tk.ppid) && !pipeline__wants_pid(rs->pipeline, tk.pid))
		return 0;
	if (tk.pid != tk.ppid) {
		err = proctrack__fork(pt, tk.pid, tk.ppid, record_time(rs, hdr));
		if (err)
			return err;
	}
	return proctrack__inherit_comm(pt, tk.tid, tk.ppid, tk.ptid);
}

int sideband__exit(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_task tk;
	bool wanted;
	int err;

	if (decode__task(hdr, &tk)) {
		rs->bad_records++;
		return 0;
	}
	/* A member (-p, -L, the command's tree) ends with its last thread. */
	pipeline__note_exit(rs->pipeline, tk.pid, tk.tid, record_time(rs, hdr));
	/*
	 * A process not wanted may still be tracked: a child of -p's process
	 * came with its fork. Its end lets its entries go too.
	 */
	wanted = pipeline__wants_pid(rs->pipeline, tk.pid);
	if (!wanted && !proctrack__knows(rs->pipeline->procs, tk.pid))
		return 0;
	/* The image's end, so that its mappings can go once no sample of it is to come. */
	err = proctrack__exit(rs->pipeline->procs, tk.pid, tk.tid, record_time(rs, hdr));
	if (err || !wanted || !rs->on_task)
		return err;
	return rs->on_task(rs->on_task_ctx, true, tk.pid, tk.tid, record_time(rs, hdr));
}

/*
 * The wall clock at a record's time, where record times are CLOCK_MONOTONIC
 * (use_clockid, 4.1): the tracker checks files against when they were
 * mapped. 0 where not known.
 */
static int64_t record_wall_ns(struct ring_set *rs, const struct perf_event_header *hdr)
{
	uint64_t t;

	if (!rs->mono_to_wall_ns || !(t = record_time(rs, hdr)))
		return 0;
	return (int64_t)t + rs->mono_to_wall_ns;
}

int sideband__record(struct ring_set *rs, const struct perf_event_header *hdr)
{
	int err;

	proctrack__set_record_time(rs->pipeline->procs, record_wall_ns(rs, hdr));
	err = hdr->type == PERF_RECORD_FORK ? handle_fork(rs, hdr)
	      : hdr->type == PERF_RECORD_COMM ? handle_comm(rs, hdr)
					      : handle_mmap(rs, hdr);
	proctrack__set_record_time(rs->pipeline->procs, 0);
	return err;
}

static bool resync_wanted(pid_t pid, void *ctx)
{
	return pipeline__wants_pid(ctx, pid);
}

/*
 * Records were lost (PERF_RECORD_LOST): some may have been mmaps, execs or
 * forks. The processes still running are read again from /proc, at most
 * every RESYNC_MS; what exited in the gap cannot be.
 */
#define RESYNC_MS 500
int sideband__resync(struct ring_set *rs)
{
	int64_t mono = mono_ns(), now = mono / 1000000;
	int n;

	if (!rs->tracks_tasks || now - rs->last_resync_ms < RESYNC_MS)
		return 0;
	rs->last_resync_ms = now;
	rs->lost_resynced = rs->lost;
	n = proctrack__resync(rs->pipeline->procs, resync_wanted, rs->pipeline,
			      ring_set__monotonic(rs) ? (uint64_t)mono : 0);
	if (n < 0)
		return n;
	rs->resynced += (uint64_t)n;
	pr_info("%s: records lost: the mappings of %d running processes read again\n", rs->what,
		n);
	return 0;
}
