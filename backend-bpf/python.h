/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames walked in the kernel (bpf/python.bpf.c): walks loaded per
 * layout, the tables of Python processes and threads, and each count's
 * Python stack read back at its drain.
 */
#ifndef BACKEND_BPF_PYTHON_H
#define BACKEND_BPF_PYTHON_H

#include <stdint.h>

#include <stdbool.h>
#include <sys/types.h>

#include "bpf/profile_maps.h"
#include "bpf/python_maps.h"
#include "core/backend/backend.h"
#include "core/lib/log.h"
#include "core/sample/sample.h"

struct bpf_python;
struct bpf_object;

/*
 * Sizes of the Python walk's tables: processes, threads, and the pieces of
 * a generation's stacks (16 frames each; a 50-deep stack takes 4).
 */
#define PY_MAX_PROCS 1024
#define PY_MAX_THREADS_IN_KERNEL 16384
#define PY_MAX_PIECES_STORED 8192
/* Threads noted unknown between two emptyings of py_unknown (a second). */
#define PY_MAX_UNKNOWN 256
/* Off-CPU stacks stored between two looks of user space (a few ms) that it names early. */
#define PY_MAX_FRESH 1024


/* The object whose Python maps the walks use, and their fds. */
struct bpf_python_target {
	const struct bpf_object *host;	/* the counting or the off-CPU program's */
	int procs_fd, threads_fd, progs_fd;
	/* Threads noted unknown (py_unknown), and the stat slot counting them in stats_fd. */
	int unknown_fd, stats_fd, nr_cpus;
	unsigned int unknown_slot;
	/* Off-CPU: stacks stored since user space looked (py_fresh), counted in fresh_slot. */
	int fresh_fd;
	unsigned int fresh_slot;
	/* Stacks by generation; for off-CPU one map for the run ([0], [1] = -1): never emptied. */
	int stacks_fd[2];
	bool offcpu;			/* the walks are tracepoint programs of bpf/python_offcpu.bpf.c */
	/*
	 * The host set the walks' end (slot 0 of progs_fd) itself: the stack
	 * copies' dwarf_py_end (bpf/dwarf.bpf.h). The walks' objects load
	 * their walk alone.
	 */
	bool end_given;
};

/* NULL when out of memory. */
struct bpf_python *bpf_python__new(const struct bpf_python_target *t);
void bpf_python__free(struct bpf_python *bp);
/*
 * The Python processes now (backend_ops.set_interp): each layout's walk
 * loaded when first needed (a refusal named in err, once), the tables set
 * to the first *kept of procs (at most PY_MAX_PROCS) and their threads (a
 * full thread table leaves the last out). 0 or -errno.
 */
int bpf_python__set(struct bpf_python *bp, const struct interp_proc *procs, size_t nr,
		    size_t *kept, struct errmsg *err);
/* sample.interp_status for a walk that gave no frames (PY_STACK_*, not a hash). */
uint32_t bpf_python__why(uint64_t why);
/* sample.interp_status for a walk's frames, from its PY_WALK_* status. */
uint32_t bpf_python__walked(uint32_t walk_status);
/* The Python part of s from a key's tgid and py_stack (drained from generation gen). */
void bpf_python__sample(struct bpf_python *bp, unsigned int gen, uint32_t tgid, uint64_t py_stack,
			struct sample *s);
/* The drain of generation gen is over: its stacks go once its map is half full (the frames given are no longer valid). */
int bpf_python__clear(struct bpf_python *bp, unsigned int gen);
/* A drain without clearing (the last ones) is over: the frames given are no longer valid. */
void bpf_python__end_drain(struct bpf_python *bp);
/*
 * Whether the walk noted threads it did not know, or stored stacks (off-CPU),
 * since the last call of bpf_python__take_unknown or bpf_python__take_fresh
 * (a read of a per-CPU stat or two: for polling).
 */
bool bpf_python__noticed(const struct bpf_python *bp);
/*
 * The processes of the threads noted unknown, each given to fn (a process
 * may come more than once); the notes are forgotten once a second, so that
 * a thread noted that runs no Python is noted again at most that often.
 */
void bpf_python__take_unknown(struct bpf_python *bp, void (*fn)(void *ctx, pid_t tgid),
			      void *ctx);
/*
 * Off-CPU: each stack stored since the last call, given to fn with its
 * process while it most likely lives: a thread may wait in it until its
 * process ends, and its interval be drained only then.
 */
void bpf_python__take_fresh(struct bpf_python *bp,
			    void (*fn)(void *ctx, pid_t tgid, const struct interp_frame *frames,
				       unsigned int nr),
			    void *ctx);
/* Whether any Python process is walked now. */
bool bpf_python__walking(const struct bpf_python *bp);
/* Stacks whose pieces were not all there (their map was full). */
uint64_t bpf_python__lost(const struct bpf_python *bp);

#endif
