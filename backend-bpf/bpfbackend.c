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

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/cgtrack.h"
#include "backend-bpf/convert.h"
#include "backend-bpf/countmap.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/idmaps.h"
#include "backend-bpf/load.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/offcpu.h"
#include "backend-bpf/probe.h"
#include "backend-bpf/shared_maps.h"
#include "backend-bpf/stacks.h"
#include "backend-perfring/ringset.h"
#include "compat/features.h"
#include "compat/perf_event.h"
#include "compat/pidns.h"
#include "core/lib/clock.h"
#include "core/lib/hashmap.h"
#include "core/lib/log.h"

#define SIDEBAND_PAGES 32
#define MIN_MAP_ENTRIES 1024
/*
 * Drain at least this often: the work is spread over the run, and the
 * report after the end waits only for what the last second counted. Each
 * drain also empties that generation's stack maps (see bpf/counting.bpf.h).
 */
#define DRAIN_PERIOD_MS 1000
/*
 * A generation is drained once it may hold 1/STACK_FILL_DIV of its stack
 * map's buckets (two stacks per new count key): the chance that a new stack
 * collides is the share of buckets taken, so it stays below 1.6%, and the
 * overflow map takes those.
 */
#define STACK_FILL_DIV 64
/* How often to look at the generation's fill at high sample rates, at most. */
#define MIN_POLL_MS 10

struct backend {
	const struct backend_config *cfg;
	struct pipeline *pipeline;
	struct profile_bpf *skel;
	pid_t target;
	int *event_fds;
	int nr_events;
	/*
	 * The side-band's own rings, or NULL where the stack copies' rings
	 * carry its records (system-wide --unwind dwarf): see tracker().
	 */
	struct ring_set *sideband;
	bool stopped;			/* the next drain takes everything */
	int counts_fd[2];
	int stats_fd;
	int config_fd;
	struct profile_config config;
	unsigned int hash_size;
	unsigned int stack_size;
	uint64_t new_keys_at_switch;
	int64_t last_switch_ms;
	/*
	 * When each generation became the active one, and when the stack copies
	 * were last drained (CLOCK_MONOTONIC ns, the side-band's clock): counts
	 * carry no time, so a drained count was taken between then and now.
	 */
	uint64_t gen_since[2];
	uint64_t dwarf_since;
	uint64_t started_ns;
	int nr_cpus;			/* possible CPUs: the per-CPU value count */
	uint64_t drains;
	/* Each generation's stack maps by id; the dwarf program uses generation 0's. */
	struct stack_cache stacks[2];
	uint64_t orphan_stacks;		/* stacks left in a cleared map without a count */
	int poll_ms;			/* how often bpf_drain looks at the fill */
	bool no_batch;			/* the kernel lacks batch map operations */
	struct bpf_dwarf *dwarf;	/* --unwind dwarf: stack copies instead of counts */
	bool kstacks_inline;		/* its kernel stacks come in its records, not stack maps */
	/* A profiler inside a pid namespace counts with tasks' ids there. */
	struct profile_pidns_bpf *pidns;
	struct bpf_nsids *nsids;	/* the same before Linux 5.7 */
	/* Off-CPU time: sched_switch, summed in the kernel; and/or --cgroup's thread table. */
	struct bpf_offcpu *offcpu;
	enum cgroup_mode cg_mode;	/* how the on-CPU programs keep to --cgroup */
	uint64_t cgroup_full_at_start;	/* threads the table had no room for at the start */
	/* bcc's --cgroupmap/--mntnsmap: the counting program's variant that reads them. */
	struct profile_idmap_bpf *idmap;
	struct profile_mntns_bpf *mntns;
	struct bpf_program *idmap_prog;
};

/*
 * The ring set whose records keep the process tracker current: the
 * side-band's, or the stack copies' that carry them too.
 */
static struct ring_set *tracker(const struct backend *b)
{
	return b->sideband ? b->sideband : bpf_dwarf__ring_set(b->dwarf);
}

/*
 * Counts drained now were taken since `since`: the process images that ran
 * then are the candidates for their addresses. Without CLOCK_MONOTONIC
 * side-band times (before 4.1) every image is (the addresses decide).
 */
static void set_window(struct backend *b, uint64_t since)
{
	if (ring_set__monotonic(tracker(b)))
		pipeline__set_window(b->pipeline, since, (uint64_t)mono_ns());
	else
		pipeline__set_window(b->pipeline, 0, UINT64_MAX);
}

/*
 * Where pre-5.11 kernels charge maps to RLIMIT_MEMLOCK, large maps fail:
 * shrink them (stats tell the sizes in use, the run warns).
 */
static struct profile_bpf *load_sized(struct backend *b, unsigned int nr_ids, bool kstacks_inline,
				      struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	struct profile_bpf *skel;

	b->hash_size = o->hash_storage_size;
	b->stack_size = o->stack_storage_size;
	for (;;) {
		/* Stack maps nothing writes are the smallest there is. */
		skel = bpf_load__program(b->hash_size, kstacks_inline ? 1 : b->stack_size, nr_ids,
					 o->dwarf && o->user_stacks,
					 b->cg_mode == CGROUP_MODE_TABLE ? CGTRACK_ENTRIES : 0);
		if (skel)
			break;
		if ((errno != EPERM && errno != ENOMEM && errno != E2BIG) ||
		    (b->hash_size <= MIN_MAP_ENTRIES && b->stack_size <= MIN_MAP_ENTRIES)) {
			errmsg__set(errm, "bpf: loading the program: %s", strerror(errno));
			return NULL;
		}
		if (b->stack_size > MIN_MAP_ENTRIES)
			b->stack_size /= 2;
		else
			b->hash_size /= 2;
	}
	return skel;
}

static int write_config(struct backend *b)
{
	__u32 zero = 0;

	if (bpf_map_update_elem(b->config_fd, &zero, &b->config, BPF_ANY))
		return -errno;
	return 0;
}

static int setup_maps(struct backend *b)
{
	const struct backend_config *o = b->cfg;
	const pid_t *ids = o->nr_pids ? o->pids : o->tids;
	int nr_ids = o->nr_pids ? o->nr_pids : o->nr_tids;
	int fd = bpf_map__fd(b->skel->maps.filter_ids);
	/* Named by records, tasks are filtered by -p/-L once renamed, in the pipeline. */
	bool by_ids = !b->nsids;
	__u8 one = 1;

	for (int i = 0; i < nr_ids; i++) {
		__u32 id = (__u32)ids[i];

		if (bpf_map_update_elem(fd, &id, &one, BPF_ANY))
			return -errno;
	}
	b->config.flags |= (o->user_stacks ? PROFILE_CFG_USER_STACK : 0) |
			  (o->kernel_stacks ? PROFILE_CFG_KERNEL_STACK : 0) |
			  (o->include_idle ? PROFILE_CFG_INCLUDE_IDLE : 0) |
			  (o->nr_pids && by_ids ? PROFILE_CFG_FILTER_TGID : 0) |
			  (o->nr_tids && by_ids ? PROFILE_CFG_FILTER_TID : 0) |
			  (o->nr_tids && !by_ids ? PROFILE_CFG_KEY_TID : 0) |
			  (b->cg_mode == CGROUP_MODE_TABLE ? PROFILE_CFG_CGROUP_MEMBERS : 0);
	b->config.active_counts = 0;
	return write_config(b);
}

/*
 * -p/-L: cpu-clock events per thread and CPU, inherited by the threads it
 * starts, exactly as the perf backend opens them, so that both backends
 * sample by the same clock: the task's own, where per-CPU events fire on
 * the CPU's ticks and catch a kernel-heavy program elsewhere (find's
 * getdents path 9.6% of samples per-CPU, 7.5% per-task, in one run). Per
 * CPU too, not one event following the thread: each event keeps its own
 * period, and after a migration one per CPU takes up the phase the perf
 * backend's does (with one event per thread, stacks of a program pinned
 * by its loop drifted 2-3 points apart between backends). The program
 * still filters. 0 when the events should be per CPU only: no -p/-L, a
 * cgroup or a launch, or too many threads for an event each.
 */
static int task_events(const struct backend *b, pid_t **tids, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	int nr;

	*tids = NULL;
	if (c->nr_cgroups || b->target > 0 || !(c->nr_pids || c->nr_tids))
		return 0;
	nr = ring_set__task_list(c, tids);
	if (nr == 0 || nr == -ESRCH) {
		errmsg__set(errm, "bpf: no thread of the given processes is left");
		return -ESRCH;
	}
	if (nr < 0) {
		errmsg__set(errm, "bpf: listing the given processes' threads: %s", strerror(-nr));
		return nr;
	}
	if (nr > RING_SET_MAX_TASK_EVENTS) {
		free(*tids);
		*tids = NULL;
		return 0;
	}
	return nr;
}

/* One event of attach_events; a thread gone since it was listed is -ESRCH. */
static int open_event(const struct backend *b, struct perf_event_attr *attr, int cpu,
		      int cgroup_fd, pid_t tid)
{
	if (cgroup_fd >= 0)
		return sys_perf_event_open(attr, cgroup_fd, cpu, -1,
					   PERF_FLAG_FD_CLOEXEC | PERF_FLAG_PID_CGROUP);
	if (tid > 0) {
		attr->inherit = 1;
		return sys_perf_event_open(attr, tid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	}
	return sys_perf_event_open(attr, b->target > 0 ? b->target : -1, cpu, -1,
				   PERF_FLAG_FD_CLOEXEC);
}

/*
 * The cpu-clock events the program runs on: per CPU and thread of -p/-L
 * (see task_events), else one per CPU, or per CPU and --cgroup directory: on a
 * cgroup (PERF_FLAG_PID_CGROUP) the event, and so the program, fires only
 * while a task of that cgroup or of one below it runs. The program cannot
 * ask itself in the interrupt it runs in (see bpf/cgroup.bpf.h); where
 * perf events cannot follow the cgroups, it looks the thread up in the
 * table (backend-bpf/cgtrack.h), on one event per CPU.
 */
static int attach_events(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *c = b->cfg;
	int prog_fd = b->dwarf	       ? bpf_dwarf__prog_fd(b->dwarf)
		      : b->idmap_prog ? bpf_program__fd(b->idmap_prog)
		      : b->pidns      ? bpf_program__fd(b->pidns->progs.profile_sample_pidns)
		      : b->nsids      ? bpf_nsids__prog_fd(b->nsids)
				      : bpf_program__fd(b->skel->progs.profile_sample);
	struct perf_event_attr attr;
	int *cpus = NULL, nr, per_cpu, nr_tids, gone = 0, err = 0;
	bool on_cgroups;
	pid_t *tids;
	char why[256] = "";

	nr_tids = task_events(b, &tids, errm);
	if (nr_tids < 0)
		return nr_tids;
	nr = ring_set__cpus(c, &cpus);
	if (nr < 0) {
		free(tids);
		errmsg__set(errm, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	on_cgroups = b->cg_mode == CGROUP_MODE_EVENTS;
	per_cpu = nr_tids ? nr_tids : on_cgroups ? c->nr_cgroups : 1;
	b->event_fds = calloc((size_t)nr * per_cpu, sizeof(*b->event_fds));
	if (!b->event_fds) {
		free(cpus);
		free(tids);
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	for (int i = 0; i < nr * per_cpu && !err; i++) {
		int cpu = cpus[i / per_cpu], fd;

		ring_set__cpu_clock_attr(&attr, c, b->target > 0);
		fd = open_event(b, &attr, cpu, on_cgroups ? c->cgroups[i % per_cpu].fd : -1,
				tids ? tids[i % per_cpu] : 0);
		if (fd == -ESRCH && tids) {
			gone++;		/* exited since it was listed */
			continue;
		}
		if (fd < 0) {
			perf_open_error(fd, b->target <= 0 && !tids, why, sizeof(why));
			errmsg__set(errm, "%s (%s %d)", why, tids ? "thread" : "CPU",
				    tids ? (int)tids[i % per_cpu] : cpu);
			err = fd;
			break;
		}
		b->event_fds[b->nr_events++] = fd;
		/* The raw ioctl, not a libbpf link: enabling is ours (enable_on_exec). */
		if (ioctl(fd, PERF_EVENT_IOC_SET_BPF, prog_fd)) {
			err = -errno;
			errmsg__set(errm, "bpf: attaching to the cpu-clock event of %s %d: %s",
				    tids ? "thread" : "CPU", tids ? (int)tids[i % per_cpu] : cpu,
				    strerror(-err));
		}
	}
	if (!err && tids && gone == nr * nr_tids) {
		errmsg__set(errm, "bpf: no thread of the given processes is left");
		err = -ESRCH;
	}
	if (!err && tids)
		pr_info("bpf: sampling %d thread(s) of the given processes\n",
			nr_tids - gone / (nr ? nr : 1));
	free(cpus);
	free(tids);
	return err;
}

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
static const uint64_t *cached_stack(void *ctx, int32_t id);

/*
 * How long a generation takes to reach its drain point at this sample rate
 * on every CPU, within [MIN_POLL_MS, the run loop's interval].
 */
static int poll_interval(const struct backend_config *o, unsigned int stack_size)
{
	int nr_cpus = o->cpu >= 0 ? 1 : libbpf_num_possible_cpus();
	double per_cpu = o->frequency ? o->frequency : o->period ? 1e9 / o->period : 1;
	double keys = stack_size / 2.0 / STACK_FILL_DIV;
	double ms = keys * 1000.0 / (per_cpu * (nr_cpus > 0 ? nr_cpus : 1));

	if (ms < MIN_POLL_MS)
		return MIN_POLL_MS;
	return ms > DRAIN_PERIOD_MS ? DRAIN_PERIOD_MS : (int)ms;
}

/*
 * A profiler inside a pid namespace names tasks by their ids there: the
 * counting program's 5.7 variant asks the kernel for them; before 5.7 the
 * records' variant has the kernel write them into perf records
 * (nsids.h). The stack-copy program has them only in its 5.15 variant.
 */
static int open_pidns(struct backend *b, uint64_t dev, uint64_t ino, struct errmsg *errm)
{
	int err;

	if (b->dwarf && !bpf_dwarf__has_task_regs(b->dwarf)) {
		errmsg__set(errm, "bpf: %s", PIDNS_DWARF_WHY);
		return -EOPNOTSUPP;
	}
	if (!b->dwarf && (bpf_nsids__test_force || !(b->pidns = bpf_load__pidns_program(b->skel)))) {
		b->nsids = bpf_nsids__open(b->skel, b->cfg->nr_tids > 0);
		if (!b->nsids) {
			err = -errno;
			errmsg__set(errm, "bpf: " PIDNS_WHY, strerror(-err));
			return err;
		}
		pr_info("bpf: in pid namespace %llu: tasks are named by their ids there, which "
			"the kernel writes into perf records (without bpf_get_ns_current_pid_tgid, "
			"Linux 5.7)\n", (unsigned long long)ino);
		return 0;
	}
	b->config.flags |= PROFILE_CFG_PIDNS;
	b->config.pidns_dev = dev;
	b->config.pidns_ino = ino;
	pr_info("bpf: in pid namespace %llu: tasks are named by their ids there\n",
		(unsigned long long)ino);
	return 0;
}

/* The stack-copy program on the counting program's maps; NULL with errno set. */
static struct bpf_dwarf *open_dwarf(struct backend *b, bool task_regs, struct errmsg *errm)
{
	struct bpf_dwarf_opts dopts = {
		.pipeline = b->pipeline, .cfg = b->cfg, .counting = b->skel,
		.nr_cpus = b->nr_cpus, .task_regs_wanted = task_regs,
		.lookup = cached_stack, .lookup_ctx = b,
		/*
		 * System-wide, one reader for both: a second ring set cost
		 * its own thread and wakeups, and its 128 KiB rings lost
		 * records in fork storms that the 4 MiB ones hold.
		 */
		.track_tasks = b->target <= 0,
	};
	struct bpf_dwarf *d;

	if (!dopts.track_tasks)
		dopts.reserved_pages = (uint64_t)(SIDEBAND_PAGES + 1) * b->nr_cpus;
	d = bpf_dwarf__open(&dopts, errm);
	if (d)
		b->config.dump_chunks = bpf_dwarf__chunks(b->cfg->stack_dump_size,
							  bpf_dwarf__piece(d));
	return d;
}

/*
 * The counting program, and with --unwind dwarf the stack-copy program on
 * its maps. The copy program of 5.15 sends kernel stacks in its records:
 * then the stack maps are made as small as can be (the 16384 stacks of a
 * long run took a tenth of a short run's CPU to create), and made again at
 * full size if that variant is refused after all.
 */
static int load_counting(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	bool dwarf = o->dwarf && o->user_stacks;
	bool task_regs = dwarf && !o->test_no_task_regs && bpf_dwarf__task_regs_supported();

	for (;;) {
		b->skel = load_sized(b, (unsigned int)(o->nr_pids + o->nr_tids), task_regs, errm);
		if (!b->skel)
			return -errno;
		b->counts_fd[0] = bpf_map__fd(b->skel->maps.counts0);
		b->counts_fd[1] = bpf_map__fd(b->skel->maps.counts1);
		stack_cache__init(&b->stacks[0], bpf_map__fd(b->skel->maps.stacks));
		stack_cache__set_overflow(&b->stacks[0], bpf_map__fd(b->skel->maps.overflow0));
		stack_cache__init(&b->stacks[1], bpf_map__fd(b->skel->maps.stacks1));
		stack_cache__set_overflow(&b->stacks[1], bpf_map__fd(b->skel->maps.overflow1));
		b->poll_ms = poll_interval(o, b->stack_size);
		b->stats_fd = bpf_map__fd(b->skel->maps.stats);
		b->config_fd = bpf_map__fd(b->skel->maps.config);
		if (!dwarf)
			return 0;
		b->dwarf = open_dwarf(b, task_regs, errm);
		if (!b->dwarf)
			return -errno;
		b->kstacks_inline = bpf_dwarf__has_task_regs(b->dwarf);
		if (b->kstacks_inline || !task_regs)
			return 0;
		pr_debug("bpf: the stack-copy program of 5.15 was refused: loading the stack maps "
			 "at full size for the older one\n");
		bpf_dwarf__close(b->dwarf);
		b->dwarf = NULL;
		stack_cache__fini(&b->stacks[0]);
		stack_cache__fini(&b->stacks[1]);
		profile_bpf__destroy(b->skel);
		b->skel = NULL;
		task_regs = false;
	}
}

/* The counting program on cpu-clock events: on-CPU stacks. */
static int open_counting(struct backend *b, struct errmsg *errm)
{
	const struct backend_config *o = b->cfg;
	uint64_t ns_dev, ns_ino;
	bool in_pidns = pidns__in_child(&ns_dev, &ns_ino);
	char why[512] = "";
	int err;

	err = cgtrack__mode(o, in_pidns, why, sizeof(why));
	if (err < 0) {
		errmsg__set(errm, "bpf: %s", why);
		return err;
	}
	b->cg_mode = err;
	if (b->cg_mode == CGROUP_MODE_TABLE)
		pr_info("bpf: --cgroup: %s; the sampling program looks threads up in a table that "
			"sched_switch keeps instead\n", why);
	err = load_counting(b, errm);
	if (err)
		return err;
	if (in_pidns) {
		err = open_pidns(b, ns_dev, ns_ino, errm);
		if (err)
			return err;
	}
	if (idmaps__filters(o)) {
		err = bpf_load__idmap_program(b->skel, o, &b->idmap, &b->mntns, &b->idmap_prog);
		if (err) {
			idmaps__refused(o, "program", err, why, sizeof(why));
			errmsg__set(errm, "bpf: %s", why);
			return err;
		}
		pr_info("bpf: counting program %s: keeps tasks whose ids are in bcc's pinned "
			"map(s)\n", bpf_program__name(b->idmap_prog));
	}
	err = setup_maps(b);
	if (err) {
		errmsg__set(errm, "bpf: writing the settings map: %s", strerror(-err));
		return err;
	}
	err = attach_events(b, errm);
	if (!err && b->dwarf && b->kstacks_inline)
		pr_info("bpf: %d event(s); kernel stacks in the stack copies' records\n",
			b->nr_events);
	else if (!err && b->dwarf)
		pr_info("bpf: %d event(s); maps: %u + %u stacks\n", b->nr_events, b->stack_size,
			bpf_load__overflow_size(b->stack_size));
	else if (!err)
		pr_info("bpf: %d event(s); maps: 2 x (%u + %u) stacks, 2 x %u counts; fill looked "
			"at every %d ms\n",
			b->nr_events, b->stack_size, bpf_load__overflow_size(b->stack_size),
			b->hash_size, b->poll_ms);
	return err;
}

/* The threads in the cgroups now; the programs keep the table from here on. */
static int fill_cgroup_table(struct backend *b, struct errmsg *errm)
{
	char why[512] = "";
	uint64_t full;
	int n = cgtrack__fill(bpf_map__fd(b->skel->maps.cg_members), b->cfg, &full, why,
			      sizeof(why));

	if (n < 0) {
		errmsg__set(errm, "%s", why);
		return n;
	}
	pr_info("bpf: --cgroup: %d thread(s) in the cgroups at the start%s\n", n,
		full ? ", some not: the table is full" : "");
	b->cgroup_full_at_start = full;
	return 0;
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
	b->nr_cpus = libbpf_num_possible_cpus();
	if (b->nr_cpus <= 0) {
		errmsg__set(errm, "bpf: cannot tell the number of possible CPUs");
		free(b);
		return -EINVAL;
	}
	if (o->on_cpu)
		err = open_counting(b, errm);
	if (!err && (o->off_cpu || b->cg_mode == CGROUP_MODE_TABLE))
		err = bpf_offcpu__open(&b->offcpu, o, p,
				       b->cg_mode == CGROUP_MODE_TABLE
					       ? bpf_map__fd(b->skel->maps.cg_members) : -1,
				       errm);
	if (!err && b->cg_mode == CGROUP_MODE_TABLE)
		err = fill_cgroup_table(b, errm);
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

static int bpf_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	struct ring_set *sets[2];
	int nr = 0;

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
	return ring_set__wait_sets(sets, nr, wake_fd, timeout_ms);
}

static uint64_t read_stat(struct backend *b, enum profile_stat slot)
{
	return percpu_stat(b->stats_fd, slot, b->nr_cpus);
}

static const uint64_t *cached_stack(void *ctx, int32_t id)
{
	struct backend *b = ctx;

	return stack_cache__get(&b->stacks[0], id);
}

struct drain_ctx {
	struct backend *b;
	struct stack_cache *stacks;	/* the drained generation's */
};

static int add_entry(struct backend *b, struct stack_cache *sc, const struct profile_key *key,
		     uint64_t count)
{
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	const uint64_t *kstack, *ustack;
	struct profile_key named;
	struct sample s;

	if (b->nsids) {
		named = *key;
		if (nsid_names__rename(bpf_nsids__names(b->nsids), &named.tgid, &named.tid,
				       count) <= 0)
			return 0;	/* outside the namespace, or not named: counted */
		key = &named;
	}
	kstack = stack_cache__get(sc, key->kernel_stack_id);
	ustack = stack_cache__get(sc, key->user_stack_id);
	bpf_convert__sample(key, count, kstack, ustack, kbuf, &s);
	return pipeline__add(b->pipeline, &s);
}

static int add_entry_cb(void *ctx, const void *key, uint64_t count)
{
	struct drain_ctx *dc = ctx;

	return add_entry(dc->b, dc->stacks, key, count);
}

/* Move every entry of generation gen's count map into the pipeline, and empty the map. */
static int drain_counts(struct backend *b, unsigned int gen)
{
	/* The names of the tasks counted, all sent before their counts. */
	int err = b->nsids ? nsid_names__consume(bpf_nsids__names(b->nsids)) : 0;

	if (err)
		return err;
	set_window(b, b->gen_since[gen]);
	struct countmap cm = { .fd = b->counts_fd[gen], .key_size = sizeof(struct profile_key),
			       .no_batch = &b->no_batch };
	struct drain_ctx dc = { .b = b, .stacks = &b->stacks[gen] };

	return countmap__drain(&cm, add_entry_cb, &dc);
}

/* Drain generation gen, then empty its stack maps for its next turn. */
static int drain_generation(struct backend *b, unsigned int gen)
{
	int err = drain_counts(b, gen), left;

	if (err)
		return err;
	left = stack_cache__clear(&b->stacks[gen]);
	if (left < 0)
		return left;
	b->orphan_stacks += (uint64_t)left;
	return 0;
}

/* Longest wait for a run in flight (a vCPU the host preempted mid-run), in 100 µs steps. */
#define MAX_RUN_WAITS 10000

/*
 * Wait until every counting-program run that began before now has ended:
 * after a switch, no run still counts into the old generation (a count
 * added to an entry the drain has just taken and deleted would be lost,
 * with its statistics kept); after stop, the statistics read next agree
 * with the counts. Each CPU's runs are counted as they start (SAMPLES,
 * before they read the generation) and end (RUNS_DONE, after their count),
 * and one CPU's runs do not overlap: the run that began n-th has ended when
 * RUNS_DONE reaches n.
 */
static int wait_runs(struct backend *b)
{
	uint64_t *began = calloc(b->nr_cpus, sizeof(*began));
	uint64_t *ended = calloc(b->nr_cpus, sizeof(*ended));
	struct timespec step = { 0, 100000 };
	int err = began && ended ? 0 : -ENOMEM;

	if (!err)
		err = percpu_values(b->stats_fd, PROFILE_STAT_SAMPLES, b->nr_cpus, began);
	for (int waits = 0; !err; waits++) {
		int cpu = 0;

		err = percpu_values(b->stats_fd, PROFILE_STAT_RUNS_DONE, b->nr_cpus, ended);
		while (!err && cpu < b->nr_cpus && ended[cpu] >= began[cpu])
			cpu++;
		if (err || cpu == b->nr_cpus)
			break;
		if (waits == MAX_RUN_WAITS) {
			pr_warn("bpf: a program run on CPU %d has not ended in %d ms\n", cpu,
				MAX_RUN_WAITS / 10);
			break;
		}
		nanosleep(&step, NULL);
	}
	free(began);
	free(ended);
	return err;
}

/* Point the program at the other map, let running samples finish, drain the old one. */
static int switch_and_drain(struct backend *b)
{
	unsigned int old = b->config.active_counts;
	struct timespec grace = { 0, 2000000 };
	int err;

	b->config.active_counts = !old;
	b->gen_since[!old] = (uint64_t)mono_ns();
	err = write_config(b);
	if (err)
		return err;
	/*
	 * A program run is microseconds: 2 ms makes the start of every run that
	 * read the old generation visible here; those still running are waited out.
	 */
	nanosleep(&grace, NULL);
	err = wait_runs(b);
	if (err)
		return err;
	/*
	 * Every exec and fork before the switch is known before its counts are
	 * read, also those the reader thread has not copied yet: a child's
	 * counts from before its fork record was read were left out as not the
	 * command's (the report one sample short of the stack-lost statistics).
	 */
	err = ring_set__drain_now(b->sideband);
	if (err)
		return err;
	b->drains++;
	pr_debug("bpf: draining generation %u\n", old);
	return drain_generation(b, old);
}

/* After stop: the last mappings first, then every record and both count maps. */
static int drain_all(struct backend *b)
{
	int err = b->sideband ? ring_set__drain(b->sideband) : 0;

	if (!err && b->dwarf) {
		set_window(b, b->dwarf_since);
		err = bpf_dwarf__drain(b->dwarf);
	}
	/* Stopped: the counts and then the statistics are read with no run in flight. */
	if (!err && b->skel && !b->dwarf)
		err = wait_runs(b);
	/* The maps are not cleared: the dwarf program's stacks are read after this. */
	if (!err && b->skel)
		err = drain_counts(b, 0);
	if (!err && b->skel)
		err = drain_counts(b, 1);
	if (!err && b->offcpu) {
		set_window(b, b->started_ns);
		err = bpf_offcpu__drain(b->offcpu);
	}
	return err;
}

/* The stack copies taken since the last drain. */
static int drain_dwarf(struct backend *b)
{
	uint64_t since = b->dwarf_since;

	b->dwarf_since = (uint64_t)mono_ns();
	set_window(b, since);
	return bpf_dwarf__drain(b->dwarf);
}

static int bpf_drain(struct backend *b)
{
	uint64_t new_keys;
	int err;

	if (b->stopped)
		return drain_all(b);
	/* Without side-band rings of its own, the stack copies' carry the mappings: first. */
	err = b->sideband ? ring_set__drain(b->sideband) : drain_dwarf(b);
	if (!err && b->offcpu) {
		set_window(b, b->started_ns);
		err = bpf_offcpu__drain(b->offcpu);
	}
	if (err || !b->skel)
		return err;
	if (b->dwarf)
		return b->sideband ? drain_dwarf(b) : 0;
	new_keys = read_stat(b, PROFILE_STAT_NEW_KEYS) - b->new_keys_at_switch;
	if (new_keys >= b->hash_size / 2 ||
	    (new_keys && new_keys * 2 >= b->stack_size / STACK_FILL_DIV) ||
	    mono_ms() - b->last_switch_ms >= DRAIN_PERIOD_MS) {
		b->new_keys_at_switch += new_keys;
		b->last_switch_ms = mono_ms();
		return switch_and_drain(b);
	}
	return 0;
}

static void bpf_stop(struct backend *b)
{
	if (b->offcpu)
		bpf_offcpu__stop(b->offcpu);
	for (int i = 0; i < b->nr_events; i++)
		ioctl(b->event_fds[i], PERF_EVENT_IOC_DISABLE, 0);
	if (b->dwarf)
		bpf_dwarf__stop(b->dwarf);
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
	if (b->offcpu)
		bpf_offcpu__stats(b->offcpu, st);
	st->cgroup_untracked += b->cgroup_full_at_start;
	st->pidns_unnamed += b->nsids ? nsid_names__unnamed(bpf_nsids__names(b->nsids)) : 0;
	if (!b->skel)
		return;
	full = read_stat(mb, PROFILE_STAT_HASH_FULL);
	st->samples = read_stat(mb, PROFILE_STAT_SAMPLES);
	st->lost = full;
	st->lost_reason = LOST_COUNT_MAP_FULL;
	st->hash_full |= full > 0;
	st->drains += b->drains;
	st->hash_storage_size = b->hash_size;
	st->stack_storage_size = b->stack_size;
	st->user_stacks_lost = read_stat(mb, PROFILE_STAT_USER_STACK_LOST);
	st->kernel_stacks_lost = read_stat(mb, PROFILE_STAT_KERNEL_STACK_LOST);
	st->stack_overflows = read_stat(mb, PROFILE_STAT_STACK_OVERFLOWED);
	st->stacks_no_room = read_stat(mb, PROFILE_STAT_STACK_NOMEM);
	st->orphan_stacks = b->orphan_stacks;
	st->stale_stacks = b->stacks[0].stale + b->stacks[1].stale;
	if (b->dwarf) {
		uint64_t lost = bpf_dwarf__lost(b->dwarf);

		st->lost += lost;
		if (lost)
			st->lost_reason = LOST_PERF_BUFFER_FULL;
		st->malformed_records += bpf_dwarf__bad_records(b->dwarf);
		st->fp_fallbacks = read_stat(mb, PROFILE_STAT_NO_USER_REGS);
	}
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
	bpf_offcpu__close(b->offcpu);
	profile_pidns_bpf__destroy(b->pidns);
	bpf_nsids__close(b->nsids);
	profile_idmap_bpf__destroy(b->idmap);
	profile_mntns_bpf__destroy(b->mntns);
	free(b->event_fds);
	profile_bpf__destroy(b->skel);
	free(b);
}

const struct backend_ops bpf_backend_ops = {
	.name = "bpf",
	.probe = bpf_probe,
	.open = bpf_open,
	.start = bpf_start,
	.wait = bpf_wait,
	.drain = bpf_drain,
	.stop = bpf_stop,
	.stats = bpf_stats,
	.close = bpf_close,
};
