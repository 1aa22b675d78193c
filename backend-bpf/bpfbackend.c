// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend. A BPF program on one cpu-clock event per CPU counts
 * {tgid, comm, user stack id, kernel stack id} in one of two hash maps; only
 * unique stacks and counts cross to user space. When the active map is half
 * full, the program is switched to the other map and the full one is drained
 * into the core and emptied, so long runs lose nothing. Dummy side-band
 * events keep the process tracker current, as in the perf backend.
 *
 * This is the only code that includes libbpf.h and the skeleton.
 */
#include "backend-bpf/bpfbackend.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/bpfbackend_internal.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/native_store.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/python.h"
#include "backend-bpf/offcpu.h"
#include "backend-bpf/probe.h"
#include "backend-perfring/ringset.h"
#include "core/lib/clock.h"

/* A dummy event per CPU: no samples, only the records that track processes. */
static void sideband_attr(struct perf_event_attr *attr, const struct backend_config *o, bool launch)
{
	ring_set__cpu_clock_attr(attr, o, launch);
	attr->config = PERF_COUNT_SW_DUMMY;
	attr->freq = 0;
	attr->sample_freq = 0;
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	/* Exec and fork times comparable with when counts were drained (4.1; else dropped). */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	ring_set__track_tasks(attr);
}

static void bpf_close(struct backend *b);

/*
 * The off-CPU program; under --unwind auto, its user stacks by the native
 * tables: the counting program's where it unwinds by them (one store),
 * else its own, for which a store is made here.
 */
static int open_off_cpu(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	struct native_store_opts opts = { .few = bpf_backend__names_processes(o) };
	struct bpf_offcpu_native native = { .tables = b->native, .opts = &opts };
	bool walk = o->native_unwind && o->off_cpu && (b->native || !o->on_cpu);
	struct bpf_object *own;
	int err;

	err = bpf_offcpu__open(&b->offcpu, o, b->pipeline,
			       b->cg_mode == CGROUP_MODE_TABLE
				       ? bpf_map__fd(b->skel->maps.cg_members) : -1,
			       walk ? &native : NULL, errm);
	own = err || b->native ? NULL : bpf_offcpu__native_object(b->offcpu);
	/* No store to fill its tables: the switch program walks by frame pointers. */
	if (own && bpf_native__adopt(b, own, &opts))
		bpf_offcpu__native_off(b->offcpu);
	if (!err && o->native_unwind && o->off_cpu && o->user_stacks && !walk)
		pr_info("bpf: off-CPU stacks by frame pointers: the sampling program does not "
			"unwind by the tables here (said above)\n");
	return err;
}

static int bpf_open(struct backend **out, const struct backend_config *o, struct pipeline *p,
		    pid_t target, struct errmsg *errm)
{
	struct perf_event_attr attr;
	struct backend *b;
	int err = 0;

	b = calloc(1, sizeof(*b));
	if (!b) {
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	b->cfg = o;
	b->pipeline = p;
	b->target = target;
	pthread_mutex_init(&b->config_lock, NULL);
	b->fpwalk_prog_fd = -1;
	b->native_prog_fd = -1;
	b->nr_cpus = libbpf_num_possible_cpus();
	if (b->nr_cpus <= 0) {
		errmsg__set(errm, "bpf: cannot tell the number of possible CPUs");
		free(b);
		return -EINVAL;
	}
	if (o->on_cpu)
		err = bpf_backend__open_counting(b, errm);
	if (!err && (o->off_cpu || b->cg_mode == CGROUP_MODE_TABLE))
		err = open_off_cpu(b, errm);
	if (!err && b->cg_mode == CGROUP_MODE_TABLE)
		err = bpf_backend__fill_cgroup_table(b, errm);
	if (err)
		goto err_out;
	if (!b->dwarf || target > 0) {
		sideband_attr(&attr, o, target > 0);
		err = ring_set__open(&b->sideband, "side-band", p, o, &attr, &target, 1,
				     SIDEBAND_PAGES, errm);
		if (err)
			goto err_out;
	}
	*out = b;
	return 0;

err_out:
	bpf_close(b);
	return err;
}

static int bpf_start(struct backend *b, struct errmsg *errm)
{
	int err;

	/* -p's processes are there now: their tables before their first sample. */
	if (b->native)
		bpf_native__add_targets(b);
	bpf_first_copies__renew(b);
	b->last_switch_ms = mono_ms();
	b->started_ns = b->dwarf_since = b->gen_since[0] = b->gen_since[1] = (uint64_t)mono_ns();
	if (b->offcpu) {
		err = bpf_offcpu__start(b->offcpu, errm);
		if (err)
			return err;
	}
	if (b->target > 0)
		return 0;	/* enable_on_exec */
	err = b->sideband ? ring_set__enable(b->sideband, errm) : 0;
	if (err)
		return err;
	for (int i = 0; i < b->nr_events; i++)
		if (ioctl(b->event_fds[i], PERF_EVENT_IOC_ENABLE, 0)) {
			err = -errno;
			errmsg__set(errm, "bpf: enabling the event: %s", strerror(-err));
			return err;
		}
	return 0;
}

/*
 * While Python processes are walked, how often the wait looks whether the
 * walks met threads they do not know (one read of a per-CPU stat): such a
 * thread's samples lack their Python frames until its process's threads
 * are read again, and the thread may live only a fraction of a second.
 */
#define PYTHON_UNKNOWN_POLL_MS 5

static int bpf_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	struct ring_set *sets[3];
	int fds[2] = { wake_fd, bpf_native__wake_fd(b) };
	int64_t end;
	int nr = 0, err;

	if (!b->dwarf && b->skel && timeout_ms > b->poll_ms)
		timeout_ms = b->poll_ms;
	/*
	 * The stack copies' reader says when its batch grows large; else the
	 * run loop's interval, as the perf backend drains (draining every 25
	 * ms cost a fifth more CPU than perf's dwarf mode on a busy host).
	 */
	if (b->sideband)
		sets[nr++] = b->sideband;
	if (b->dwarf)
		sets[nr++] = bpf_dwarf__ring_set(b->dwarf);
	if (b->first_copies)
		sets[nr++] = bpf_first_copies__ring_set(b);
	/*
	 * The native walk's noted processes wake the wait by their records;
	 * without those rings, or with reads a poll put off, it looks.
	 */
	if (!bpf_backend__python_watched(b) && !bpf_native__looks(b))
		return ring_set__wait_sets_fds(sets, nr, fds, 2, timeout_ms);
	/* In slices; back early for the drain that hands the unknown threads over. */
	end = mono_ms() + timeout_ms;
	for (;;) {
		int64_t t0 = mono_ns(), left = end - mono_ms();
		int slice = left < PYTHON_UNKNOWN_POLL_MS ? (int)left : PYTHON_UNKNOWN_POLL_MS;

		if (left <= 0 || bpf_backend__python_noticed(b) || bpf_native__noticed(b))
			return 0;
		err = ring_set__wait_sets_fds(sets, nr, fds, 2, slice);
		/* Records to drain, or a signal: well before the slice was over. */
		if (err || mono_ns() - t0 < (int64_t)slice * 900000)
			return err;
	}
}
static void bpf_stop(struct backend *b)
{
	if (b->offcpu)
		bpf_offcpu__stop(b->offcpu);
	for (int i = 0; i < b->nr_events; i++)
		ioctl(b->event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (b->dwarf)
		bpf_dwarf__stop(b->dwarf);
	bpf_first_copies__stop(b);
	if (b->sideband)
		ring_set__disable(b->sideband);
	b->stopped = true;
}

static void bpf_stats(const struct backend *b, struct backend_stats *st)
{
	struct backend *mb = (struct backend *)b;
	uint64_t full;

	memset(st, 0, sizeof(*st));
	/* Shared with the stack copies, their rings' losses count as samples lost, as perf's. */
	if (b->sideband) {
		st->malformed_records = ring_set__bad_records(b->sideband);
		st->sideband_lost = ring_set__lost(b->sideband);
	}
	ring_set__memory(b->sideband, st);
	ring_set__memory(b->dwarf ? bpf_dwarf__ring_set(b->dwarf) : NULL, st);
	if (b->offcpu)
		bpf_offcpu__stats(b->offcpu, st);
	st->cgroup_untracked += b->cgroup_full_at_start;
	st->pidns_unnamed += b->nsids ? nsid_names__unnamed(bpf_nsids__names(b->nsids)) : 0;
	if (!b->skel)
		return;
	full = bpf_backend__read_stat(mb, PROFILE_STAT_HASH_FULL);
	st->samples = bpf_backend__read_stat(mb, PROFILE_STAT_SAMPLES);
	st->lost = full;
	st->lost_reason = LOST_COUNT_MAP_FULL;
	st->hash_full |= full > 0;
	st->drains += b->drains;
	st->hash_storage_size = b->hash_size;
	st->stack_storage_size = b->stack_size;
	st->maps_shrunk = b->stack_size < b->stack_start ||
			  b->hash_size < b->cfg->hash_storage_size;
	st->user_stacks_lost = bpf_backend__read_stat(mb, PROFILE_STAT_USER_STACK_LOST);
	st->kernel_stacks_lost = bpf_backend__read_stat(mb, PROFILE_STAT_KERNEL_STACK_LOST);
	st->stack_overflows = bpf_backend__read_stat(mb, PROFILE_STAT_STACK_OVERFLOWED);
	st->stacks_no_room = bpf_backend__read_stat(mb, PROFILE_STAT_STACK_NOMEM);
	st->orphan_stacks = b->orphan_stacks;
	st->stale_stacks = b->stacks[0].stale + b->stacks[1].stale;
	if (b->dwarf) {
		uint64_t lost = bpf_dwarf__lost(b->dwarf);

		st->lost += lost;
		if (lost)
			st->lost_reason = LOST_PERF_BUFFER_FULL;
		st->malformed_records += bpf_dwarf__bad_records(b->dwarf);
		st->fp_fallbacks = bpf_backend__read_stat(mb, PROFILE_STAT_NO_USER_REGS);
	}
	bpf_first_copies__stats(b, st);
}

static void bpf_close(struct backend *b)
{
	if (!b)
		return;
	stack_cache__fini(&b->stacks[0]);
	stack_cache__fini(&b->stacks[1]);
	ring_set__close(b->sideband);
	for (int i = 0; i < b->nr_events; i++)
		close(b->event_fds[i]);
	bpf_dwarf__close(b->dwarf);
	bpf_first_copies__close(b);
	/* The store first: its maps may be the off-CPU program's. */
	bpf_native__close(b);
	bpf_offcpu__close(b->offcpu);
	profile_pidns_bpf__destroy(b->pidns);
	profile_fpwalk_bpf__destroy(b->fpwalk);
	profile_fpwalk_regs_bpf__destroy(b->fpwalk_regs);
	bpf_nsids__close(b->nsids);
	profile_idmap_bpf__destroy(b->idmap);
	profile_mntns_bpf__destroy(b->mntns);
	free(b->event_fds);
	bpf_python__free(b->python);
	profile_bpf__destroy(b->counting);
	profile_bpf__destroy(b->skel);
	pthread_mutex_destroy(&b->config_lock);
	free(b);
}

static int bpf_set_interp(struct backend *b, const struct interp_proc *procs, size_t nr,
			  size_t *kept, struct errmsg *err)
{
	struct bpf_python *off = bpf_offcpu__python(b->offcpu);
	int e;

	*kept = nr;
	e = b->python ? bpf_python__set(b->python, procs, nr, kept, err) : 0;

	/* --wall: the off-CPU program keeps tables of its own, of the same size. */
	if (off) {
		int e2 = bpf_python__set(off, procs, nr, kept, err);

		e = e ? e : e2;
	}
	return e;
}

const struct backend_ops bpf_backend_ops = {
	.name = "bpf",
	.probe = bpf_probe,
	.open = bpf_open,
	.start = bpf_start,
	.wait = bpf_wait,
	.drain = bpf_backend__drain,
	.stop = bpf_stop,
	.stats = bpf_stats,
	.close = bpf_close,
	.set_interp = bpf_set_interp,
};
