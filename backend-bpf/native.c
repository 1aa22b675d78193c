// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program that unwinds user stacks by the native tables
 * (bpf/native.bpf.h), on the counting program's maps: its stored-stack
 * tables are ARRAYs whose claimed slots the drain empties
 * (stack_cache__set_walked_claims). Where the kernel refuses it, -v says
 * why (-vv shows the verifier's log) and the run goes on without it.
 */
#include "backend-bpf/bpfbackend_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend-bpf/countmap.h"
#include "backend-bpf/native.h"
#include "backend-bpf/offcpu.h"
#include "core/lib/clock.h"
#include "core/lib/interrupt.h"
#include "unwind/tables/tables.h"

/* The program steps by unwind/tables' rules as they are: the same layout and kinds. */
_Static_assert(sizeof(struct native_rule) == sizeof(struct unwind_rule), "rule layout");
#define SAME_KIND(a, b) ((int)(a) == (int)(b))
_Static_assert(SAME_KIND(NATIVE_CFA_NONE, UNWIND_CFA_NONE) &&
		       SAME_KIND(NATIVE_CFA_STOP, UNWIND_CFA_STOP) &&
		       SAME_KIND(NATIVE_CFA_END, UNWIND_CFA_END) &&
		       SAME_KIND(NATIVE_CFA_RSP, UNWIND_CFA_RSP) &&
		       SAME_KIND(NATIVE_CFA_RBP, UNWIND_CFA_RBP) &&
		       SAME_KIND(NATIVE_CFA_PLT, UNWIND_CFA_PLT) &&
		       SAME_KIND(NATIVE_CFA_SIGNAL, UNWIND_CFA_SIGNAL),
	       "cfa kinds");
_Static_assert(SAME_KIND(NATIVE_RBP_SAME, UNWIND_RBP_SAME) &&
		       SAME_KIND(NATIVE_RBP_CFA, UNWIND_RBP_CFA) &&
		       SAME_KIND(NATIVE_RBP_LOST, UNWIND_RBP_LOST),
	       "rbp kinds");

/* The largest power of two at most n, and 1 at least. */
static unsigned int pow2_floor(unsigned int n)
{
	unsigned int p = 1;

	while (p <= n / 2)
		p *= 2;
	return p;
}

static int map_fd(const struct backend *b, const char *name)
{
	return bpf_map__fd(bpf_object__find_map_by_name(b->native, name));
}

bool bpf_native__test_refuse;
/* A native_wake record: a process noted (its pid is in native_unknown). */
static void on_wake(void *ctx, int cpu, void *data, __u32 size)
{
	struct backend *b = ctx;

	(void)cpu;
	(void)data;
	(void)size;
	b->native_woken = true;
}

/* Records lost (a full ring): some process was noted. */
static void on_wake_lost(void *ctx, int cpu, __u64 cnt)
{
	(void)cpu;
	(void)cnt;
	on_wake(ctx, 0, NULL, 0);
}

unsigned int bpf_native__test_late_ms;

int bpf_native__adopt(struct backend *b, struct bpf_object *obj,
		      const struct native_store_opts *opts)
{
	struct native_maps_fds fds;

	b->native = obj;
	bpf_native__fds(b, &fds);
	b->native_store = native_store__new(&fds, opts, b->pipeline->procs);
	if (!b->native_store) {
		pr_info("bpf: the store of the native unwinder's tables: %s: frame pointers\n",
			strerror(errno));
		bpf_native__close(b);
		return -ENOMEM;
	}
	/* Without it, the run's wait looks at the noted count every few ms. */
	b->native_wake = perf_buffer__new(map_fd(b, "native_wake"), 1, on_wake, on_wake_lost, b,
					  NULL);
	if (!b->native_wake) {
		pr_debug("bpf: native unwinding: the rings that wake at a process noted: %s\n",
			 strerror(errno));
		b->native_wake = NULL;
	}
	b->native_late_until_ms = mono_ms() + bpf_native__test_late_ms;
	return 0;
}

void bpf_native__open(struct backend *b)
{
	/* A generation's stacks: a quarter of the stack map's, as the frame-pointer walk's. */
	unsigned int slots = pow2_floor(b->stack_size / 4);
	const struct backend_config *c = b->cfg;
	struct native_store_opts opts = {
		.few = bpf_backend__names_processes(c),
	};
	int err = bpf_native__test_refuse ? -EACCES
					  : bpf_load__native_program(b->skel, slots, &opts,
								     !c->test_no_task_regs,
								     &b->native_regs, &b->native_plain);

	if (err) {
		pr_info("bpf: the kernel refused the program that unwinds user stacks by the "
			"binaries' tables (%s; -vv shows why): frame pointers\n", strerror(-err));
		bpf_native__close(b);
		return;
	}
	if (bpf_native__adopt(b, b->native_regs ? b->native_regs->obj : b->native_plain->obj,
			      &opts))
		return;
	b->native_prog_fd = bpf_program__fd(bpf_object__find_program_by_name(b->native,
										"profile_native"));
	b->config.native_slots = slots;
	stack_cache__set_walked_claims(&b->stacks[0], map_fd(b, "ustacks0"), map_fd(b, "uclaims0"));
	stack_cache__set_walked_claims(&b->stacks[1], map_fd(b, "ustacks1"), map_fd(b, "uclaims1"));
	pr_info("bpf: user stacks unwound by the program from the binaries' tables (%u stacks a "
		"generation), kernel-mode samples' from the task's user registers (%s); 32-bit "
		"code by frame pointers\n",
		slots, b->native_regs ? "bpf_task_pt_regs, 5.15"
				      : "where the entry code saved them, at the top of its kernel "
					"stack");
}

/* What the kernel allocated for the unwinder's maps, whole at their creation (fdinfo's memlock). */
static uint64_t maps_memlock(const struct backend *b)
{
	static const char *const names[] = { "native_procs", "native_pages", "native_index",
					     "native_rows", "native_rules", "native_unknown",
					     "native_cache" };
	uint64_t sum = 0;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char path[64], line[128];
		unsigned long long v;
		FILE *f;

		snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", map_fd(b, names[i]));
		f = fopen(path, "re");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "memlock: %llu", &v) == 1)
				sum += v;
		if (f)
			fclose(f);
	}
	return sum;
}

/* -v: how the program walks each binary the store knows. */
static void print_binary(void *arg, const char *path, const struct native_binary_info *info)
{
	const char *base = strrchr(path, '/');

	(void)arg;
	if (info->way == NATIVE_WAY_TABLE)
		pr_info("bpf: native unwinding: %s: tables (%u rows, %u rules; %s)\n",
			base ? base + 1 : path, info->rows, info->rules, info->why ? info->why : "");
	else
		pr_info("bpf: native unwinding: %s: %s (%s)\n", base ? base + 1 : path,
			info->way == NATIVE_WAY_FP ? "frame pointers" : "frame pointers, marked",
			info->why ? info->why : "");
}

/* -v: the counting program's walks (its stats). */
static void report_walks(struct backend *b, const struct native_store_stats *st)
{
	struct native_stats s = {
		.walked = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_WALKED),
		.kernel_mode = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_KERNEL_MODE),
		.compat = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_COMPAT),
		.unknown = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_UNKNOWN),
		.noted = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NOTED),
		.full = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_FULL),
		.no_prog = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NO_PROG),
		.no_cfi = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NO_CFI),
		.read = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_READ),
		.unmapped = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_UNMAPPED),
		.truncated = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_TRUNCATED),
		.copied = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_COPIED),
		.unmapped_copied = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_UNMAPPED_COPIED),
		.interp_copied = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_INTERP_COPIED),
		.interp_fp = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_INTERP_FP),
	};
	if (st->copies_only)
		pr_info("bpf: native unwinding: %u processes that run Node.js left to stack "
			"copies, for the walk of their JavaScript frames (not yet done in the "
			"program): %llu samples copied, %llu by frame pointers (the copies' "
			"lease out: a drain late)\n",
			st->copies_only, (unsigned long long)s.interp_copied,
			(unsigned long long)s.interp_fp);
	pr_info("bpf: native unwinding: %llu stacks walked (%llu ended without CFI, %llu at a "
		"failed read, %llu at code in no known mapping, %llu cut at %d frames); %llu of "
		"processes not loaded as stack copies; by frame pointers instead: %llu "
		"kernel-mode, %llu 32-bit, %llu of processes not loaded (%llu noted), %llu for "
		"want of room, %llu without the step program; %llu walks whose leaf was in code "
		"mapped since its process was read as stack copies instead\n",
		(unsigned long long)s.walked, (unsigned long long)s.no_cfi,
		(unsigned long long)s.read, (unsigned long long)s.unmapped,
		(unsigned long long)s.truncated, PROFILE_MAX_STACK_DEPTH,
		(unsigned long long)(s.copied - s.unmapped_copied - s.interp_copied),
		(unsigned long long)s.kernel_mode,
		(unsigned long long)s.compat, (unsigned long long)s.unknown,
		(unsigned long long)s.noted, (unsigned long long)s.full,
		(unsigned long long)s.no_prog, (unsigned long long)s.unmapped_copied);
}

void bpf_native__report(struct backend *b)
{
	struct native_store_stats st;

	native_store__stats(b->native_store, &st);
	native_store__each_binary(b->native_store, print_binary, NULL);
	pr_info("bpf: native unwinding: %u processes, %u tables (%u loaded, %u by frame "
		"pointers, %u over the budget, %u of them their owner's share; %u kept mapped by no "
		"process), %llu rows, %u rules, %.1f MB in the maps (of %.1f MB the kernel allocated "
		"for them; %s), %u compiles in %.1f ms (%u saved: a kept table mapped again); %u "
		"dropped as they exited, %u read again after an exec\n",
		st.processes, st.tables, st.tables_loaded, st.tables_fp, st.budget_refusals,
		st.owner_refusals, st.tables_idle, (unsigned long long)st.rows, st.rules,
		st.bytes / 1e6, maps_memlock(b) / 1e6,
		st.mapped ? "rows written in place" : "rows written by syscalls", st.compiled,
		st.compile_ns / 1e6, st.taken_again, st.swept, st.execs);
	pr_info("bpf: native unwinding: %u index and %u page entries; processes left to frame "
		"pointers: %u with too many mappings, %u for want of room, %u failed; %u files "
		"refused (not the file mapped, or not a regular file); %u re-reads put off, %u "
		"reads left by a poll over its %d ms to the next\n",
		st.index, st.pages, st.too_big, st.no_room, st.failed, st.trust_refusals,
		st.rate_limited, st.deferred, NATIVE_POLL_BUDGET_MS);
	/* Off-CPU time alone: the off-CPU program counts its own walks. */
	if (b->skel)
		report_walks(b, &st);
}

int bpf_native__fds(const struct backend *b, struct native_maps_fds *out)
{
	if (!b->native)
		return -ENOENT;
	out->procs = map_fd(b, "native_procs");
	out->pages = map_fd(b, "native_pages");
	out->index = map_fd(b, "native_index");
	out->rows = map_fd(b, "native_rows");
	out->rules = map_fd(b, "native_rules");
	out->unknown = map_fd(b, "native_unknown");
	out->epoch = map_fd(b, "native_epoch");
	return 0;
}

/*
 * Whether the program noted a process since the last take: by its wake
 * records where the ring opened (a read of the per-CPU count each tick
 * was most of what auto's drains read more than fp's), else the count.
 */
static bool noted_since(struct backend *b)
{
	uint64_t noted;

	if (b->native_wake) {
		perf_buffer__consume(b->native_wake);
	} else if (!b->skel || bpf_offcpu__native_object(b->offcpu)) {
		/* The off-CPU program notes too, in a count of its own: each take looks. */
		b->native_woken = true;
	} else {
		noted = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NOTED);
		if (noted != b->native_noted)
			b->native_woken = true;
		b->native_noted = noted;
	}
	return b->native_woken;
}

bool bpf_native__noticed(struct backend *b)
{
	return b->native && mono_ms() >= b->native_late_until_ms &&
	       (noted_since(b) || (b->native_store && native_store__pending(b->native_store)));
}

/* The processes the program noted (not loaded yet, or a pc in no known mapping): read now. */
void bpf_native__take_unknown(struct backend *b)
{
	/* Once a second: the exited processes' entries go, and their tables with the last. */
	if (b->native_store && mono_ms() - b->native_swept_ms >= 1000) {
		b->native_swept_ms = mono_ms();
		native_store__sweep(b->native_store);
	}
	if (!b->native_store || mono_ms() < b->native_late_until_ms ||
	    (!noted_since(b) && !native_store__pending(b->native_store)))
		return;
	/* The records only say when: native_unknown holds the pids. */
	b->native_woken = false;
	native_store__poll_unknown(b->native_store);
}

/*
 * Off-CPU time alone, system-wide: the host's processes read before the
 * first switch, within NATIVE_HOST_READ_MS, a quarter of the process map,
 * and until the maps have no room for one. A thread's first wait in the run is otherwise walked by frame
 * pointers (its process noted then, read after), and that wait may be the
 * only one (a daemon's 30 s epoll_wait); the sampling program meets only
 * the processes that run, and reads them as it meets them.
 */
#define NATIVE_HOST_READ_MS 1000

static void read_host(struct backend *b)
{
	struct native_map_sizes ns;
	int64_t t0 = mono_ms();
	unsigned int read = 0, tried = 0;
	struct dirent *d;
	int err;
	DIR *dir = opendir("/proc");

	if (!dir)
		return;
	native_store__map_sizes(&(struct native_store_opts){ .few = false }, &ns);
	/* Bounded by the pid space, the time and the map. */
	while ((d = readdir(dir)) && !interrupt__pending() && read < ns.procs / 4 &&
	       mono_ms() - t0 < NATIVE_HOST_READ_MS) {
		char exe[64], *end;
		long pid = strtol(d->d_name, &end, 10);
		struct stat st;

		if (*end || pid <= 0 || pid > INT32_MAX || pid == getpid())
			continue;
		/* A kernel thread has no executable, nor user stacks. */
		snprintf(exe, sizeof(exe), "/proc/%ld/exe", pid);
		if (stat(exe, &st))
			continue;
		tried++;
		err = native_store__add_process(b->native_store, (pid_t)pid);
		read += !err;
		/* The maps full: the room is left to the processes that start during the run. */
		if (err == -ENOSPC)
			break;
	}
	closedir(dir);
	pr_info("bpf: native unwinding: %u of %u processes of the host read at the start in "
		"%lld ms (off-CPU time: a thread's first wait is walked by frame pointers until "
		"its process is read)\n",
		read, tried, (long long)(mono_ms() - t0));
}

void bpf_native__add_targets(struct backend *b)
{
	const struct backend_config *c = b->cfg;

	if (!b->native_store || bpf_native__test_late_ms)
		return;
	/*
	 * System-wide, the profiler samples itself too: loaded now, not by a
	 * main thread busy with the first drains (its first 100 ms of samples
	 * were stack copies, under a compile loop).
	 */
	if (!bpf_backend__names_processes(c) && !c->nr_cgroups)
		native_store__add_process(b->native_store, getpid());
	if (!c->on_cpu && !bpf_backend__names_processes(c) && !c->nr_cgroups)
		read_host(b);
	/* -p's processes, each compiled now: a stop during set-up ends it here. */
	for (int i = 0; i < c->nr_pids && !interrupt__pending(); i++) {
		int err = native_store__add_process(b->native_store, b->cfg->pids[i]);

		if (err)
			pr_debug("bpf: native unwinding: pid %d: %s\n", (int)b->cfg->pids[i],
				 strerror(-err));
	}
}

int bpf_native__wake_fd(const struct backend *b)
{
	return b->native_wake ? perf_buffer__epoll_fd(b->native_wake) : -1;
}

bool bpf_native__looks(const struct backend *b)
{
	/* A poll over its budget left pids noted: due at next_poll_ms, which no record marks. */
	return b->native && (!b->native_wake || (b->native_store && native_store__deferred(b->native_store)));
}

void bpf_native__close(struct backend *b)
{
	if (b->native_store)
		bpf_native__report(b);
	native_store__free(b->native_store);
	b->native_store = NULL;
	perf_buffer__free(b->native_wake);
	b->native_wake = NULL;
	profile_native_regs_bpf__destroy(b->native_regs);
	profile_native_bpf__destroy(b->native_plain);
	b->native_regs = NULL;
	b->native_plain = NULL;
	b->native = NULL;
}
