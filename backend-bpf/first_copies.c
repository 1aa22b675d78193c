// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind auto on the bpf backend: a sample of a process whose tables the
 * native unwinder has not loaded yet (just started, being compiled) is sent
 * as a stack copy, not walked by frame pointers: the counting program
 * tail-calls the stack-copy program (bpf/native.bpf.h, NATIVE_PROG_COPY),
 * whose records are unwound here as --unwind dwarf's are. A stock binary's
 * first samples were one to three frames deep otherwise, and how many of
 * them there were depended on how soon its tables were compiled (most of a
 * short program's under emulation), so the same command printed different
 * stacks from run to run. The copies stop as the tables load; a kernel that
 * refuses the copy program leaves those samples to frame pointers, as
 * before, counted in -v.
 *
 * For the processes a run names (a command, -p, -L), whose first samples
 * are the run's subject. Not system-wide (or --cgroup): there a busy host's
 * new processes take them by the thousand (a compile loop's cc1, as and gcc:
 * 1,200 copies in 10 s at 999 Hz, 6% of the samples), and the unwinder,
 * the rings and their reader cost 2-2.5 MB more at the peak (35.0-35.4 MB
 * against 32.1-33.3, issue 45's target 35) and a tenth more CPU; those
 * samples stay frame-pointer walks, counted in -v.
 *
 * The processes that run Node.js take copies for the whole run, on every
 * run (system-wide too): their JavaScript frames are read from them
 * (issue 48); their reader then holds as much as a sampling ring's.
 */
#include "backend-bpf/bpfbackend_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "backend-bpf/dwarf.h"
#include "backend-bpf/native_store.h"
#include "backend-perfring/ringset.h"
#include "bpf/native_maps.h"
#include "core/lib/clock.h"

/* The copy program in the slots the native counting program tail-calls; 0 or -errno. */
static int hand_over(struct backend *b)
{
	struct bpf_map *m = bpf_object__find_map_by_name(b->native, "native_progs");
	int fd = bpf_dwarf__prog_fd(b->first_copies);
	__u32 user = NATIVE_PROG_COPY, kernel = NATIVE_PROG_COPY_KERNEL;

	if (!m || fd < 0)
		return -ENOENT;
	/*
	 * Kernel-mode samples too: the older variants read the user registers
	 * at the top of the task's kernel stack, and take the kernel stack
	 * into the generation the counting program counts into, which the
	 * drain reads the copies before it empties.
	 */
	if (bpf_map_update_elem(bpf_map__fd(m), &user, &fd, BPF_ANY) ||
	    bpf_map_update_elem(bpf_map__fd(m), &kernel, &fd, BPF_ANY))
		return -errno;
	return 0;
}

static void reader_alive(void *ctx, size_t backlog);

void bpf_first_copies__open(struct backend *b)
{
	const struct backend_config *c = b->cfg;
	bool task_regs = !c->test_no_task_regs && bpf_dwarf__task_regs_supported();
	bool names = bpf_backend__names_processes(c);
	bool node = c->copies_for_interp && b->native_store;
	struct errmsg errm = { .text = "" };
	int err;

	if (!names)
		pr_info("bpf: samples of processes the tables do not have yet by frame pointers "
			"(system-wide, no stack copies: a busy host's new processes would take "
			"them by the thousand)%s\n",
			node ? "; copies only of the processes that run Node.js" : "");
	if (!names && !node)
		return;
	b->first_copies = bpf_backend__open_dwarf(b, task_regs, true, node, &errm);
	err = b->first_copies ? hand_over(b) : -errno;
	if (!err) {
		b->first_copies_since = (uint64_t)mono_ns();
		if (names)
			b->config.flags |= PROFILE_CFG_COPY_NEW;
		ring_set__on_reader_alive(bpf_dwarf__ring_set(b->first_copies), reader_alive, b);
		/* Node's processes: copies the whole run, for the walk of their JavaScript frames. */
		if (node)
			native_store__copies_only(b->native_store, c->copies_for_interp,
						  c->copies_for_interp_ctx);
		return;
	}
	pr_info("bpf: samples of %s by frame pointers: the stack copies were refused (%s)\n",
		names ? "processes the tables do not have yet" : "the processes that run Node.js",
		errmsg__reason(&errm, err));
	bpf_dwarf__close(b->first_copies);
	b->first_copies = NULL;
}

/*
 * How long the program takes copies after a drain, or after the copies'
 * reader thread last looked at their rings: past the longest wait between
 * two drains (250 ms) and the reader's longest sleep (READER_IDLE_MS, 160
 * ms). A stopped profiler's reader copies nothing, and the rings hold a
 * few: its samples are counted in the kernel meanwhile.
 */
#define FIRST_COPIES_LEASE_NS 400000000ull
/* The reader renews it at most this often (a config write each time). */
#define FIRST_COPIES_RENEW_NS (FIRST_COPIES_LEASE_NS / 4)
/*
 * The reader renews it while the copies waiting for a drain are fewer than
 * FIRST_COPIES_BACKLOG bytes: copies are taken no faster than the main
 * thread unwinds them, with that much room. Renewed for as long as the
 * reader was alive, Linux 5.4's guest under TCG took three times the
 * copies (its main thread slowed by them, new processes were read later,
 * and took more); past the bound their samples go by frame pointers,
 * counted, as before. Not bounded by time: node's symbols read under TCG
 * on 4.9 held the first drain for seconds, and a 2 s bound left 706 of
 * 1,014 samples without their JavaScript frames.
 */
#define FIRST_COPIES_BACKLOG (8u << 20)

void bpf_first_copies__renew(struct backend *b)
{
	int64_t now = mono_ns();

	if (!b->first_copies)
		return;
	__atomic_store_n(&b->lease_started, true, __ATOMIC_RELAXED);
	bpf_backend__set_lease(b, (uint64_t)now + FIRST_COPIES_LEASE_NS, false);
}

/*
 * From the copies' reader thread, alive and with room: the lease goes on
 * while the main thread is busy (the first drain of a -p run of node read
 * its 9 MB of symbols for over 400 ms, and 25 of its 131 samples went by
 * frame pointers, without their JavaScript frames; a library's table
 * compiled under emulation outlasted it too), once the run renewed it.
 */
static void reader_alive(void *ctx, size_t backlog)
{
	struct backend *b = ctx;
	int64_t now = mono_ns();

	if (backlog >= FIRST_COPIES_BACKLOG || !__atomic_load_n(&b->lease_started, __ATOMIC_RELAXED) ||
	    now - b->lease_renewed_ns < (int64_t)FIRST_COPIES_RENEW_NS)
		return;
	b->lease_renewed_ns = now;
	bpf_backend__set_lease(b, (uint64_t)now + FIRST_COPIES_LEASE_NS, true);
}

struct ring_set *bpf_first_copies__ring_set(const struct backend *b)
{
	return b->first_copies ? bpf_dwarf__ring_set(b->first_copies) : NULL;
}

void bpf_first_copies__stop(struct backend *b)
{
	if (b->first_copies)
		bpf_dwarf__stop(b->first_copies);
}

void bpf_first_copies__stats(const struct backend *b, struct backend_stats *st)
{
	uint64_t lost;

	if (!b->first_copies)
		return;
	ring_set__memory(bpf_dwarf__ring_set(b->first_copies), st);
	lost = bpf_dwarf__lost(b->first_copies);
	st->lost += lost;
	if (lost)
		st->lost_reason = LOST_PERF_BUFFER_FULL;
	st->malformed_records += bpf_dwarf__bad_records(b->first_copies);
}

void bpf_first_copies__close(struct backend *b)
{
	bpf_dwarf__close(b->first_copies);
	b->first_copies = NULL;
}
