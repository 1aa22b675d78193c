/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bpf backend's --unwind dwarf: the stack-copy program (bpf/dwarf.bpf.c)
 * on the same events instead of the counting one, its records read from a
 * perf event array's rings and handed to the pipeline as snapshots to unwind.
 */
#ifndef BPFBACKEND_DWARF_H
#define BPFBACKEND_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"
#include "core/lib/log.h"

struct profile_bpf;
struct bpf_dwarf;
struct ring_set;

/* A stack map value by id, or NULL: the backend's cached lookup. */
typedef const uint64_t *(*stack_lookup_fn)(void *ctx, int32_t id);

struct bpf_dwarf_opts {
	struct pipeline *pipeline;
	const struct backend_config *cfg;	/* -C, -F/-c, --stack-dump-size */
	struct profile_bpf *counting;
	int nr_cpus;			/* possible CPUs */
	bool task_regs_wanted;
	stack_lookup_fn lookup;
	void *lookup_ctx;
	/* Locked-memory pages other rings of the run take (the side-band's). */
	uint64_t reserved_pages;
	/*
	 * The stack copies' rings carry the side-band records too (mmap, comm,
	 * fork, exit), as the perf backend's sample rings do: no ring set of
	 * its own, with its own reader thread, and small rings a fork storm
	 * overflows.
	 */
	bool track_tasks;
	/*
	 * Python frames walked in the kernel at each sample, on the counting
	 * program's Python tables (the walks loaded by backend-bpf/python.c
	 * end in this object's dwarf_py_end).
	 */
	bool python;
	/*
	 * The copies of --unwind auto's samples of processes the native
	 * unwinder's tables do not have yet (bpf/native.bpf.h tail-calls the
	 * *_handed program; bpf_dwarf__prog_fd is that one): without the
	 * Python walk, the rings planned for a few of them
	 * (BPF_DWARF_HANDED_RATE a CPU), the events left to the counting
	 * program.
	 */
	bool handed;
	/*
	 * Handed, and for processes left to copies the whole run (Node's,
	 * native_store__copies_only) too: the rings as small (a real-time
	 * reader empties them within milliseconds; sized for the rate, 8 MB
	 * a ring set of 2 CPUs, whether a Node process runs or not), their
	 * reader holding as much as the sampling rings' does (at the handed
	 * rings' 128 KiB, 0.9-1.9 MB of Node's copies went through the spill
	 * file in 3 s).
	 */
	bool continuous;
};

/*
 * The handed copies' rings: planned for BPF_DWARF_HANDED_RATE copies a
 * second a CPU (a new process's first samples), at most
 * BPF_DWARF_HANDED_PAGES data pages each (256 KiB: 4 copies of the deepest
 * stacks, most are a few KiB, read by a real-time reader thread within
 * milliseconds); their reader
 * holds BPF_DWARF_HANDED_HELD bytes before it spills to a file
 * (ring_set__hold_at_most). The copies are the run's memory only while a
 * process's tables are being made.
 */
#define BPF_DWARF_HANDED_RATE 100
#define BPF_DWARF_HANDED_PAGES 64
#define BPF_DWARF_HANDED_HELD (128u << 10)
/*
 * Their copies' size, whatever --stack-dump-size says (the copies of
 * --unwind dwarf): the walk they stand in for has no such limit, and a
 * shallow stack sends only what it has. At 16 KiB, Python 3.11's first
 * samples (its imports) were cut, with a warning to raise
 * --stack-dump-size that a default run should not print.
 */
#define BPF_DWARF_HANDED_DUMP 61440u

/*
 * Load the stack-copy program sharing the maps of the loaded counting
 * program, and open the rings of its perf event array (read by a ring set's
 * reader thread). Returns NULL with errno set and a reason in errm.
 */
struct bpf_dwarf *bpf_dwarf__open(const struct bpf_dwarf_opts *o, struct errmsg *errm);
/*
 * Whether the kernel has bpf_task_pt_regs (5.15), which the newest variant
 * needs; it also sends kernel stacks in its records instead of by stack id.
 */
bool bpf_dwarf__task_regs_supported(void);
/* The most bytes of stack a copy takes (profile_config.dump_chunks is made from it). */
unsigned int bpf_dwarf__dump_size(const struct bpf_dwarf *d);
/* Whether the loaded variant is that one: kernel-mode samples get user registers. */
bool bpf_dwarf__has_task_regs(const struct bpf_dwarf *d);
/* The program the sampling events run (or, handed, that the native unwinder tail-calls). */
int bpf_dwarf__prog_fd(const struct bpf_dwarf *d);
/* Whether Python frames are walked at the sample: opts.python, and the kernel took the programs. */
bool bpf_dwarf__python(const struct bpf_dwarf *d);
/* Samples whose Python frames were sent but not all joined (records out of order). */
uint64_t bpf_dwarf__py_lost(const struct bpf_dwarf *d);
/* The stack copies' rings, for waiting on them (ring_set__wait_sets). */
struct ring_set *bpf_dwarf__ring_set(const struct bpf_dwarf *d);
/*
 * What the reader thread copied goes to the pipeline; with now, also what
 * is still in the rings (a record under their watermark waits there until
 * the reader looks again, up to READER_IDLE_MS where the rings were quiet).
 */
int bpf_dwarf__drain(struct bpf_dwarf *d, bool now);
/* After the sampling events are disabled: the next drain is the last. */
void bpf_dwarf__stop(struct bpf_dwarf *d);
/* Samples lost when the rings were full. */
uint64_t bpf_dwarf__lost(const struct bpf_dwarf *d);
/* Records too short for what they claim. */
uint64_t bpf_dwarf__bad_records(const struct bpf_dwarf *d);
void bpf_dwarf__close(struct bpf_dwarf *d);

/*
 * Whether the kernel accepts the program, and which variant: the one with
 * bpf_task_pt_regs (5.15) when task_regs_wanted and it loads (tests ask for
 * the other on this kernel). Returns 0 or -errno.
 */
int bpf_dwarf__probe(struct profile_bpf *counting, bool task_regs_wanted, bool *task_regs);

/* The bytes of each piece of a stack copy: the loaded variant's. */
unsigned int bpf_dwarf__piece(const struct bpf_dwarf *d);

/*
 * profile_config.dump_chunks for --stack-dump-size bytes in pieces of
 * `piece` bytes: PROFILE_DUMP_UNITs, capped.
 */
unsigned int bpf_dwarf__chunks(unsigned int dump_size, unsigned int piece);

/* Test seam: load Linux 4.9's variant (pieces on the BPF stack) on any kernel. */
extern bool bpf_dwarf__test_pieces_on_stack;
/* Tests: the kernel refuses the stack-copy programs at open (EACCES). */
extern bool bpf_dwarf__test_refuse;

#endif
