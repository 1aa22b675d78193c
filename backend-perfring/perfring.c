// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend: one cpu-clock event per CPU with an mmap ring. Samples
 * carry frame-pointer callchains and are counted in user space; side-band
 * records on the same rings keep the process tracker current.
 */
#include "backend-perfring/perfring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/ringset.h"
#include "compat/cpus.h"
#include "compat/features.h"
#include "core/log.h"
#include "unwind/unwind.h"

#define DEFAULT_DATA_PAGES 128
/* Room for about 64 samples of the default 16 KiB stack copy per CPU. */
#define DWARF_DATA_PAGES 256

/* The user registers unwind_regs needs (asm/perf_regs.h numbering). */
#define PERF_REG_BP 6
#define PERF_REG_SP 7
#define PERF_REG_IP 8
#define DWARF_REGS_MASK ((1ull << PERF_REG_BP) | (1ull << PERF_REG_SP) | (1ull << PERF_REG_IP))

struct backend {
	struct ring_set rs;
	bool launched;		/* events enable themselves at the command's exec */
	uint64_t samples;
	struct unwinder *unwinder;	/* dwarf mode */
};

static void fill_attr(struct perf_event_attr *attr, const struct profile_opts *o, bool launch)
{
	ring_set__cpu_clock_attr(attr, o, launch);
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_CALLCHAIN;
	attr->sample_max_stack = MAX_STACK_DEPTH;
	attr->exclude_callchain_kernel = o->user_only;
	attr->exclude_callchain_user = o->kernel_only;
	if (options__dwarf(o)) {
		/* The user stack is unwound here from a copy; the kernel's walk is not needed. */
		attr->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		attr->sample_regs_user = DWARF_REGS_MASK;
		attr->sample_stack_user = o->stack_dump_size;
		attr->exclude_callchain_user = 1;
	}
	/* Without the right to sample the kernel, only user-mode samples are allowed. */
	attr->exclude_kernel = o->no_kernel_access;
	ring_set__track_tasks(attr);
}

static bool process_is_ours(pid_t pid)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return stat(path, &st) == 0 && st.st_uid == geteuid();
}

/* Open and close one event like the real ones; returns 0 or -errno. */
static int try_open(const struct profile_opts *opts, bool launch, bool user_mode_only, pid_t pid,
		    int cpu)
{
	struct perf_attr_ladder ladder = { 0 };
	struct perf_event_attr attr;
	int fd;

	fill_attr(&attr, opts, launch);
	attr.enable_on_exec = 0;
	attr.exclude_kernel = user_mode_only;
	fd = perf_attr__open(&ladder, &attr, pid, cpu);
	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

/*
 * The probe is the real call. System-wide needs root, CAP_PERFMON or
 * perf_event_paranoid <= 0; one's own processes can be sampled up to
 * paranoid 2, user mode only above 1.
 */
static int perfring_probe(const struct profile_opts *opts, char *why, size_t why_len)
{
	bool targeted = opts->command || opts->nr_pids || opts->nr_tids;
	pid_t *tids = NULL;
	pid_t task;
	int *cpus = NULL, nr, err;

	nr = ring_set__cpus(opts, &cpus);
	if (nr < 0) {
		snprintf(why, why_len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	err = opts->command ? -EACCES : try_open(opts, false, false, -1, cpus[0]);
	free(cpus);
	if (!err || !targeted || (err != -EACCES && err != -EPERM)) {
		if (err)
			perf_open_error(err, true, why, why_len);
		return err;
	}

	/* Per task: our own pid stands for the command not yet started. */
	if (opts->command) {
		task = 0;
	} else {
		nr = ring_set__task_list(opts, &tids);
		task = nr > 0 ? tids[0] : -1;
		free(tids);
		if (nr <= 0) {
			snprintf(why, why_len, "no thread of the given processes is left");
			return -ESRCH;
		}
	}
	err = try_open(opts, !!opts->command, false, task, -1);
	if (!err)
		return 0;
	if ((err == -EACCES) && !opts->kernel_only && !try_open(opts, !!opts->command, true, task, -1)) {
		snprintf(why, why_len,
			 "kernel.perf_event_paranoid is %d, which lets users without CAP_PERFMON "
			 "sample user space only; kernel.perf_event_paranoid=1, CAP_PERFMON or root "
			 "would add kernel stacks",
			 perf_event_paranoid());
		return PROBE_USER_ONLY;
	}
	if (err == -EACCES && task > 0 && !process_is_ours(task))
		snprintf(why, why_len,
			 "perf_event_open on thread %d: %s: it belongs to another user; sampling it "
			 "needs CAP_PERFMON or root",
			 (int)task, strerror(-err));
	else
		perf_open_error(err, false, why, why_len);
	return err;
}

int perfring__convert_sample(const struct decoded_sample *ds, struct proctrack *pt,
			     uint64_t *kernel, uint64_t *user, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	decode__split_callchain(ds->ips, ds->nr_ips, kernel, &s->nr_kernel, user, &s->nr_user,
				MAX_STACK_DEPTH);
	s->pid = ds->id.pid;
	s->tid = ds->id.tid;
	s->cpu = ds->id.cpu;
	s->kernel_ips = kernel;
	s->user_ips = user;
	s->weight = 1;
	/* Each CPU's idle task is named after its CPU, as the kernel names it. */
	if (s->tid == 0)
		snprintf(s->comm, sizeof(s->comm), "swapper/%d", s->cpu);
	else
		snprintf(s->comm, sizeof(s->comm), "%s", proctrack__comm(pt, s->pid, s->tid));
	return 0;
}

/* Dwarf mode: the user frames come from the register + stack copy, not the callchain. */
static void unwind_user_stack(struct unwinder *u, struct profile_core *core,
			      const struct decoded_sample *ds, uint64_t mask, uint64_t *user,
			      struct sample *s)
{
	struct unwind_regs regs;
	struct addr_space *as;

	s->nr_user = 0;
	if (!decode__user_reg(ds, mask, PERF_REG_IP, &regs.ip) ||
	    !decode__user_reg(ds, mask, PERF_REG_SP, &regs.sp) ||
	    !decode__user_reg(ds, mask, PERF_REG_BP, &regs.bp))
		return;		/* a kernel thread: no user stack */
	as = proctrack__addr_space(core->procs, s->pid);
	if (as)
		s->nr_user = unwinder__unwind(u, as, &regs, ds->stack, ds->stack_size, user,
					      MAX_STACK_DEPTH);
}

static int handle_sample(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct backend *b = (struct backend *)rs;	/* rs is the first member */
	struct profile_core *core = rs->core;
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH];
	struct decoded_sample ds;
	struct sample s;

	if (decode__sample(hdr, rs->sample_type, rs->regs_user, &ds)) {
		rs->bad_records++;
		return 0;
	}
	b->samples++;
	if (!core__sample_wanted(core, ds.id.pid, ds.id.tid)) {
		core->filtered++;
		return 0;
	}
	perfring__convert_sample(&ds, core->procs, kernel, user, &s);
	if (b->unwinder)
		unwind_user_stack(b->unwinder, core, &ds, rs->regs_user, user, &s);
	return core__count_sample(core, &s);
}

static int perfring_open(struct backend **out, struct profile_core *core, pid_t target)
{
	const struct profile_opts *o = core->opts;
	struct perf_event_attr attr;
	pid_t all = -1, *tids = NULL;
	unsigned int pages = DEFAULT_DATA_PAGES;
	struct backend *b;
	int err, nr;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->launched = target > 0;
	if (options__dwarf(o)) {
		b->unwinder = unwinder__new();
		if (!b->unwinder) {
			free(b);
			return -ENOMEM;
		}
		pages = DWARF_DATA_PAGES;
	}
	fill_attr(&attr, o, target > 0);
	if (target > 0) {
		err = ring_set__open(&b->rs, "perf", core, &attr, &target, 1, pages);
	} else if (!o->no_kernel_access && !try_open(o, false, false, -1, o->cpu >= 0 ? o->cpu : 0)) {
		/* System-wide, filtered in the core. */
		err = ring_set__open(&b->rs, "perf", core, &attr, &all, 1, pages);
	} else {
		/* Not allowed system-wide: the -p/-L threads themselves, inherited by new ones. */
		nr = ring_set__task_list(o, &tids);
		attr.inherit = 1;
		err = nr > 0 ? ring_set__open(&b->rs, "perf", core, &attr, tids, nr, pages)
			     : -ESRCH;
		if (!err)
			pr_info("perf: sampling %d thread(s) of the given processes\n", nr);
		free(tids);
	}
	if (err) {
		unwinder__free(b->unwinder);
		free(b);
		return err;
	}
	b->rs.on_sample = handle_sample;
	*out = b;
	return 0;
}

static int perfring_start(struct backend *b)
{
	/* A launched command's events enable themselves at its exec. */
	if (b->launched)
		return 0;
	return ring_set__enable(&b->rs);
}

static int perfring_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	return ring_set__wait(&b->rs, wake_fd, timeout_ms);
}

static int perfring_drain(struct backend *b)
{
	return ring_set__drain(&b->rs);
}

static int perfring_stop(struct backend *b)
{
	ring_set__disable(&b->rs);
	return 0;
}

static void perfring_stats(const struct backend *b, struct backend_stats *st)
{
	uint64_t bad = ring_set__bad_records(&b->rs);

	memset(st, 0, sizeof(*st));
	st->samples = b->samples;
	st->lost = b->rs.lost;
	if (bad)
		pr_warn("warning: %llu malformed ring records skipped\n", (unsigned long long)bad);
	if (b->unwinder)
		unwinder__report(b->unwinder);
}

static void perfring_close(struct backend *b)
{
	if (!b)
		return;
	ring_set__close(&b->rs);
	unwinder__free(b->unwinder);
	free(b);
}

const struct backend_ops perfring_backend_ops = {
	.name = "perf",
	.probe = perfring_probe,
	.open = perfring_open,
	.start = perfring_start,
	.wait = perfring_wait,
	.drain = perfring_drain,
	.stop = perfring_stop,
	.stats = perfring_stats,
	.close = perfring_close,
};
