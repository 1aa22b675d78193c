// SPDX-License-Identifier: GPL-2.0
/*
 * The end of a run: the profile resolved and written in the format asked
 * for, then every warning about what it lacks and -v's totals.
 */
#include "app/run/run_internal.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdio_ext.h>
#include <string.h>
#include <unistd.h>

#include "app/run/node.h"
#include "app/run/python.h"
#include "app/run/unwind_verdict.h"
#include "backend-perfring/pidwatch.h"
#include "compat/cgroup.h"
#include "compat/host.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "core/lib/log.h"
#include "core/model/resolve.h"
#include "core/output/writer.h"
#include "core/sym/symbolize.h"
#include "unwind/unwind.h"

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

/* Handles under /proc refused because another process had the pid by then (issue 46). */
static void print_handovers(const struct run *r)
{
	struct proctrack_counts c;
	struct pid_watch_stats ws;

	if (!r->pipeline.procs)
		return;
	proctrack__counts(r->pipeline.procs, &c);
	pid_watch__stats(r->pidwatch, &ws);
	if (c.handovers_refused)
		pr_info("%zu handles opened under /proc/PID not used: the process they were for had "
			"ended, or another had its pid, by then (%llu of them told by exit and fork "
			"records not yet drained)\n",
			c.handovers_refused, (unsigned long long)ws.taken);
	if (ws.lost)
		pr_info("%llu exit and fork records lost (a full ring): handles opened under "
			"/proc over that span were not used\n", (unsigned long long)ws.lost);
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

/*
 * Whether the run copied stacks, whose size the loss advice may name:
 * cfg.dwarf is set under auto for an off-CPU run too, which copies nothing
 * on-CPU (off-CPU copies are off_cpu_dwarf's, dwarf's alone).
 */
static bool copies_taken(const struct run *r)
{
	return (r->cfg.dwarf && r->eff.mode != MODE_OFF_CPU) || r->cfg.off_cpu_dwarf;
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
			copies_taken(r) ? ", or lower --stack-dump-size" : "");
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
			r->pipeline.late_images, settle_grace_ns() / 1000000000ULL);
	if (st->malformed_records)
		pr_warn("warning: %" PRIu64 " malformed records skipped\n", st->malformed_records);
	if (st->fp_fallbacks)
		pr_warn("warning: %" PRIu64 " samples taken in kernel mode have frame-pointer user "
			"stacks: their user registers were not found at the top of the task's "
			"kernel stack, and this kernel cannot give a BPF program them "
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
	if (st->offcpu_unreported_in)
		pr_info("%" PRIu64 " off-CPU intervals (of any thread the program kept) had a "
			"switch-in that no sched_switch reported: each ended from the thread's CPU "
			"time at its next switch-out\n",
			st->offcpu_unreported_in);
	if (st->offcpu_still_off)
		pr_info("%" PRIu64 " threads were still switched out at the end: counted up to it\n",
			st->offcpu_still_off);
	if (st->offcpu_interp_late)
		pr_info("%" PRIu64 " of %" PRIu64 " off-CPU waits with Python frames were over "
			"before the frames were read: shown without them (the perf backend reads "
			"them at the switch-out for the Python threads it knows, else at the "
			"drain)\n",
			st->offcpu_interp_late, st->offcpu_interp_waits);
	/* The on-CPU programs say it in their stack maps' line (stack_storage_size set). */
	if (st->stack_overflows && !st->stack_storage_size)
		pr_info("%" PRIu64 " stack walks collided in the stack map and were tried in its "
			"overflow map (what collided there too is counted as lost)\n",
			st->stack_overflows);
	if (r->unwinder)
		unwinder__report(r->unwinder);
	unwind_verdicts__report(r->verdicts);
	/* The perf backend counts them (the bpf one takes them all, or none). */
	if (r->eff.unwind == UNWIND_AUTO && r->cfg.dwarf && !strcmp(r->ops->name, "perf"))
		pr_info("unwind: %" PRIu64 " of %" PRIu64 " samples brought a stack copy\n",
			st->stack_copies, st->samples);
	symbolizer__report_problems(r->sym);
}

/* kB of the status line named key ("VmRSS:", "VmHWM:") of this process; 0 if unknown. */
static double status_mb(const char *key)
{
	char line[128];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)) && sscanf(line + strlen(key), "%ld", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024.0;
}

/*
 * -v at the end of sampling, before the report: where the memory went.
 * Each part counts what its module holds (arrays, tables, entries; not the
 * allocator's slack), so the rest is the program and its libraries, libdw's
 * DWARF and what malloc keeps free. The perf rings are not in the RSS (the
 * kernel's pages, mapped without being counted), said apart.
 */
static void print_memory(const struct run *r, const struct backend_stats *st)
{
	const double mb = 1048576.0;
	size_t stacks = agg__bytes(&r->pipeline.agg) + resolver__stack_bytes(r->resolver);
	struct proctrack_counts pc = { 0 };
	struct symbolizer_stats syms;
	struct unwind_stats unw = { 0 };
	double rss = status_mb("VmRSS:"), parts;

	symbolizer__stats(r->sym, &syms);
	if (r->unwinder)
		unwinder__stats(r->unwinder, &unw);
	if (r->pipeline.procs)
		proctrack__counts_bytes(r->pipeline.procs, &pc);
	parts = (st->copy_bytes + syms.table_bytes + unw.table_bytes + stacks + pc.bytes) / mb;
	pr_info("memory at the end of sampling: RSS %.1f MB (peak %.1f MB): records copied from "
		"the rings (stack copies) %.1f MB (at most %.1f MB waited for a drain, budget %.1f "
		"MB), symbol tables %.1f MB (%zu files and the kernel's), unwind tables %.1f MB "
		"(%zu files and the step cache), stacks %.1f MB, process tables %.1f MB (%zu pids, "
		"%zu threads), the rest %.1f MB; perf rings %.1f MB beside\n",
		rss, status_mb("VmHWM:"), st->copy_bytes / mb, st->copies_peak / mb,
		st->copies_budget / mb, syms.table_bytes / mb, syms.loaded, unw.table_bytes / mb,
		unw.images, stacks / mb, pc.bytes / mb, pc.procs, pc.comms,
		rss > parts ? rss - parts : 0.0, st->ring_bytes / mb);
}

int run__finish(struct run *r)
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
	if (log_verbosity() >= LOG_INFO)
		print_memory(r, &st);
	/* What crossed to user space through them (bench native: bytes per sample). */
	if (st.ring_data)
		pr_info("%s: records written by the kernel into the rings: %" PRIu64 " bytes "
			"(libbpf's perf buffers not counted)\n", r->ops->name, st.ring_data);
	/* Every sample is unwound: the tables go before the report is built (its peak). */
	if (r->unwinder)
		unwinder__release(r->unwinder);
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
	print_handovers(r);
	if (r->python)
		run_python__report(r->python, &r->pipeline, r->resolver);
	if (r->node)
		run_node__report(r->node, r->resolver);
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
