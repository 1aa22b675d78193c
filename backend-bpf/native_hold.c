// SPDX-License-Identifier: GPL-2.0
/*
 * A process's window of stack copies stays open while a table compiles.
 * A sample whose leaf is in a library the process mapped since its last
 * read is sent as a stack copy for a second after a read
 * (native_proc.copies_until_ns), but the clock ran on while the main
 * thread compiled another table (or this process's own), which reads no
 * process meanwhile: a library's compile under emulation (liblzma's,
 * libc's under TCG) outlasted it, and the rest of xz's samples in liblzma,
 * 50-245 in the kernel matrix, were walked by frame pointers, which it
 * does not keep.
 *
 * So a compile holds them: before it, every window still open (and that of
 * the process being read) is moved NATIVE_COMPILE_HOLD_NS ahead; after it,
 * each is what it was plus the compile's time, as if its clock had stopped.
 * The copies themselves go on only while the run's lease does (its reader
 * renews it while few copies wait for a drain: first_copies.c).
 */
#include "backend-bpf/native_internal.h"

#include <bpf/bpf.h>

#include "core/lib/clock.h"

/* Whether np's window is held by a compile that started at t0. */
static bool held(const struct native_store *s, const struct nproc *np, uint64_t t0)
{
	return !np->copies_only && (np->copies_until_ns > t0 || np == s->reading);
}

static void write_window(const struct native_store *s, const struct nproc *np, uint64_t until)
{
	struct native_proc val = {
		.gen = np->gen,
		.nr_pages = (__u32)np->nr_entries,
		.copies_until_ns = until,
	};
	__u32 key = (__u32)np->tgid;

	/* Only over the entry it has: a process dropped meanwhile is not put back. */
	bpf_map_update_elem(s->fds.procs, &key, &val, BPF_EXIST);
}

static void write_windows(struct native_store *s, uint64_t t0, uint64_t shift, uint64_t until)
{
	const struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&s->procs, bkt, ent) {
		struct nproc *np = ent->value;

		if (!held(s, np, t0))
			continue;
		/* The process being read with no window open gets its own back (its read sets one). */
		if (!until && np->copies_until_ns > t0)
			np->copies_until_ns += shift;
		write_window(s, np, until ? until : np->copies_until_ns);
	}
}

uint64_t native_hold__begin(struct native_store *s)
{
	uint64_t t0 = (uint64_t)mono_ns();

	write_windows(s, t0, 0, t0 + NATIVE_COMPILE_HOLD_NS);
	return t0;
}

void native_hold__end(struct native_store *s, uint64_t t0)
{
	uint64_t now = (uint64_t)mono_ns();

	write_windows(s, t0, now > t0 ? now - t0 : 0, 0);
}
