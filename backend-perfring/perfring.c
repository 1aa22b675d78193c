// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend: one cpu-clock event per CPU with an mmap ring. Samples
 * carry frame-pointer callchains and are counted in user space; side-band
 * records on the same rings keep the process tracker current.
 */
#include "backend-perfring/perfring.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/offcpu.h"
#include "backend-perfring/pywaits.h"
#include "backend-perfring/probe.h"
#include "backend-perfring/ringplan.h"
#include "backend-perfring/ringsample.h"
#include "backend-perfring/ringset.h"
#include "backend-perfring/withheld.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"

/*
 * For planning the rings: the frames a stack typically has (the largest is
 * MAX_STACK_DEPTH a side), the switches a CPU makes in a second on a busy
 * host, and what side-band records (fork, exec, mmap) add to the set that
 * carries them.
 */
#define TYPICAL_FRAMES 64
#define SWITCHES_PER_S 2000
#define SIDEBAND_BYTES_PER_S (64 << 10)

struct backend {
	const struct backend_config *cfg;
	struct pipeline *pipeline;
	struct ring_set *rs;		/* cpu-clock samples (on-CPU) */
	struct ring_set *off_rs;	/* switches (off-CPU) */
	struct py_waits *py_waits;	/* Python threads' switch-outs (off-CPU), or NULL */
	struct perf_offcpu *off;
	struct withheld_time *withheld;	/* --wall without kernel samples: their time */
	bool off_on_exec;		/* the off-CPU events enable themselves at exec */
	uint64_t stop_ns;		/* CLOCK_MONOTONIC when sampling stopped */
	bool stopped;
	uint64_t sample_type;		/* as asked: the ladder never drops these bits */
	uint64_t regs_user;
	bool launched;		/* events enable themselves at the command's exec */
	uint64_t samples;
	uint64_t stack_copies;		/* samples that brought a stack copy */
	/*
	 * --unwind auto, -p/-L: the threads listed before the rings are
	 * planned, and which of them are walked by frame pointers.
	 */
	pid_t *tids;
	int nr_tids;
	bool *fp;
	int nr_fp;
	unsigned int on_pages, off_pages;	/* data pages per ring, as planned */
};

/*
 * feed_sample, saying whose sample was counted (*tid 0: none was);
 * read_interp: its thread's interpreted frames are wanted, as rs's reader
 * read them right after the sample, else read by the pipeline now.
 */
static int feed(struct pipeline *p, uint64_t sample_type, uint64_t regs_user, bool read_interp,
		const struct ring_set *rs, const struct perf_event_header *hdr, pid_t *pid,
		pid_t *tid, bool *copied)
{
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH];
	struct decoded_sample ds;
	struct user_snapshot snap;
	struct sample s;

	*pid = *tid = 0;
	*copied = false;
	if (decode__sample(hdr, sample_type, regs_user, &ds))
		return -EBADMSG;
	if (!pipeline__wants_thread(p, ds.id.pid, ds.id.tid)) {
		p->filtered++;
		return 0;
	}
	perfring__convert_sample(&ds, p->procs, kernel, user, &s);
	*copied = ds.stack_size > 0;
	/*
	 * The events of a thread that --unwind auto walks by frame pointers
	 * ask for a copy of no bytes and the kernel's user callchain: kept.
	 */
	if (regs_user && !(ds.stack_size == 0 && s.nr_user > 0)) {
		s.nr_user = 0;
		if (perfring__user_snapshot(&ds, regs_user, &snap))
			s.user_snapshot = &snap;
	}
	s.read_interp = read_interp;
	if (read_interp && rs &&
	    ring_set__sample_interp(rs, &s.interp_frames, &s.nr_interp, &s.interp_status, NULL))
		s.read_interp = false;
	*pid = s.pid;
	*tid = s.tid;
	return pipeline__count(p, &s);
}

int perfring__feed_sample(struct pipeline *p, uint64_t sample_type, uint64_t regs_user,
			  const struct perf_event_header *hdr)
{
	pid_t pid, tid;
	bool copied;

	return feed(p, sample_type, regs_user, false, NULL, hdr, &pid, &tid, &copied);
}

static int handle_sample(void *ctx, const struct perf_event_header *hdr)
{
	struct backend *b = ctx;
	pid_t pid, tid;
	bool copied;
	int err = feed(b->pipeline, b->sample_type, b->regs_user, b->cfg->interp, b->rs, hdr, &pid,
		       &tid, &copied);

	if (err == -EBADMSG) {
		ring_set__count_bad(b->rs);
		return 0;
	}
	b->samples++;
	b->stack_copies += copied;
	if (!err && tid && b->withheld)
		err = withheld_time__sample(b->withheld, pid, tid);
	return err;
}

/*
 * Under --unwind auto (cfg->needs_copies), the threads of -p/-L, each
 * decided by its process: one whose every binary keeps frame pointers gets
 * an event that asks for a copy of no bytes and the kernel's frame-pointer
 * callchain (the same record layout, one ring). An event is inherited by
 * the threads and processes its thread starts later: they are walked as it
 * is. Only events of a task can choose so: the launched command's is
 * opened before its exec maps anything (and inherited by whatever it
 * runs), system-wide ones take every process's samples: both take copies,
 * as dwarf does. Decided before the rings are planned: without copies they
 * are planned as for --unwind fp.
 */
static int decide_tasks(struct backend *b, pid_t target)
{
	const struct backend_config *c = b->cfg;

	if (!c->needs_copies || !c->dwarf || !c->user_stacks || !c->on_cpu || target > 0 ||
	    c->nr_cgroups || !(c->nr_pids || c->nr_tids))
		return 0;
	b->nr_tids = ring_set__task_list(c, &b->tids);
	if (b->nr_tids <= 0 || b->nr_tids > RING_SET_MAX_TASK_EVENTS)
		return 0;	/* open_on_cpu says why, or samples system-wide: copies */
	b->fp = calloc(b->nr_tids, sizeof(*b->fp));
	if (!b->fp)
		return -ENOMEM;
	for (int t = 0; t < b->nr_tids; t++)
		b->nr_fp += b->fp[t] = !c->needs_copies(c->needs_copies_ctx, b->tids[t]);
	pr_info("perf: unwind auto: %d of %d thread(s) walked by frame pointers (no stack "
		"copies), %d with copies\n", b->nr_fp, b->nr_tids, b->nr_tids - b->nr_fp);
	return 0;
}

/* Whether the on-CPU events may take stack copies. */
static bool on_cpu_copies(const struct backend *b)
{
	return b->cfg->dwarf && b->cfg->user_stacks && !(b->fp && b->nr_fp == b->nr_tids);
}

/* The events of -p/-L's threads, some by frame pointers where decide_tasks said so. */
static int open_tasks(struct backend *b, struct perf_event_attr *attr, const pid_t *tids, int nr,
		      unsigned int pages, struct errmsg *errm)
{
	struct perf_event_attr fp_attr = *attr;

	if (!b->fp || !(attr->sample_type & PERF_SAMPLE_STACK_USER))
		return ring_set__open(&b->rs, "perf", b->pipeline, b->cfg, attr, tids, nr, pages,
				      errm);
	fp_attr.sample_stack_user = 0;
	fp_attr.exclude_callchain_user = 0;
	return ring_set__open_mixed(&b->rs, "perf", b->pipeline, b->cfg, attr, &fp_attr, b->fp,
				    tids, nr, pages, errm);
}

/* The cpu-clock events of on-CPU sampling, carrying the side-band records. */
static int open_on_cpu(struct backend *b, pid_t target, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	unsigned int pages = b->on_pages;
	struct perf_event_attr attr;
	pid_t all = -1, *tids = NULL;
	int err, nr;

	perfring__sample_attr(&attr, c, target > 0);
	/*
	 * Interpreted frames are read by the reader thread as it copies each
	 * sample (ring_set__read_interp_early): woken by each sample rather than
	 * at a quarter-full ring, it reads them tens of microseconds after the
	 * sample, not up to a poll's period later (reader.c).
	 */
	if (c->interp && c->interp_reader) {
		attr.watermark = 0;
		attr.wakeup_events = 1;
	}
	b->sample_type = attr.sample_type;
	b->regs_user = attr.sample_regs_user;
	if (target > 0) {
		err = ring_set__open(&b->rs, "perf", b->pipeline, c, &attr, &target, 1, pages, errm);
		goto out;
	}
	if (c->nr_cgroups) {
		/* -p/-L too: both filters apply, the second in the pipeline. */
		err = ring_set__open_cgroups(&b->rs, "perf", b->pipeline, c, &attr, pages, errm);
		if (!err)
			pr_info("perf: sampling %d cgroup(s)\n", c->nr_cgroups);
		goto out;
	}
	/*
	 * -p/-L: the threads themselves, inherited by new ones, so that nothing
	 * else is sampled (or, with --unwind dwarf, copied) only to be filtered
	 * out; system-wide only where there are too many threads for an event
	 * each.
	 */
	if (b->tids) {
		nr = b->nr_tids;	/* listed by decide_tasks */
		tids = b->tids;
		b->tids = NULL;
	} else {
		nr = c->nr_pids || c->nr_tids ? ring_set__task_list(c, &tids) : 0;
	}
	if (nr > 0 && nr <= RING_SET_MAX_TASK_EVENTS) {
		attr.inherit = 1;
		err = open_tasks(b, &attr, tids, nr, pages, errm);
		if (!err)
			pr_info("perf: sampling %d thread(s) of the given processes\n", nr);
	} else if ((c->nr_pids || c->nr_tids) && nr <= 0) {
		err = nr < 0 ? nr : -ESRCH;
		errmsg__set(errm, "perf: no thread of the given processes is left");
	} else if (!c->user_mode_only &&
		   !perfring__try_open(c, false, false, -1, c->cpu >= 0 ? c->cpu : 0)) {
		/* System-wide, filtered in the pipeline. */
		err = ring_set__open(&b->rs, "perf", b->pipeline, c, &attr, &all, 1, pages, errm);
	} else {
		err = -EACCES;
		if (nr > RING_SET_MAX_TASK_EVENTS)
			errmsg__set(errm, "perf: %d threads are too many for an event each, and "
				    "system-wide sampling is not allowed here", nr);
		else
			errmsg__set(errm, "perf: system-wide sampling is not allowed here");
	}
	free(tids);
out:
	if (!err) {
		ring_set__on_sample(b->rs, handle_sample, b);
		ring_set__read_interp_early(b->rs);
	}
	return err;
}

static int offcpu_sample(void *ctx, const struct perf_event_header *hdr)
{
	struct backend *b = ctx;
	struct offcpu_early_interp early;
	bool read = ring_set__sample_interp(b->off_rs, &early.frames, &early.nr, &early.status,
					    &early.read_ns);
	int err = perf_offcpu__sample(b->off, hdr, read ? &early : NULL);

	if (err == -EBADMSG) {
		ring_set__count_bad(b->off_rs);
		return 0;
	}
	return err;
}

static int offcpu_switch(void *ctx, pid_t pid, pid_t tid, uint64_t time, bool out)
{
	struct backend *b = ctx;
	int err = perf_offcpu__switch(b->off, pid, tid, time, out);

	if (!err && b->withheld)
		err = withheld_time__switch(b->withheld, pid, tid, time, out);
	return err;
}

static int task_event(void *ctx, bool exit, pid_t pid, pid_t tid, uint64_t time)
{
	return withheld_time__task(((struct backend *)ctx)->withheld, exit, pid, tid, time);
}

/*
 * --wall without kernel samples (kernel.perf_event_paranoid 2): the time
 * its threads spent on a CPU in the kernel, from their switch records.
 */
static int count_withheld_time(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;

	b->withheld = withheld_time__new(b->pipeline, c->frequency ? 1000000000ull / c->frequency
								   : c->period);
	if (!b->withheld) {
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	/* Execs and exits come with the side-band records, on the on-CPU rings. */
	ring_set__on_task(b->rs, task_event, b);
	return 0;
}

/*
 * An off-CPU wait's interpreted frames read at its switch-out, within
 * microseconds, while the thread still waits; at the drain (up to 100 ms
 * on) a wait shorter than that is over and the frames are wherever the
 * thread has gone since. Per-task events wake the off-CPU reader at each
 * switch-out, which reads them as it copies the record. The tracepoint on
 * every CPU would wake it at every switch of the host: there a second set
 * of events, filtered to the Python threads, does it (pywaits.h).
 */
static int early_interp(struct backend *b, enum offcpu_source source)
{
	int err;

	if (!b->cfg->interp || !b->cfg->interp_reader || source == OFFCPU_SWITCHES_ONLY)
		return 0;
	if (source == OFFCPU_SWITCH_SAMPLES)
		ring_set__read_interp_early(b->off_rs);
	err = source == OFFCPU_TRACEPOINT ? py_waits__open(&b->py_waits, b->pipeline, b->cfg) : 0;
	perf_offcpu__use_py_waits(b->off, b->py_waits, ring_set__monotonic(b->off_rs));
	return err;
}

/*
 * The switch events of off-CPU time: the sched_switch tracepoint on every
 * CPU (a launched command's tree is kept by the pipeline: its switch-ins
 * happen in other tasks' context), or per-task context-switch events.
 */
static int open_off_cpu(struct backend *b, pid_t target, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	unsigned int pages = b->off_pages;
	enum offcpu_source source;
	struct perf_event_attr attr;
	pid_t all = -1, *tids = NULL;
	char why[512] = "";
	int err, nr;

	err = perf_offcpu__probe(c, perfring__first_task(c), &source, why, sizeof(why));
	if (!err)
		err = perf_offcpu__attr(c, source, &attr, why, sizeof(why));
	if (!err)
		err = perf_offcpu__new(&b->off, c, b->pipeline, source, &attr, why, sizeof(why));
	if (err) {
		errmsg__set(errm, "perf: %s", why[0] ? why : strerror(-err));
		return err;
	}
	/* The side-band records come with the cpu-clock events when there are some. */
	if (!c->on_cpu)
		ring_set__track_tasks(&attr);
	/*
	 * Per-task events: a wait's interpreted frames read by the reader
	 * thread at its switch-out (early_interp): woken at each, not at a
	 * quarter-full ring.
	 */
	if (c->interp && c->interp_reader && source == OFFCPU_SWITCH_SAMPLES) {
		attr.watermark = 0;
		attr.wakeup_events = 1;
	}
	if (source == OFFCPU_TRACEPOINT && c->nr_cgroups) {
		/* Switch-outs are sampled in the task's context, switch-ins recorded in its. */
		err = ring_set__open_cgroups(&b->off_rs, "off-CPU", b->pipeline, c, &attr, pages,
					     errm);
	} else if (source == OFFCPU_TRACEPOINT) {
		err = ring_set__open(&b->off_rs, "off-CPU", b->pipeline, c, &attr, &all, 1, pages,
				     errm);
	} else if (target > 0) {
		b->off_on_exec = true;
		err = ring_set__open(&b->off_rs, "off-CPU", b->pipeline, c, &attr, &target, 1, pages,
				     errm);
	} else {
		nr = ring_set__task_list(c, &tids);
		err = nr > 0 ? ring_set__open(&b->off_rs, "off-CPU", b->pipeline, c, &attr, tids, nr,
					      pages, errm)
			     : nr < 0 ? nr : -ESRCH;
		if (nr == 0)
			errmsg__set(errm, "perf: no thread of the given processes is left");
		free(tids);
	}
	if (err)
		return err;
	err = early_interp(b, source);
	if (err)
		return err;
	ring_set__on_sample(b->off_rs, offcpu_sample, b);
	ring_set__on_switch(b->off_rs, offcpu_switch, b);
	perf_offcpu__use_switch_records(b->off, ring_set__switch_records(b->off_rs));
	if (b->rs && c->user_mode_only && source == OFFCPU_SWITCHES_ONLY) {
		err = count_withheld_time(b, errm);
		if (err)
			return err;
	}
	pr_info("perf: off-CPU time from %s\n",
		source == OFFCPU_TRACEPOINT	    ? "sched:sched_switch on every CPU"
		: source == OFFCPU_SWITCH_SAMPLES ? "context-switch samples of the tasks"
						  : "switch records of the tasks (no stacks)");
	return 0;
}

static void perfring_close(struct backend *b);

/* The bytes of one sample record: ids, callchain, and with copies the registers and stack. */
static void sample_bytes(const struct backend_config *c, bool dwarf, bool copies,
			 unsigned int frames, uint64_t *bytes)
{
	/* header, tid, time, cpu, callchain nr and ips with their context markers */
	*bytes = 8 + 3 * 8 + 8 + 8 * (uint64_t)(frames + 4);
	/* abi, rdi, rbp, rsp, rip (ringsample.c's DWARF_REGS_MASK), the copy's size, the copy */
	if (dwarf && c->user_stacks)
		*bytes += 8 + 4 * 8 + 8 + (copies ? c->stack_dump_size + 8 : 0);
}

/*
 * Sizes of the on-CPU and off-CPU rings, planned together: an unprivileged
 * user's locked memory must hold both (before, the on-CPU rings took it all
 * and the off-CPU ones could not be mapped).
 */
static int plan_rings(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ring_need needs[2], *on = NULL, *off = NULL;
	struct ring_budget budget;
	char why[512];
	int *cpus = NULL, nr_cpus, nr = 0, err;

	nr_cpus = ring_set__cpus(c, &cpus);
	free(cpus);
	if (nr_cpus < 0) {
		errmsg__set(errm, "perf: cannot read the online CPUs: %s", strerror(-nr_cpus));
		return nr_cpus;
	}
	memset(needs, 0, sizeof(needs));
	if (c->on_cpu) {
		on = &needs[nr++];
		on->what = "perf";
		on->nr_rings = nr_cpus;
		on->records_per_s = c->frequency ? c->frequency
						 : 1000000000ull / (c->period ? c->period : 1);
		sample_bytes(c, c->dwarf, on_cpu_copies(b), TYPICAL_FRAMES, &on->record_bytes);
		sample_bytes(c, c->dwarf, on_cpu_copies(b), 2 * MAX_STACK_DEPTH,
			     &on->max_record_bytes);
	}
	if (c->off_cpu) {
		off = &needs[nr++];
		off->what = "off-CPU";
		off->nr_rings = nr_cpus;
		off->records_per_s = SWITCHES_PER_S;
		/* The switch-out sample (a tracepoint's raw data too) and the switch records. */
		sample_bytes(c, c->off_cpu_dwarf, true, TYPICAL_FRAMES, &off->record_bytes);
		sample_bytes(c, c->off_cpu_dwarf, true, 2 * MAX_STACK_DEPTH, &off->max_record_bytes);
		off->record_bytes += 128 + 2 * 48;
		off->max_record_bytes += 128;
	}
	/* The side-band records come with the first set. */
	if (nr)
		needs[0].records_per_s += SIDEBAND_BYTES_PER_S / needs[0].record_bytes;
	ring_budget__read(&budget, page);
	ring_budget__describe(&budget, page, why, sizeof(why));
	pr_info("perf: %s\n", why);
	err = ring_plan(needs, nr, &budget, page, why, sizeof(why));
	if (err) {
		errmsg__set(errm, "perf: %s", why);
		/* The budget, not memory: --unwind auto may ask again with smaller records. */
		return -ENOBUFS;
	}
	for (int i = 0; i < nr; i++)
		pr_info("perf: %s rings: %u x %u data pages (%u KiB each; wanted %u for %u ms of "
			"~%" PRIu64 " records/s of ~%" PRIu64 " bytes; at least %u)\n",
			needs[i].what, needs[i].nr_rings, needs[i].pages,
			(unsigned int)(needs[i].pages * page / 1024), needs[i].want_pages,
			RING_PLAN_DELAY_MS, needs[i].records_per_s, needs[i].record_bytes,
			needs[i].min_pages);
	b->on_pages = on ? on->pages : 0;
	b->off_pages = off ? off->pages : 0;
	return 0;
}

static int perfring_open(struct backend **out, const struct backend_config *c, struct pipeline *p,
			 pid_t target, struct errmsg *errm)
{
	struct backend *b;
	int err = 0;

	b = calloc(1, sizeof(*b));
	if (!b) {
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	b->cfg = c;
	b->pipeline = p;
	b->launched = target > 0;
	err = decide_tasks(b, target);
	if (err)
		errmsg__set(errm, "out of memory");
	if (!err)
		err = plan_rings(b, errm);
	if (!err && c->on_cpu)
		err = open_on_cpu(b, target, errm);
	if (!err && c->off_cpu)
		err = open_off_cpu(b, target, errm);
	if (err) {
		perfring_close(b);
		return err;
	}
	*out = b;
	return 0;
}

static int perfring_start(struct backend *b, struct errmsg *err)
{
	int ret = 0;

	/* Threads on a CPU at the start: from now (a launched command: from its exec). */
	if (b->withheld && !b->launched)
		withheld_time__set_start(b->withheld, (uint64_t)mono_ns());
	/* A launched command's events enable themselves at its exec. */
	if (b->rs && !b->launched)
		ret = ring_set__enable(b->rs, err);
	/* Before the events whose switch-outs take their reads. */
	if (!ret)
		ret = py_waits__enable(b->py_waits, err);
	if (!ret && b->off_rs && !b->off_on_exec)
		ret = ring_set__enable(b->off_rs, err);
	return ret;
}

/*
 * Until any set's reader asks for a drain (its copies a quarter of their
 * budget, or an error): the samples', the off-CPU events' (--wall has
 * both) and the Python waits' reads.
 */
static int perfring_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	struct ring_set *sets[3];
	int nr = 0;

	if (b->rs)
		sets[nr++] = b->rs;
	if (b->off_rs)
		sets[nr++] = b->off_rs;
	if (py_waits__ring_set(b->py_waits))
		sets[nr++] = py_waits__ring_set(b->py_waits);
	return ring_set__wait_sets(sets, nr, wake_fd, timeout_ms);
}

static int perfring_drain(struct backend *b)
{
	/* Mappings and comms first: they come with the first set. */
	int err = b->rs ? ring_set__drain(b->rs) : 0;

	/* The reads of Python threads' switch-outs before the switch-outs that take them. */
	if (!err)
		err = py_waits__drain(b->py_waits);
	if (!err && b->off_rs)
		err = ring_set__drain(b->off_rs);
	if (!err && b->off)
		py_waits__forget(b->py_waits, perf_offcpu__last_time(b->off));
	/* At the end, threads still switched out (or in) are counted up to it. */
	if (!err && b->off && b->stopped) {
		uint64_t end = ring_set__monotonic(b->off_rs) ? b->stop_ns
							      : perf_offcpu__last_time(b->off);

		err = perf_offcpu__finish(b->off, end);
		if (!err && b->withheld)
			err = withheld_time__finish(b->withheld, end);
	}
	return err;
}

static void perfring_stop(struct backend *b)
{
	b->stop_ns = (uint64_t)mono_ns();
	b->stopped = true;
	if (b->rs)
		ring_set__disable(b->rs);
	if (b->off_rs)
		ring_set__disable(b->off_rs);
	py_waits__disable(b->py_waits);
}

static void perfring_stats(const struct backend *b, struct backend_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = b->samples;
	st->stack_copies = b->stack_copies;
	st->lost_reason = LOST_RING_FULL;
	if (b->rs) {
		st->lost = ring_set__lost(b->rs);
		st->malformed_records = ring_set__bad_records(b->rs);
	}
	/* Only the unwinder needs the file's inode; symbols are found by path too. */
	if (b->cfg->dwarf && b->cfg->user_stacks)
		st->maps_without_inode = (b->rs ? ring_set__maps_without_inode(b->rs) : 0) +
					 (b->off_rs ? ring_set__maps_without_inode(b->off_rs) : 0);
	ring_set__memory(b->rs, st);
	ring_set__memory(b->off_rs, st);
	py_waits__memory(b->py_waits, st);
	if (b->off_rs) {
		st->lost += ring_set__lost(b->off_rs);
		st->malformed_records += ring_set__bad_records(b->off_rs);
		perf_offcpu__stats(b->off, st);
		st->kernel_withheld_ns = withheld_time__ns(b->withheld);
	}
}

static void perfring_close(struct backend *b)
{
	if (!b)
		return;
	ring_set__close(b->rs);
	ring_set__close(b->off_rs);
	py_waits__close(b->py_waits);
	perf_offcpu__free(b->off);
	withheld_time__free(b->withheld);
	free(b->tids);
	free(b->fp);
	free(b);
}

const struct backend_ops perfring_backend_ops = {
	.name = "perf",
	.probe = perfring__probe,
	.open = perfring_open,
	.start = perfring_start,
	.wait = perfring_wait,
	.drain = perfring_drain,
	.stop = perfring_stop,
	.stats = perfring_stats,
	.close = perfring_close,
};
