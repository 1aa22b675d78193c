// SPDX-License-Identifier: GPL-2.0
/*
 * One run: choose a backend, open everything, sample until the duration
 * ends, a signal arrives or the command exits, then resolve the profile
 * once and hand it to the writer of the format asked for. struct run owns
 * every resource and frees them on every path.
 */
#include "core/run/run.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "compat/cpus.h"
#include "compat/features.h"
#include "compat/kallsyms.h"
#include "core/agg/pipeline.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "core/run/launch.h"
#include "core/lib/log.h"
#include "core/model/resolve.h"
#include "core/output/writer.h"
#include "core/run/choose.h"
#include "core/run/filters.h"
#include "core/run/outfile.h"
#include "core/run/progress.h"
#include "core/run/signals.h"
#include "core/sym/symbolize.h"
#include "unwind/unwind.h"

/* Drain at least this often, so that /proc is read while processes live. */
#define DRAIN_INTERVAL_MS 100
/* Between drains, frames are resolved for the report, a little at a time. */
#define PREPARE_BUDGET_MS 20

struct run {
	struct run_opts eff;		/* what runs: may differ from what was asked (user only) */
	struct backend_config cfg;
	struct outfile out;
	const struct backend_ops *ops;
	struct backend *backend;
	struct pipeline pipeline;
	bool pipeline_ready;
	struct symbolizer *sym;
	struct resolver *resolver;
	size_t released_images;		/* of ended processes, let go while sampling (-v) */
	size_t freed_images;		/* and of those, freed */
	struct unwinder *unwinder;
	struct launch child;
	bool launched;
	struct run_filters filters;	/* --cgroup, --cgroupmap, --mntnsmap */
	/*
	 * --wall without kernel samples and without -U: the kernel part of a
	 * stack stays, for the placeholder of time the kernel withheld.
	 */
	bool kernel_placeholder;
	uint64_t start_ns;		/* wall clock at the start */
	int64_t t_start, t_end;		/* monotonic ms */
	struct progress progress;	/* the line on a terminal during a timed run */
	void *reserve;			/* address space given back when memory runs out */
	bool oom;			/* memory ran out: sampling stopped, the report is partial */
};

/*
 * Out of memory mid-run (an RLIMIT_AS, vm.overcommit_memory=2), what was
 * counted is still worth a report: a reserve of address space, mapped at the
 * start and never touched (no RSS), is given back so that resolving and
 * writing what was counted can allocate.
 */
#define OOM_RESERVE_BYTES (16u << 20)

static void *reserve_memory(void)
{
	void *p = mmap(NULL, OOM_RESERVE_BYTES, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void out_of_memory(struct run *r)
{
	if (r->reserve)
		munmap(r->reserve, OOM_RESERVE_BYTES);
	r->reserve = NULL;
	r->oom = true;
}

static bool cpu_is_online(int cpu)
{
	int *cpus = NULL, nr = cpus__online(&cpus);
	bool found = false;

	for (int i = 0; i < nr; i++)
		found |= cpus[i] == cpu;
	free(cpus);
	return found || nr < 0;
}

/*
 * bpf map memory for these sizes: two generations of stack maps (each with an
 * overflow map of an eighth) with values of 127 ips, count entries with overhead.
 */
static uint64_t map_bytes(const struct run_opts *o)
{
	return (uint64_t)o->stack_storage_size * 9 / 4 * (MAX_STACK_DEPTH * 8 + 32) +
	       2ULL * o->hash_storage_size * 128;
}

/*
 * What the kernel would refuse, or could only grant by stalling the machine,
 * is a usage error now: not a failure (or a livelock) later.
 */
static int check_limits(const struct run_opts *o)
{
	unsigned int max_rate = perf_event_max_sample_rate();
	uint64_t avail = mem_available_bytes();

	if (o->frequency > max_rate) {
		pr_warn("argument -F/--frequency: %u Hz is above kernel.perf_event_max_sample_rate "
			"(%u)\n",
			o->frequency, max_rate);
		return -EINVAL;
	}
	if (o->period && o->period < 1000000000ULL / max_rate) {
		pr_warn("argument -c/--count: %llu ns is shorter than "
			"kernel.perf_event_max_sample_rate (%u per second) allows: at least %llu\n",
			(unsigned long long)o->period, max_rate, 1000000000ULL / max_rate);
		return -EINVAL;
	}
	if (o->backend != BACKEND_PERF && avail && map_bytes(o) > avail / 2) {
		pr_warn("argument --stack-storage-size/--hash-storage-size: %u stacks and %u counts "
			"need %.1f GB of kernel memory, more than half of what is available (%.1f "
			"GB)\n",
			o->stack_storage_size, o->hash_storage_size, map_bytes(o) / 1e9, avail / 1e9);
		return -EINVAL;
	}
	return 0;
}

/* Ctrl-C or SIGTERM during set-up ends the run there, without a report. */
static bool interrupted(void)
{
	if (!signals__stop_requested())
		return false;
	pr_warn("interrupted during set-up; no report\n");
	return true;
}

/* What a backend needs of the options. */
static void backend_config_of(const struct run_opts *o, struct backend_config *c)
{
	*c = (struct backend_config){
		.frequency = o->frequency,
		.period = o->period,
		.cpu = o->cpu,
		.pids = o->pids,
		.nr_pids = o->nr_pids,
		.tids = o->tids,
		.nr_tids = o->nr_tids,
		.launch = o->command != NULL,
		.user_stacks = !o->kernel_only,
		.kernel_stacks = !o->user_only,
		.user_mode_only = o->no_kernel_access,
		.include_idle = o->include_idle,
		.on_cpu = run_opts__on_cpu(o),
		.off_cpu = run_opts__off_cpu(o),
		.min_block_us = o->min_block_us,
		.max_block_us = o->max_block_us,
		.state = o->state,
		.threads_user_only = o->threads == THREADS_USER,
		.threads_kernel_only = o->threads == THREADS_KERNEL,
		.hash_storage_size = o->hash_storage_size,
		.stack_storage_size = o->stack_storage_size,
		.dwarf = run_opts__dwarf(o),
		.stack_dump_size = o->stack_dump_size,
		.test_no_task_regs = o->test_no_task_regs,
	};
}

static unsigned int unwind_snapshot(void *ctx, const struct addr_space *as,
				    const struct user_snapshot *snap, uint64_t *ips,
				    unsigned int max)
{
	struct unwind_regs regs = { .ip = snap->ip, .sp = snap->sp, .bp = snap->bp };

	if (!snap->stack && snap->pieces)
		return unwinder__unwind_pieces(ctx, as, &regs, snap->pieces, snap->piece_lens,
					       snap->nr_pieces, snap->stack_size, ips, max);
	return unwinder__unwind(ctx, as, &regs, snap->stack, snap->stack_size, ips, max);
}

static void print_unwind_mode(const struct run_opts *o)
{
	if (run_opts__dwarf(o))
		pr_info("unwind: dwarf (.eh_frame over a %u-byte copy of each user stack, in user "
			"space)\n",
			o->stack_dump_size);
	else
		pr_info("unwind: frame pointers (callchains taken by the kernel)\n");
}

/* Choose the backend; what it cannot do changes what runs (user stacks only). */
static int choose(struct run *r, const struct backend_ops *const *backends)
{
	static const char *const names[] = { [BACKEND_BPF] = "bpf", [BACKEND_PERF] = "perf" };
	struct backend_plan plan;

	backend_config_of(&r->eff, &r->cfg);
	run_filters__config(&r->filters, &r->cfg);
	r->ops = choose_backend(r->eff.backend == BACKEND_AUTO ? NULL : names[r->eff.backend],
				backends, &r->cfg, &plan);
	if (!r->ops)
		return -ENOENT;
	if (plan.user_mode_only) {
		r->kernel_placeholder = r->eff.mode == MODE_WALL && !r->eff.user_only;
		/* What a user without privileges can have: their own user stacks. */
		r->eff.user_only = true;
		r->eff.kernel_only = false;
		r->eff.no_kernel_access = true;
		backend_config_of(&r->eff, &r->cfg);
		run_filters__config(&r->filters, &r->cfg);
	}
	print_unwind_mode(&r->eff);
	return 0;
}

static int set_up(struct run *r)
{
	const struct run_opts *o = &r->eff;
	struct pipeline_config pc = {
		.pids = o->pids,
		.nr_pids = o->nr_pids,
		.tids = o->tids,
		.nr_tids = o->nr_tids,
		/* Off-CPU time of the idle task is the time the CPU had nothing else to do. */
		.include_idle = o->include_idle && o->mode == MODE_ON_CPU,
		.skip_user_threads = o->threads == THREADS_KERNEL,
		.skip_kernel_threads = o->threads == THREADS_USER,
		.user_stacks = !o->kernel_only,
		.kernel_stacks = !o->user_only || r->kernel_placeholder,
		/* Off-CPU time belongs to a thread: bcc's offcputime keys by it. */
		.by_thread = o->mode != MODE_ON_CPU,
		.launched = o->command != NULL,
	};
	static const enum profile_kind kinds[] = {
		[MODE_ON_CPU] = PROFILE_ON_CPU,
		[MODE_OFF_CPU] = PROFILE_OFF_CPU,
		[MODE_WALL] = PROFILE_WALL,
	};
	struct resolve_spec spec = {
		.kind = kinds[o->mode],
		.user_frames = !o->kernel_only,
		.kernel_frames = !o->user_only || r->kernel_placeholder,
		/* cpu-clock counts nanoseconds: a sample stands for its period. */
		.period_ns = o->frequency ? 1000000000ULL / o->frequency : o->period,
		/* pprof has a place for source lines and inlined calls: fill it when DWARF allows. */
		.source_lines = o->format == FORMAT_PPROF,
		.inline_frames = o->inline_frames,
		/* Where no address is printed, one frame per offset of a file, whatever the process. */
		.frames_by_file = o->format != FORMAT_PPROF && !o->addresses && !o->raw_addresses,
	};

	if (run_opts__off_cpu(o) && !o->user_only &&
	    kallsyms__range("/proc/kallsyms", "__schedule", &pc.sched_start, &pc.sched_end))
		pr_info("__schedule is not in /proc/kallsyms: off-CPU kernel stacks keep the "
			"tracing path's frames\n");
	if (pipeline__init(&r->pipeline, &pc))
		return -ENOMEM;
	r->pipeline_ready = true;
	r->sym = symbolizer__new();
	r->resolver = r->sym ? resolver__new(r->sym, &spec) : NULL;
	if (!r->resolver)
		return -ENOMEM;
	if (run_opts__dwarf(o)) {
		r->unwinder = unwinder__new();
		if (!r->unwinder)
			return -ENOMEM;
		pipeline__set_unwind(&r->pipeline, unwind_snapshot, r->unwinder);
	}
	/* What the report needs anyway is read before sampling, not after it. */
	if (!o->user_only)
		symbolizer__preload_kernel(r->sym);
	return 0;
}

/*
 * Every SETTLE_INTERVAL_MS, images that ended more than SETTLE_GRACE_NS
 * before the newest record give back their mappings. Every sample is read
 * within a drain period (the bpf backend switches its count maps at least
 * every second): the grace is that many times over, for a reader left
 * unscheduled on a saturated host.
 */
#define SETTLE_INTERVAL_MS 5000
#define SETTLE_GRACE_NS (30 * 1000000000ULL)
/*
 * Symbol and unwind tables of a file not looked up for this long are freed
 * (they are read again when needed): on a host that keeps running new
 * binaries, a binary run once is given back a minute later, while a cc1 run
 * again and again costs one reading a minute at most.
 */
#define TABLES_IDLE_MS 60000

static void forget_space(void *ctx, const struct addr_space *as)
{
	symbolizer__forget_space(ctx, as);
}

/* Free the tables of files idle for TABLES_IDLE_MS (read again if needed). */
static void drop_idle_tables(struct run *r)
{
	symbolizer__drop_idle(r->sym, TABLES_IDLE_MS);
	if (r->unwinder)
		unwinder__drop_idle(r->unwinder, TABLES_IDLE_MS);
}

/*
 * Let go of what ended processes held, once nothing still to come can need
 * it. False when the model has stacks it has not looked at yet: they may
 * name images about to go, so the caller tries again after the next drain.
 */
static bool release_ended(struct run *r)
{
	struct proctrack *pt = r->pipeline.procs;

	if (!pt)
		return true;
	if (!resolver__caught_up(r->resolver, &r->pipeline.agg))
		return false;
	if (proctrack__settle(pt, SETTLE_GRACE_NS) && resolver__finish_settled(r->resolver,
									   &r->pipeline.agg)) {
		r->released_images += proctrack__release_settled(pt);
		/* Every stack naming them has its frames: nothing points at them any more. */
		r->freed_images += proctrack__free_released(pt, forget_space, r->sym);
	}
	return true;
}

/* With -v: what the tracker let go of per thread and pid, and what it holds. */
static void print_forgotten(const struct proctrack *pt)
{
	struct proctrack_counts c;

	if (!pt)
		return;
	proctrack__counts(pt, &c);
	if (c.forgotten_pids || c.forgotten_threads)
		pr_info("%zu pids and %zu threads of ended processes forgotten while sampling, "
			"%zu and %zu tracked\n", c.forgotten_pids, c.forgotten_threads, c.procs,
			c.comms);
}

/* With -v, a line a minute: how a long run grows, its stacks and the rest. */
#define STATUS_INTERVAL_MS 60000

static void print_status(struct run *r, int64_t elapsed_ms)
{
	size_t stacks = agg__bytes(&r->pipeline.agg) + resolver__stack_bytes(r->resolver);
	long pages = 0, resident = 0;
	struct proctrack_counts pc = { 0 };
	struct symbolizer_stats syms;
	struct unwind_stats unw = { 0 };
	struct backend_stats st;
	FILE *f;

	r->ops->stats(r->backend, &st);
	if (r->pipeline.procs)
		proctrack__counts(r->pipeline.procs, &pc);
	f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	symbolizer__stats(r->sym, &syms);
	if (r->unwinder)
		unwinder__stats(r->unwinder, &unw);
	pr_info("%lld s: %llu samples, %zu unique raw stacks (%.1f MB), RSS %.1f MB, tables of "
		"%zu+%zu files held (%llu+%llu dropped while idle), %zu pids and %zu threads "
		"tracked\n",
		(long long)(elapsed_ms / 1000), (unsigned long long)st.samples,
		agg__size(&r->pipeline.agg), stacks / 1048576.0,
		resident * (double)sysconf(_SC_PAGESIZE) / 1048576.0, syms.loaded, unw.images,
		(unsigned long long)syms.dropped, (unsigned long long)unw.images_dropped, pc.procs,
		pc.comms);
}

/* Sample until the duration ends, a signal arrives, or the command exits. */
static int sample_loop(struct run *r)
{
	const struct run_opts *o = &r->eff;
	int64_t start = mono_ms(), deadline = o->duration ? start + (int64_t)o->duration * 1000 : 0;
	int64_t next_status = start + STATUS_INTERVAL_MS, next_settle = start + SETTLE_INTERVAL_MS;
	int64_t next_sweep = next_settle;
	int err = 0;

	progress__init(&r->progress, o, mono_ms());
	for (;;) {
		int timeout = DRAIN_INTERVAL_MS;

		if (signals__stop_requested())
			break;
		if (r->launched && launch__poll(&r->child))
			break;
		if (deadline) {
			int64_t left = deadline - mono_ms();

			if (left <= 0)
				break;
			if (left < timeout)
				timeout = (int)left;
		}
		err = r->ops->wait(r->backend, signals__wake_fd(), timeout);
		if (err)
			break;
		signals__drain_wakeups();
		err = r->ops->drain(r->backend);
		if (err == -ENOMEM || r->pipeline.dropped_oom) {
			/* Stop counting; report what was counted. */
			out_of_memory(r);
			err = 0;
			break;
		}
		if (err)
			break;
		resolver__prepare(r->resolver, &r->pipeline.agg, PREPARE_BUDGET_MS);
		/* Not caught up at the tick (a busy host): the next drain tries again. */
		if (mono_ms() >= next_settle && release_ended(r))
			next_settle = mono_ms() + SETTLE_INTERVAL_MS;
		/* Apart from the settling, which a busy host may put off for many drains. */
		if (mono_ms() >= next_sweep) {
			drop_idle_tables(r);
			next_sweep = mono_ms() + SETTLE_INTERVAL_MS;
		}
		if (log_verbosity() >= LOG_INFO && mono_ms() >= next_status) {
			print_status(r, mono_ms() - start);
			next_status += STATUS_INTERVAL_MS;
		}
		if (r->progress.on) {
			struct backend_stats st;

			r->ops->stats(r->backend, &st);
			progress__update(&r->progress, &st, mono_ms());
		}
	}
	progress__clear(&r->progress);
	return err;
}

/* What was profiled, for titles: "command make", "PID [1, 2]", "all threads". */
static void describe_target(const struct run_opts *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->command) {
		n += snprintf(buf, len, "command");
		for (int i = 0; o->command[i] && n < len; i++)
			n += snprintf(buf + n, len - n, " %s", o->command[i]);
	} else if (o->nr_pids || o->nr_tids) {
		const pid_t *ids = o->nr_pids ? o->pids : o->tids;
		int nr = o->nr_pids ? o->nr_pids : o->nr_tids;

		n += snprintf(buf, len, "%s [", o->nr_pids ? "PID" : "TID");
		for (int i = 0; i < nr && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? ", " : "", (int)ids[i]);
		if (n < len)
			n += snprintf(buf + n, len - n, "]");
	} else {
		n += snprintf(buf, len, "all threads");
	}
	/* --cgroup narrows what is above: "all threads in cgroup /sys/fs/cgroup/x". */
	if (o->nr_cgroups && n < len)
		snprintf(buf + n, len - n, " in cgroup %s%s", o->cgroups[0],
			 o->nr_cgroups > 1 ? " and others" : "");
}

static int write_report(struct run *r, struct profile *prof, struct writer_printed *printed)
{
	static int (*const writers[])(FILE *, const struct profile *, const struct writer_opts *) = {
		[FORMAT_BCC] = writer__bcc,
		[FORMAT_FOLDED] = writer__folded,
		[FORMAT_SVG] = writer__svg,
		[FORMAT_PPROF] = writer__pprof,
	};
	const struct run_opts *o = &r->eff;
	struct writer_opts wo = { .delimited = o->delimited,
				  .annotations = o->annotations,
				  .addresses = o->addresses,
				  .offsets = o->offsets,
				  .raw_addresses = o->raw_addresses,
				  .printed = printed };
	char target[512], title[768];
	int64_t t0, t1;
	struct resolve_meta meta = {
		.start_ns = r->start_ns,
		.duration_ns = (uint64_t)(r->t_end - r->t_start) * 1000000,
		.title = title,
		.comment = target,
	};
	int err;

	describe_target(o, target, sizeof(target));
	if (o->mode == MODE_OFF_CPU)
		snprintf(title, sizeof(title), "off-CPU time of %s (%s backend, us, %.1f s)", target,
			 r->ops->name, (r->t_end - r->t_start) / 1000.0);
	else
		snprintf(title, sizeof(title), "%s of %s (%s backend, %s%llu %s, %.1f s)",
			 o->mode == MODE_WALL ? "wall-clock time" : "profile", target, r->ops->name,
			 o->frequency ? "" : "every ",
			 (unsigned long long)(o->frequency ? o->frequency : o->period),
			 o->frequency ? "Hz" : "events", (r->t_end - r->t_start) / 1000.0);
	t0 = mono_ms();
	err = resolver__build(r->resolver, &r->pipeline.agg, &meta, prof);
	/* The counts are in the profile now: their entries' memory serves the writer. */
	agg__forget_entries(&r->pipeline.agg);
	t1 = mono_ms();
	if (err == -ENOMEM) {
		/* What was built before memory ran out is a consistent, smaller profile. */
		out_of_memory(r);
		err = 0;
	}
	if (!err && interrupt__pending())
		err = -EINTR;
	if (!err) {
		off_t pos = r->out.path ? ftello(r->out.f) : -1;

		errno = 0;
		err = writers[o->format](r->out.f, prof, &wo);
		/*
		 * Memory ran out only now: with the reserve given back, once more, over
		 * what was written of our own file (stdout cannot be taken back).
		 */
		if (err == -ENOMEM && r->reserve && pos >= 0 && !fflush(r->out.f) &&
		    !ftruncate(fileno(r->out.f), pos) && !fseeko(r->out.f, pos, SEEK_SET)) {
			out_of_memory(r);
			clearerr(r->out.f);
			errno = 0;
			err = writers[o->format](r->out.f, prof, &wo);
		}
	}
	pr_debug("timing: profile built in %lld ms, written in %lld ms\n", (long long)(t1 - t0),
		 (long long)(mono_ms() - t1));
	return err;
}

static const char *lost_reason(enum lost_reason why)
{
	switch (why) {
	case LOST_COUNT_MAP_FULL:
		return "the in-kernel count table was full";
	case LOST_PERF_BUFFER_FULL:
		return "the perf buffer of stack copies was full";
	default:
		return "the ring buffer was full; lower -F or profile fewer CPUs";
	}
}

/* Every warning about what the report lacks, one line each, on stderr. */
static void print_warnings(const struct run *r, const struct profile *prof,
			   const struct writer_printed *printed, const struct backend_stats *st)
{
	bool collision, full;
	uint64_t missed = profile__missed_stacks(prof, &collision, &full);

	/* As many as the report shows markers (see writer.h); the profile's if it was not written. */
	if (printed->missed_stacks != UINT64_MAX)
		missed = printed->missed_stacks;

	/* Each tool's own words: profile.py blames collisions, offcputime.py a full map. */
	if (missed && r->eff.mode == MODE_ON_CPU)
		fprintf(stderr, "WARNING: %" PRIu64 " stack traces could not be displayed.%s\n",
			missed, collision ? " Consider increasing --stack-storage-size." : "");
	else if (missed)
		fprintf(stderr, "WARNING: %" PRIu64 " stack traces lost and could not be "
				"displayed.%s\n",
			missed, collision || full ? " Consider increasing --stack-storage-size." : "");
	if (st->hash_full)
		fputs("WARNING: hash table full. Consider increasing --hash-storage-size.\n", stderr);
	if (st->lost)
		fprintf(stderr, "WARNING: %" PRIu64 " samples lost (of %" PRIu64 " seen): %s%s.\n",
			st->lost, st->lost + st->samples + st->switches, lost_reason(st->lost_reason),
			run_opts__dwarf(&r->eff) ? ", or lower --stack-dump-size" : "");
	if (st->sideband_lost)
		pr_warn("warning: %" PRIu64 " side-band records lost: the mappings of running "
			"processes were read again from /proc; processes that exited in the gap "
			"may print [unknown]\n",
			st->sideband_lost);
	if (r->pipeline.ambiguous_images)
		pr_warn("warning: %" PRIu64 " samples print [unknown] user frames: their process "
			"exec'd or its pid was reused while they were counted in the kernel, and "
			"the two images would name them differently\n",
			r->pipeline.ambiguous_images);
	if (r->pipeline.late_images)
		pr_warn("warning: %" PRIu64 " samples print [unknown] user frames: they were read "
			"more than %llu s after their process ended, when its mappings were let go\n",
			r->pipeline.late_images, SETTLE_GRACE_NS / 1000000000ULL);
	if (st->malformed_records)
		pr_warn("warning: %" PRIu64 " malformed records skipped\n", st->malformed_records);
	if (st->fp_fallbacks)
		pr_warn("warning: %" PRIu64 " samples taken in kernel mode have frame-pointer user "
			"stacks: this kernel cannot give a BPF program their user registers "
			"(bpf_task_pt_regs needs Linux 5.15 with BTF); --backend perf can\n",
			st->fp_fallbacks);
	if (st->maps_without_inode)
		pr_warn("warning: %" PRIu64 " executable mappings came without their file's inode "
			"(PERF_RECORD_MMAP2 needs Linux 3.16) from processes gone before "
			"/proc/PID/maps was read: frames in them are unwound by frame pointers\n",
			st->maps_without_inode);
	if (st->offcpu_lost)
		pr_warn("warning: %" PRIu64 " off-CPU intervals lost: the in-kernel tables were full; "
			"raise --hash-storage-size\n",
			st->offcpu_lost);
	if (st->offcpu_bad_intervals)
		pr_warn("warning: %" PRIu64 " off-CPU intervals skipped: switch-in not after "
			"switch-out\n",
			st->offcpu_bad_intervals);
	if (st->offcpu_missed_switch_in)
		pr_warn("warning: %" PRIu64 " off-CPU intervals skipped: the kernel reported no "
			"switch-in for them\n",
			st->offcpu_missed_switch_in);
	if (st->pidns_unnamed)
		pr_warn("warning: %" PRIu64 " samples or off-CPU sums left out: the kernel's "
			"records of their tasks' ids in this pid namespace were lost (their buffer "
			"was full)\n",
			st->pidns_unnamed);
	if (st->cgroup_untracked)
		pr_warn("warning: %" PRIu64 " threads of the --cgroup cgroups were not sampled: the "
			"bpf backend's thread table was full\n",
			st->cgroup_untracked);
	if (st->kernel_withheld_ns)
		pr_warn("note: %.3f s that threads spent on a CPU in the kernel are counted from their "
			"switch records, without stacks (%s): kernel.perf_event_paranoid is %d, which "
			"withholds samples taken in the kernel; kernel.perf_event_paranoid=1, "
			"CAP_PERFMON or root would give their stacks\n",
			st->kernel_withheld_ns / 1e9,
			r->kernel_placeholder ? "[Missed Kernel Stack]" : "[Missed User Stack]",
			perf_event_paranoid());
	if (st->offcpu_still_off)
		pr_info("%" PRIu64 " threads were still switched out at the end: counted up to it\n",
			st->offcpu_still_off);
	if (r->unwinder)
		unwinder__report(r->unwinder);
	symbolizer__report_problems(r->sym);
}

/* The bpf backend's maps, where locked-memory limits made them smaller than asked. */
static void warn_shrunk_maps(const struct run *r)
{
	struct backend_stats st;

	r->ops->stats(r->backend, &st);
	if (st.stack_storage_size && (st.stack_storage_size != r->cfg.stack_storage_size ||
				      st.hash_storage_size != r->cfg.hash_storage_size))
		pr_warn("warning: the kernel refused maps of the asked size (locked memory); using "
			"--stack-storage-size %u --hash-storage-size %u\n",
			st.stack_storage_size, st.hash_storage_size);
}

static int start(struct run *r)
{
	const struct run_opts *o = &r->eff;
	struct errmsg em = { "" };
	int64_t t0 = mono_ms(), t_open, t_read;
	int err;

	if (o->command) {
		err = launch__spawn(&r->child, o->command);
		if (err) {
			pr_warn("cannot start %s: %s\n", o->command[0], strerror(-err));
			return err;
		}
		r->launched = true;
		signals__forward_to(r->child.pid);
		/* Events that see every process (sched_switch) keep to the command's tree. */
		if (pipeline__set_tree(&r->pipeline, r->child.pid))
			return -ENOMEM;
	}
	err = r->ops->open(&r->backend, &r->cfg, &r->pipeline, r->launched ? r->child.pid : -1,
			   &em);
	if (err) {
		pr_warn("%s\n", errmsg__reason(&em, err));
		return err;
	}
	warn_shrunk_maps(r);
	t_open = mono_ms();
	err = pipeline__snapshot_processes(&r->pipeline);
	if (err) {
		pr_warn("reading /proc: %s\n", strerror(-err));
		return err;
	}
	t_read = mono_ms();
	if (o->format == FORMAT_BCC && o->print_header) {
		o->print_header(r->out.f, o);
		fflush(r->out.f);
	}
	r->start_ns = (uint64_t)wall_ns();
	r->t_start = mono_ms();
	err = r->ops->start(r->backend, &em);
	if (err) {
		pr_warn("%s\n", errmsg__reason(&em, err));
		return err;
	}
	if (r->launched) {
		err = launch__go(&r->child);
		if (err) {
			pr_warn("cannot run %s: %s\n", o->command[0], strerror(-err));
			return err;
		}
	}
	pr_debug("timing: backend opened in %lld ms, processes read in %lld ms, enabled in %lld "
		 "ms\n",
		 (long long)(t_open - t0), (long long)(t_read - t_open), (long long)(mono_ms() - t_read));
	/* -v: tells whoever waits on it (the real-program tests) that samples are being taken. */
	pr_info("%s: sampling started\n", r->ops->name);
	return 0;
}

static int finish(struct run *r)
{
	struct backend_stats st;
	struct profile prof;
	struct writer_printed printed = { .missed_stacks = UINT64_MAX };
	struct errmsg em = { "" };
	char off[48] = "";	/* the off-CPU total, where there is one */
	bool to_stdout;
	int64_t t_drained;
	int err;

	t_drained = mono_ms();
	r->ops->stats(r->backend, &st);
	pr_info("%s: %" PRIu64 " samples, %" PRIu64 " mid-run drains\n", r->ops->name, st.samples,
		st.drains);
	if (st.stack_storage_size)
		pr_info("%s: stack maps: %" PRIu64 " user and %" PRIu64 " kernel stacks lost (%" PRIu64
			" for want of room), %" PRIu64 " collisions taken by the overflow maps, %" PRIu64
			" stacks without a count, %" PRIu64 " ids without a stack\n",
			r->ops->name, st.user_stacks_lost, st.kernel_stacks_lost, st.stacks_no_room,
			st.stack_overflows, st.orphan_stacks, st.stale_stacks);
	if (r->eff.format == FORMAT_BCC)
		fputc('\n', r->out.f);
	err = write_report(r, &prof, &printed);
	if (interrupt__pending()) {
		/* A signal after the one that ended sampling: stop here, and say so in one line. */
		if (r->out.f == stdout)
			__fpurge(stdout);	/* exit would flush it, and block again on a full pipe */
		pr_warn("interrupted while writing the report: %s\n",
			r->out.path ? "no report written" : "the report is incomplete");
		profile__fini(&prof);
		return -EINTR;
	}
	if (err)
		pr_warn("writing the report: %s\n", strerror(-err));
	print_warnings(r, &prof, &printed, &st);
	if (agg__total(&r->pipeline.agg, WEIGHT_OFFCPU_NS))
		snprintf(off, sizeof(off), ", %.6f s off-CPU",
			 agg__total(&r->pipeline.agg, WEIGHT_OFFCPU_NS) / 1e9);
	pr_info("%" PRIu64 " samples, %" PRIu64 " kept%s, %zu unique raw stacks, %zu in the "
		"profile\n",
		st.samples, agg__total(&r->pipeline.agg, WEIGHT_SAMPLES), off,
		agg__size(&r->pipeline.agg), prof.nr_stacks);
	if (r->released_images)
		pr_info("%zu images of ended processes let go while sampling, %zu freed\n",
			r->released_images, r->freed_images);
	print_forgotten(r->pipeline.procs);
	profile__fini(&prof);
	to_stdout = !r->out.path;
	if (!err) {
		err = outfile__commit(&r->out, &em);
		if (err)
			pr_warn("%s\n", errmsg__reason(&em, err));
	}
	/* Standard output's last flush went to /dev/null: say so (a file is whole once linked). */
	if (!err && to_stdout && interrupt__pending()) {
		pr_warn("interrupted while writing the report: the report is incomplete\n");
		err = -EINTR;
	}
	if (!err && r->oom) {
		pr_warn("out of memory: report incomplete (%" PRIu64 " samples dropped)\n",
			r->pipeline.dropped_oom);
		err = -ENOMEM;
	}
	pr_debug("timing: final drain %lld ms, report %lld ms\n",
		 (long long)(t_drained - r->t_end), (long long)(mono_ms() - t_drained));
	return err;
}

static void run__free(struct run *r)
{
	if (r->launched && !r->child.reaped)
		launch__abort(&r->child);
	if (r->backend)
		r->ops->close(r->backend);
	if (r->pipeline_ready)
		pipeline__fini(&r->pipeline);
	resolver__free(r->resolver);
	symbolizer__free(r->sym);
	unwinder__free(r->unwinder);
	outfile__discard(&r->out);
	run_filters__close(&r->filters);
	if (r->reserve)
		munmap(r->reserve, OOM_RESERVE_BYTES);
}

int run__main(const struct run_opts *opts, const struct backend_ops *const *backends)
{
	struct run r = { .eff = *opts, .child = { .pid = -1 } };
	struct errmsg em = { "" };
	int64_t t0, t1;
	int err, code = 1;

	log_set_verbosity(opts->verbose);
	if (opts->cpu >= 0 && !cpu_is_online(opts->cpu)) {
		pr_warn("argument -C/--cpu: CPU %d is not online\n", opts->cpu);
		return EXIT_USAGE;
	}
	if (check_limits(opts))
		return EXIT_USAGE;
	if (run_filters__open(&r.filters, opts)) {
		run_filters__close(&r.filters);
		return EXIT_USAGE;
	}
	err = outfile__open(&r.out, opts->output, &em);
	if (err) {
		pr_warn("%s\n", errmsg__reason(&em, err));
		run_filters__close(&r.filters);
		return 1;
	}
	err = signals__install();
	if (err) {
		pr_warn("cannot set up signal handling: %s\n", strerror(-err));
		goto out;
	}
	t0 = mono_ms();
	if (choose(&r, backends) || interrupted())
		goto out;
	t1 = mono_ms();
	err = set_up(&r);
	if (err) {
		pr_warn("out of memory\n");
		goto out;
	}
	pr_debug("timing: backend chosen in %lld ms, set up (kernel symbols read) in %lld ms\n",
		 (long long)(t1 - t0), (long long)(mono_ms() - t1));
	if (interrupted() || start(&r) || interrupted())
		goto out;

	r.reserve = reserve_memory();
	err = sample_loop(&r);
	r.t_end = mono_ms();
	/* The signal that ended sampling asks for the report; one more stops it. */
	interrupt__arm();
	/*
	 * Only standard output is silenced: a write to our --output file never
	 * waits on a reader, and what it holds must never be renamed into place
	 * with /dev/null's share missing.
	 */
	signals__interrupt_syscalls(r.out.path ? -1 : fileno(r.out.f));
	r.ops->stop(r.backend);
	if (!err)
		err = r.ops->drain(r.backend);
	if (err == -ENOMEM || r.pipeline.dropped_oom) {
		out_of_memory(&r);
		err = 0;
	}
	if (err) {
		pr_warn("sampling failed: %s\n", strerror(-err));
		goto out;
	}
	if (finish(&r))
		goto out;
	code = 0;
	if (r.launched) {
		/* The report is out; the command may still be finishing (duration, Ctrl-C). */
		launch__wait(&r.child);
		code = launch__exit_code(&r.child);
	}
out:
	run__free(&r);
	return code;
}
