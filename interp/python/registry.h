/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The run's Python processes: which process images run a CPython
 * interpreter (found among their mappings, read through the tracker's
 * checked files), their threads by host tid, and their code objects'
 * names. A process is one image of the tracker (an exec ends it) and its
 * start time: what was learnt of a pid is never used for another process
 * that took the pid.
 */
#ifndef INTERP_PYTHON_REGISTRY_H
#define INTERP_PYTHON_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/proc/proctrack.h"
#include "core/sample/sample.h"
#include "interp/python/python.h"

struct py_registry;

/* One thread of a Python process, by the id our pid namespace gives it. */
struct py_thread_entry {
	pid_t tid;
	uint64_t tstate;
	uint64_t check;
};

struct py_process {
	pid_t pid;
	unsigned int as_id;		/* the image it is (addr_space.id) */
	uint64_t start_ticks;		/* /proc/PID/stat's starttime when found: the process's identity */
	struct py_interp interp;
	char *interp_path;		/* the interpreter's file, as mapped */
	struct py_proc_mem mem;
	struct py_snap *snap;		/* what walks and names read through, reset per walk */
	struct py_codes *codes;
	uint32_t tid_offset;		/* of the tid in glibc's struct pthread (3.10 and before) */
	struct py_thread_entry *threads;	/* sorted by tid */
	size_t nr_threads;
	bool gone;			/* its image ended, or another process took the pid */
	bool rescan;			/* its threads to be read again soon (one was not known) */
	int64_t next_scan_ms;		/* when its threads are read again (monotonic; the run's) */
	bool announced;			/* -v has named it */
	bool over_budget;		/* -v said its names or lines did not fit */
	/* Its real uid when found, (uid_t)-1 if not known: shares of bounded tables go by it. */
	uid_t uid;
};

struct py_registry_stats {
	size_t processes;		/* found and readable, ever */
	size_t refused;			/* interpreters that cannot be read (named in -v) */
	/* Images whose memory could not be opened, and those whose pid another had by then. */
	size_t no_handle, handed_over;
	uint64_t idle;			/* looks at a process that maps one but runs none (yet) */
	size_t live;			/* processes held now */
	size_t threads;			/* threads known now */
	uint64_t thread_scans, thread_scan_failures;
	uint64_t lookups, lookup_failures;	/* frames named, and not */
	/* Of every process, gone or not: what did not fit their budgets (py_codes_held). */
	size_t over_budget;
	uint64_t names_refused, tables_refused, table_bytes_refused;
};

struct py_registry *py_registry__new(void);
void py_registry__free(struct py_registry *r);
/* The tracker whose images r is shown: a process's memory is read only while its pid is its own. */
void py_registry__set_tracker(struct py_registry *r, struct proctrack *pt);

/*
 * Look at image as: the first time, or when its mappings changed since,
 * each executable mapping of a file named like an interpreter (libpython*,
 * python*) is checked (py_detect, then the process's memory). Returns the
 * image's Python process, or NULL (not Python, refused, running no
 * interpreter yet unless chosen by the user: looked at again later, gone,
 * or out of memory). *fresh is set when it was found now.
 */
struct py_process *py_registry__look(struct py_registry *r, const struct addr_space *as,
				     bool chosen, bool *fresh);
/* Whether a file's base name looks like an interpreter's: libpython*, python*. */
bool py_registry__interpreter_name(const char *path);
/* The Python process of image as, without looking; NULL when it has none. */
struct py_process *py_registry__find(const struct py_registry *r, const struct addr_space *as);

/*
 * Read p's threads again (their states, and their tids translated to our
 * pid namespace). Returns how many, or -errno (the process is gone: p->gone).
 */
int py_process__scan_threads(struct py_process *p);
/* p's thread tid, or NULL. */
const struct py_thread_entry *py_process__thread(const struct py_process *p, pid_t tid);

/*
 * Walk thread tid of p now (the perf backend, right after a sample): its
 * frames, leaf first, into out (max), and enum interp_status (with
 * INTERP_TRUNCATED / INTERP_FAULT) into *status. Returns the number of
 * frames (0: none, *status says why).
 */
unsigned int py_process__walk(struct py_process *p, pid_t tid, struct interp_frame *out,
			      unsigned int max, uint32_t *status);
/*
 * The same walk of the thread whose state is at tstate, while that state
 * still holds check (its tid: otherwise INTERP_BAD_THREAD), through snap
 * (reset first). Touches nothing else: the perf backend's reader thread
 * walks by it (app/run/python_early.c).
 */
unsigned int py_thread__walk(const struct py_layout *l, struct py_snap *snap, uint64_t tstate,
			     uint64_t check, struct interp_frame *out, unsigned int max,
			     uint32_t *status);

/*
 * The name, file and line of frame f of p (py_codes__lookup, with the
 * identity f was read with): 0, or -errno (-ESTALE: the code object f ran
 * was freed since, its memory maybe another's, and never named; not a code
 * object; the process cannot be read and the code was never named).
 */
int py_process__name(struct py_process *p, const struct interp_frame *f,
		     struct py_code_info *out);

/* Whether f's code object, with the identity f was read with, is named already (no read). */
bool py_process__named(const struct py_process *p, const struct interp_frame *f);
/* Whether f is a shim frame (3.12+ owner >= 3): not a function, it marks a C call's entry. */
bool py_process__is_shim(const struct py_process *p, const struct interp_frame *f);
/*
 * Whether the run of frames one eval loop call ran ends at frames[i] (leaf
 * first, n frames): every frame before 3.11, the frame entered from C
 * after (3.11 is_entry; 3.12+: the next frame rootward is a shim).
 */
bool py_process__run_end(const struct py_process *p, const struct interp_frame *frames,
			 unsigned int i, unsigned int n);
/* Whether ip of p is the eval loop's, or elsewhere in the interpreter's file. */
bool py_process__in_eval(const struct py_process *p, uint64_t ip);
bool py_process__in_interpreter(const struct py_process *p, const struct addr_space *as,
				uint64_t ip);

/* Image as has ended (exec, exit): its process reads no more memory; its names stay. */
void py_registry__ended(struct py_registry *r, const struct addr_space *as);
/* Image as is freed: its process goes. */
void py_registry__forget(struct py_registry *r, const struct addr_space *as);

void py_registry__stats(const struct py_registry *r, struct py_registry_stats *out);

/* The processes held, in the order they were found. */
size_t py_registry__count(const struct py_registry *r);
struct py_process *py_registry__get(const struct py_registry *r, size_t i);

#endif
