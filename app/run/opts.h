/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What to sample and report (struct run_opts, filled by the command line),
 * apart from the run that carries it out: what reads the options (the
 * filters, the progress line, the headers) does not depend on the run.
 */
#ifndef APP_RUN_OPTS_H
#define APP_RUN_OPTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum backend_choice {
	BACKEND_AUTO,
	BACKEND_BPF,
	BACKEND_PERF,
};

enum unwind_mode {
	UNWIND_FP,		/* frame pointers, walked by the kernel */
	UNWIND_DWARF,		/* .eh_frame over a copy of the user stack, in user space */
	/*
	 * Per binary: frame pointers for code that keeps them, .eh_frame for
	 * code that does not (app/run/unwind_verdict.c says how on each backend).
	 */
	UNWIND_AUTO,
};

/*
 * --unwind when not given: 1 is the one change that makes auto the default
 * (help text too); a build can try it with CFLAGS+=-DUNWIND_AUTO_IS_DEFAULT=1.
 */
#ifndef UNWIND_AUTO_IS_DEFAULT
#define UNWIND_AUTO_IS_DEFAULT 1
#endif
#if UNWIND_AUTO_IS_DEFAULT
#define DEFAULT_UNWIND UNWIND_AUTO
#define DEFAULT_UNWIND_NAME "auto"
#else
#define DEFAULT_UNWIND UNWIND_FP
#define DEFAULT_UNWIND_NAME "fp"
#endif

/* What Python processes' stacks show (--python). */
enum python_mode {
	PYTHON_MIXED,		/* Python frames in place of the interpreter's own (default) */
	PYTHON_RAW,		/* Python frames, and every native frame of the interpreter too */
	PYTHON_OFF,		/* native frames only, as before */
};

/* What Node.js processes' stacks show (--node): the same choices. */
enum node_mode {
	NODE_MIXED,		/* JavaScript frames in place of V8's own (default) */
	NODE_RAW,		/* JavaScript frames, and every native frame of V8 too */
	NODE_OFF,		/* native frames only */
};

/* What is measured. */
enum run_mode {
	MODE_ON_CPU,		/* stacks sampled on the CPU (profile) */
	MODE_OFF_CPU,		/* time switched out, by the stack at switch-out (offcputime) */
	MODE_WALL,		/* both, per thread: the wall-clock view */
};

/* Which threads, by kind (offcputime's -u, -k). */
enum thread_kind {
	THREADS_ALL,
	THREADS_USER,
	THREADS_KERNEL,
};

enum output_format {
	FORMAT_BCC,		/* bcc's multi-line report */
	FORMAT_FOLDED,		/* -f: one line per stack */
	FORMAT_SVG,		/* an interactive flame graph */
	FORMAT_PPROF,		/* gzip'ed profile.proto */
};

struct run_opts {
	enum run_mode mode;
	pid_t *pids;		/* -p: processes (tgids) */
	int nr_pids;
	pid_t *tids;		/* -L: threads */
	int nr_tids;
	bool user_only;		/* -U */
	bool kernel_only;	/* -K */
	unsigned int frequency;	/* -F, 0 when -c is given */
	uint64_t period;	/* -c, 0 when sampling by frequency */
	bool delimited;		/* -d */
	bool annotations;	/* -a */
	bool addresses;		/* -A */
	bool include_idle;	/* -I */
	enum thread_kind threads;	/* offcputime -u, -k */
	uint64_t min_block_us;	/* off-CPU intervals shorter are left out (-m) */
	uint64_t max_block_us;	/* and longer (-M) */
	int state;		/* --state: the switched-out thread's state mask, -1 for any */
	bool offsets;		/* offcputime -s: symbol+0xoff */
	bool raw_addresses;	/* offcputime's 2016 -v: the address before each frame */
	enum output_format format;
	const char *output;	/* --output FILE, NULL for stdout */
	unsigned int hash_storage_size;
	unsigned int stack_storage_size;
	/* Else the bpf backend may size its counting program's stack maps by the rate. */
	bool stack_storage_given;
	int cpu;		/* -C, -1 for all */
	enum backend_choice backend;
	enum unwind_mode unwind;
	unsigned int stack_dump_size;	/* --stack-dump-size, bytes, a multiple of 8 */
	bool inline_frames;	/* --inline: inlined calls as frames (DWARF) */
	enum python_mode python;	/* --python */
	bool python_full_paths;	/* --python-full-paths: Python and JavaScript files named in full */
	enum node_mode node;	/* --node */
	int verbose;		/* -v, repeatable */
	bool quiet;		/* --quiet: no progress line on a terminal */
	/* --cgroup: tasks in these cgroups and their descendants only (paths as given). */
	char **cgroups;
	int nr_cgroups;
	const char *cgroupmap;	/* bcc's --cgroupmap: a pinned hash map of cgroup ids */
	const char *mntnsmap;	/* bcc's --mntnsmap: a pinned hash map of mount namespace ids */
	unsigned int duration;	/* seconds, 0 = until Ctrl-C */
	char **command;		/* after --, NULL-terminated; NULL if none */
	/* --diff BASE NEW: compare two profile files instead of sampling. */
	const char *diff_base;
	const char *diff_new;
	double diff_threshold;	/* --diff-threshold: points of self share; < 0 for none */
	/* Set by the run, not the command line: this user may not sample the kernel. */
	bool no_kernel_access;
	/* Tests only (tests/seams): the bpf stack-copy program for kernels before 5.15. */
	bool test_no_task_regs;
	/* The text printed before sampling in bcc format, for what will actually run. */
	void (*print_header)(FILE *out, const struct run_opts *o);
};

/*
 * Whether user stacks may be unwound from stack copies (user stacks wanted,
 * and --unwind dwarf, or auto: where it takes them, unwinding_choice says).
 */
static inline bool run_opts__dwarf(const struct run_opts *o)
{
	return (o->unwind == UNWIND_DWARF || o->unwind == UNWIND_AUTO) && !o->kernel_only;
}

/* The stack context words of headers: "user", "kernel" or "user + kernel". */
static inline const char *run_opts__stack_context(const struct run_opts *o)
{
	if (o->user_only)
		return "user";
	if (o->kernel_only)
		return "kernel";
	return "user + kernel";
}

/* Whether the run samples on-CPU stacks, and whether it traces off-CPU time. */
static inline bool run_opts__on_cpu(const struct run_opts *o)
{
	return o->mode != MODE_OFF_CPU;
}

static inline bool run_opts__off_cpu(const struct run_opts *o)
{
	return o->mode != MODE_ON_CPU;
}

#endif
