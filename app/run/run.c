// SPDX-License-Identifier: GPL-2.0
/*
 * One run: choose a backend, open everything, sample until the duration
 * ends, a signal arrives or the command exits, then resolve the profile
 * once and hand it to the writer of the format asked for. struct run owns
 * every resource and frees them on every path.
 */
#include "app/run/run.h"
#include "app/run/run_internal.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "app/run/choose.h"
#include "app/run/node.h"
#include "app/run/python.h"
#include "app/run/signals.h"
#include "app/run/unwind_verdict.h"
#include "backend-perfring/pidwatch.h"
#include "compat/cpus.h"
#include "compat/host.h"
#include "compat/kallsyms.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "core/lib/log.h"
#include "core/model/resolve.h"
#include "core/sym/symbolize.h"
#include "unwind/unwind.h"

static void *reserve_memory(void)
{
	void *p = mmap(NULL, OOM_RESERVE_BYTES, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
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
		.stack_storage_given = o->stack_storage_given,
		.stack_dump_size = o->stack_dump_size,
		.test_no_task_regs = o->test_no_task_regs,
		.interp = o->python != PYTHON_OFF || o->node != NODE_OFF,
	};
	unwind_choice__config(o, c);
}

static unsigned int unwind_snapshot(void *ctx, const struct addr_space *as,
				    const struct user_snapshot *snap, uint64_t *ips,
				    unsigned int max)
{
	struct unwind_regs regs = { .ip = snap->ip, .sp = snap->sp, .bp = snap->bp };
	const uint64_t *di = snap->has_di ? &snap->di : NULL;

	if (!snap->stack && snap->pieces)
		return unwinder__unwind_pieces(ctx, as, &regs, di, snap->pieces, snap->piece_lens,
					       snap->nr_pieces, snap->stack_size, ips, max);
	return unwinder__unwind(ctx, as, &regs, di, snap->stack, snap->stack_size, ips, max);
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
	unwind_choice__print(&r->eff, r->ops->name);
	if (r->eff.unwind == UNWIND_AUTO) {
		r->verdicts = unwind_verdicts__new();
		if (!r->verdicts)
			return -ENOMEM;
		unwind_verdicts__config(r->verdicts, &r->eff, &r->cfg);
	}
	return 0;
}

/*
 * The kernel's record of every exit and fork, read at the moment the
 * tracker checks a handle it opened under /proc/PID: a process that took
 * a pid within a millisecond of its owner's exit is never read for it
 * (issue 46). Not allowed (a CPU-wide event) to users without
 * CAP_PERFMON: what they may open under /proc is their own processes'.
 */
static void open_pid_watch(struct run *r)
{
	struct errmsg why = { 0 };
	int err;

	if (!r->pipeline.procs)
		return;
	err = pid_watch__open(&r->pidwatch, &why);
	if (err) {
		pr_debug("pids: %s: handles under /proc/PID are checked against the records "
			 "applied so far\n", errmsg__reason(&why, err));
		return;
	}
	proctrack__set_handover(r->pipeline.procs, pid_watch__handover, r->pidwatch);
}

static void file_copied(void *ctx, int fd, const struct mapping *m)
{
	unwind_verdicts__copied(ctx, fd, m->path, m->dev, m->ino);
}

/* --unwind auto: the unwinder made for the first stack copy (NULL: out of memory, no frames). */
static unsigned int unwind_snapshot_auto(void *ctx, const struct addr_space *as,
					 const struct user_snapshot *snap, uint64_t *ips,
					 unsigned int max)
{
	struct run *r = ctx;

	if (!r->unwinder) {
		r->unwinder = unwinder__new();
		if (!r->unwinder)
			return 0;
		/* -v says per binary which way: those unwound from copies, compiled once each. */
		if (r->verdicts && r->eff.verbose)
			unwinder__on_file(r->unwinder, file_copied, r->verdicts);
	}
	return unwind_snapshot(r->unwinder, as, snap, ips, max);
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
	open_pid_watch(r);
	r->sym = symbolizer__new();
	if (r->sym)
		symbolizer__set_tracker(r->sym, r->pipeline.procs);
	r->resolver = r->sym ? resolver__new(r->sym, &spec) : NULL;
	if (!r->resolver)
		return -ENOMEM;
	if (run_opts__dwarf(o) && o->unwind == UNWIND_AUTO) {
		/* Made at the first copy: a run of processes with frame pointers takes none. */
		pipeline__set_unwind(&r->pipeline, unwind_snapshot_auto, r);
	} else if (run_opts__dwarf(o)) {
		r->unwinder = unwinder__new();
		if (!r->unwinder)
			return -ENOMEM;
		pipeline__set_unwind(&r->pipeline, unwind_snapshot, r->unwinder);
	}
	if (o->python != PYTHON_OFF) {
		r->python = run_python__new(&r->pipeline, r->resolver, o->python == PYTHON_RAW,
					    o->python_full_paths);
		if (!r->python)
			return -ENOMEM;
		r->cfg.interp_reader = run_python__reader(r->python);
	}
	/* In front of Python's hooks: what is not a Node image goes on to them. */
	if (o->node != NODE_OFF) {
		r->node = run_node__new(&r->pipeline, r->resolver, o->node == NODE_RAW,
					o->python_full_paths);
		if (!r->node)
			return -ENOMEM;
	}
	/* What the report needs anyway is read before sampling, not after it. */
	if (!o->user_only)
		symbolizer__preload_kernel(r->sym);
	return 0;
}

/* The bpf backend's maps, where locked-memory limits made them smaller than asked. */
static void warn_shrunk_maps(const struct run *r)
{
	struct backend_stats st;

	r->ops->stats(r->backend, &st);
	if (st.maps_shrunk)
		pr_warn("warning: the kernel refused maps of the asked size (locked memory); using "
			"--stack-storage-size %u --hash-storage-size %u\n",
			st.stack_storage_size, st.hash_storage_size);
}

static int start(struct run *r)
{
	const struct run_opts *o = &r->eff;
	struct errmsg em = { "" };
	int64_t t0 = mono_ms(), t_open, t_read;
	unsigned int asked_dump = r->cfg.stack_dump_size;	/* auto may shrink it to fit */
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
	/* Rings over the locked-memory budget: auto tries smaller copies, then frame pointers. */
	while (err == -ENOBUFS && !signals__stop_requested() &&
	       unwind_choice__shrink(&r->eff, &r->cfg, errmsg__reason(&em, err))) {
		em = (struct errmsg){ "" };
		err = r->ops->open(&r->backend, &r->cfg, &r->pipeline,
				   r->launched ? r->child.pid : -1, &em);
		if (!err)
			unwind_choice__warn_shrunk(&r->cfg, asked_dump);
	}
	if (err) {
		/*
		 * A SIGTERM or SIGHUP passed on to the command during set-up ends it,
		 * and events on its pid then fail (ESRCH): the stop is the reason,
		 * said by the caller, not the backend's error.
		 */
		if (!signals__stop_requested())
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
	if (r->python) {
		/* The Python processes running now, and their threads, before the first sample. */
		run_python__set_backend(r->python, r->backend, r->ops);
		run_python__scan(r->python, &r->pipeline, r->launched ? r->child.pid : -1);
	}
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

static void run__free(struct run *r)
{
	if (r->launched && !r->child.reaped)
		launch__abort(&r->child);
	if (r->backend)
		r->ops->close(r->backend);
	if (r->pipeline_ready)
		pipeline__fini(&r->pipeline);
	pid_watch__close(r->pidwatch);	/* after the tracker that asks it */
	run_node__free(r->node);
	run_python__free(r->python);
	resolver__free(r->resolver);
	symbolizer__free(r->sym);
	unwinder__free(r->unwinder);
	unwind_verdicts__free(r->verdicts);
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
	err = choose(&r, backends);
	/* A stop during the choice ends it: said here, not as the backend's failure. */
	if (interrupted() || err)
		goto out;
	t1 = mono_ms();
	err = set_up(&r);
	if (err) {
		pr_warn("out of memory\n");
		goto out;
	}
	pr_debug("timing: backend chosen in %lld ms, set up (kernel symbols read) in %lld ms\n",
		 (long long)(t1 - t0), (long long)(mono_ms() - t1));
	if (interrupted())
		goto out;
	err = start(&r);
	if (interrupted() || err)
		goto out;

	r.reserve = reserve_memory();
	err = run__sample_loop(&r);
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
	if (run__finish(&r))
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
