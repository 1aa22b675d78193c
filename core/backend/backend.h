/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The contract between the run and a backend. A backend is a lifecycle
 * with data out: it turns kernel data into struct sample and feeds the
 * pipeline; it prints neither the report nor warnings (its numbers come
 * back through stats, the run prints), and it sees only backend_config.
 */
#ifndef CORE_BACKEND_BACKEND_H
#define CORE_BACKEND_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/agg/pipeline.h"
#include "core/lib/log.h"

struct backend;
/* --cgroup directories (compat/cgroup.h): the run opens them, a backend reads them. */
struct cgroup_dir;

/* A thread of a process running an interpreter, as interp_reader lists them. */
struct interp_tid {
	pid_t pid, tid;
};

/*
 * Reads one thread's interpreted frames now, from any thread: the perf
 * backend's reader thread, right after the sample, so that the frames are
 * those the sample interrupted and not those of the drain, up to 100 ms
 * later. *status INTERP_NONE: not a thread of the processes known;
 * INTERP_NO_THREAD: a thread of a known process, not known itself yet (the
 * sample is read at the drain, which is wanted soon: the main thread
 * learns of the thread there).
 */
struct interp_reader {
	void *ctx;
	unsigned int (*read)(void *ctx, pid_t pid, pid_t tid, struct interp_frame *out,
			     unsigned int max, uint32_t *status);
	/* Whether it knows any thread now: the reader then wakes at each sample. */
	bool (*any)(void *ctx);
	/*
	 * The threads it knows now, at most max of them into out, in tid
	 * order; returns how many it knows (which may be more than max).
	 */
	size_t (*tids)(void *ctx, pid_t *out, size_t max);
	/* The same threads, each with its process (the perf backend chooses among them). */
	size_t (*threads)(void *ctx, struct interp_tid *out, size_t max);
};

/* What to sample and how: what a backend needs of the command line, no more. */
struct backend_config {
	unsigned int frequency;		/* Hz, or 0 when sampling every `period` events */
	uint64_t period;		/* cpu-clock nanoseconds, with frequency 0 */
	int cpu;			/* one CPU, or -1 for all online */
	const pid_t *pids;		/* -p: processes */
	int nr_pids;
	const pid_t *tids;		/* -L: threads */
	int nr_tids;
	bool launch;			/* a command will be started: events follow it */
	/* --cgroup: only tasks in these cgroups or below (both filters apply with -p/-L). */
	const struct cgroup_dir *cgroups;
	int nr_cgroups;
	/* bcc's pinned id maps (--cgroupmap, --mntnsmap), 0 for none (fd 0 is stdin). */
	int cgroupmap_fd;
	int mntnsmap_fd;
	bool user_stacks;		/* false with -K */
	bool kernel_stacks;		/* false with -U */
	bool user_mode_only;		/* only user-mode samples are allowed (plan said so) */
	bool include_idle;		/* -I */
	bool on_cpu;			/* sample stacks on the CPU (cpu-clock) */
	bool off_cpu;			/* sum time switched out, by stack (sched_switch) */
	uint64_t min_block_us;		/* off-CPU intervals outside [min, max] are left out */
	uint64_t max_block_us;
	int state;			/* off-CPU: the switched-out thread's state mask, -1 any */
	bool threads_user_only;		/* off-CPU: offcputime -u */
	bool threads_kernel_only;	/* off-CPU: offcputime -k */
	unsigned int hash_storage_size;	/* bpf: count map entries */
	unsigned int stack_storage_size;	/* bpf: stack map entries */
	/* Not given: the counting program's maps are sized for the rate, up to the above. */
	bool stack_storage_given;
	bool dwarf;			/* user stacks as register + stack snapshots */
	/*
	 * Off-CPU stacks copied at switch-out too (--unwind dwarf, the perf
	 * backend only); under auto they are walked by frame pointers on both.
	 */
	bool off_cpu_dwarf;
	unsigned int stack_dump_size;	/* bytes of user stack per snapshot */
	/*
	 * Under --unwind auto, dwarf is set too: copies where the program does
	 * not unwind (the perf backend; the bpf one until its program exists,
	 * or where it cannot load). app/run/unwind_verdict.c sets both.
	 */
	bool native_unwind; /* --unwind auto: user stacks unwound in the BPF program from tables */
	/*
	 * --unwind auto with dwarf, on events of one task each (-p): whether
	 * the samples of thread tid need stack copies (code it maps keeps no
	 * frame pointers). NULL: every one does. A thread that needs none is
	 * walked by the kernel along frame pointers, no copy taken.
	 */
	bool (*needs_copies)(void *ctx, pid_t tid);
	void *needs_copies_ctx;
	/*
	 * --unwind auto where the bpf backend takes a named process's samples
	 * as stack copies until its tables load: whether process tgid's are
	 * copies for the whole run instead, its tables never loaded, because
	 * its interpreted frames are read from the copy (Node.js: no in-kernel
	 * walk of V8's frames yet). NULL: none are.
	 */
	bool (*copies_for_interp)(void *ctx, pid_t tgid);
	void *copies_for_interp_ctx;
	/* Tests: use the bpf stack-copy program of kernels without bpf_task_pt_regs. */
	bool test_no_task_regs;
	/*
	 * Interpreted frames (Python) wanted: a backend that walks them in the
	 * kernel is told the processes (set_interp); the others mark their
	 * samples for the pipeline to read them (sample.read_interp).
	 */
	bool interp;
	/* ... and read at once from any thread through this, where not NULL. */
	const struct interp_reader *interp_reader;
};

/* A thread of a process running an interpreter, and where its state lives. */
struct interp_thread {
	pid_t tid;
	uint64_t state;			/* its thread state's address */
	uint64_t check;			/* what that state holds while it is this thread's */
};

/* A process running an interpreter, of a layout the in-kernel walk knows (bpf/python_layouts.h). */
struct interp_proc {
	pid_t pid;
	unsigned int layout;
	const struct interp_thread *threads;
	size_t nr_threads;
};

/* What a backend can do here with a config: its answer to probe. */
struct backend_plan {
	int err;		/* 0: it can run; -errno: it cannot (why says why) */
	bool partial;		/* it can, but less well than another might (why says how) */
	bool user_mode_only;	/* it can, without kernel samples (why says what would add them) */
	char why[512];
};

/* Why samples were lost: the warning names the cause and a remedy. */
enum lost_reason {
	LOST_RING_FULL,		/* perf ring buffers */
	LOST_COUNT_MAP_FULL,	/* the in-kernel count table */
	LOST_PERF_BUFFER_FULL,	/* the bpf stack-copy perf buffer */
};

struct backend_stats {
	uint64_t samples;		/* samples taken, before filtering */
	uint64_t lost;			/* samples the kernel could not deliver */
	enum lost_reason lost_reason;
	bool hash_full;			/* the in-kernel count table ran out of room */
	uint64_t malformed_records;	/* ring or perf-buffer records skipped */
	uint64_t sideband_lost;		/* side-band records lost (exits may print [unknown]) */
	uint64_t fp_fallbacks;		/* dwarf: kernel-mode samples with frame-pointer stacks */
	uint64_t stack_copies;		/* dwarf (perf): samples that brought a stack copy */
	uint64_t maps_without_inode;	/* dwarf before 3.16: binaries of exited processes unknown */
	uint64_t drains;		/* mid-run drains of in-kernel tables */
	uint64_t switches;		/* off-CPU: context switches seen */
	uint64_t offcpu_lost;		/* off-CPU intervals dropped: tables full */
	uint64_t offcpu_bad_intervals;	/* switch-in not after switch-out (clock, order) */
	uint64_t offcpu_missed_switch_in;	/* the kernel emitted no event for a switch-in */
	uint64_t offcpu_still_off;	/* threads switched out at the end, counted up to it */
	uint64_t offcpu_interp_waits;	/* waits counted with Python frames read in user space */
	uint64_t offcpu_interp_late;	/* of those, over before their frames were read */
	/* Intervals whose switch-in no event reported, ended from the thread's CPU time. */
	uint64_t offcpu_unreported_in;
	/* --cgroup by the bpf backend's thread table: threads it had no room for (not sampled). */
	uint64_t cgroup_untracked;
	/* bpf in a pid namespace: samples (off-CPU: sums) whose task's ids there were not learnt. */
	uint64_t pidns_unnamed;
	/* --wall: on-CPU time in the kernel, whose samples the kernel withheld, counted anyway. */
	uint64_t kernel_withheld_ns;
	/* bpf stack maps: samples whose stack could not be taken (the report's [Missed ...]). */
	uint64_t user_stacks_lost;
	uint64_t kernel_stacks_lost;
	uint64_t stack_overflows;	/* collisions in a first stack map, taken by its overflow */
	uint64_t stacks_no_room;	/* of the lost: the stack map had no free element */
	uint64_t orphan_stacks;		/* stacks cleared without a count (count table full) */
	uint64_t stale_stacks;		/* stack ids that named no stack when read */
	/* bpf map sizes in use: smaller than asked when locked-memory limits refused. */
	unsigned int hash_storage_size;
	unsigned int stack_storage_size;
	bool maps_shrunk;		/* those sizes are below the ones asked */
	/* Memory of the perf rings read in user space and of the records copied out of them. */
	size_t ring_bytes;		/* the mmap rings */
	uint64_t ring_data;		/* bytes of records the kernel wrote into them */
	size_t copy_bytes;		/* buffers of records copied out (stack copies, mostly) */
	size_t copies_peak;		/* most bytes of records waiting for a drain */
	size_t copies_budget;		/* the most that may wait */
};

struct backend_ops {
	const char *name;
	/* Whether and how this backend can run here; fills plan, changes nothing else. */
	void (*probe)(const struct backend_config *cfg, struct backend_plan *plan);
	/*
	 * Set up events feeding p; target is the launched command's pid, or -1.
	 * Returns 0 or -errno with a one-line reason in err.
	 */
	int (*open)(struct backend **b, const struct backend_config *cfg, struct pipeline *p,
		    pid_t target, struct errmsg *err);
	int (*start)(struct backend *b, struct errmsg *err);
	/* Block until data may be ready, wake_fd is readable, or timeout. */
	int (*wait)(struct backend *b, int wake_fd, int timeout_ms);
	/* Move what the kernel has into the pipeline (all of it once stopped). */
	int (*drain)(struct backend *b);
	/* Stop sampling; what is buffered stays for the next drain. */
	void (*stop)(struct backend *b);
	void (*stats)(const struct backend *b, struct backend_stats *st);
	void (*close)(struct backend *b);
	/*
	 * Optional (a backend that walks interpreters in the kernel): every
	 * process running one, now; a pid not given is no longer one. procs
	 * come in the order they are to be kept: a backend whose tables cannot
	 * hold them all walks the first *kept and forgets the others. Returns
	 * 0 or -errno; the walk of a layout that cannot load is named in err.
	 */
	int (*set_interp)(struct backend *b, const struct interp_proc *procs, size_t nr,
			  size_t *kept, struct errmsg *err);
};

#endif
