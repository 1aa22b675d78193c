// SPDX-License-Identifier: GPL-2.0
/*
 * The stack copies go on while a table compiles. A sample whose leaf is in
 * a library the process mapped since its last read is sent as a stack copy
 * for a second after a read (native_proc.copies_until_ns), and the run's
 * copies last while its drains renew their lease (first_copies.c). Both
 * clocks ran on while the main thread compiled a table, which drains
 * nothing: a library's compile under emulation (liblzma's, libc's under
 * TCG) outlasted both, and the rest of the process's samples in it, 50-155
 * of xz's in the kernel matrix, were walked by frame pointers, which it
 * does not keep. The copies' reader thread holds what comes meanwhile.
 *
 * So a compile holds them: before it, every window still open (and that of
 * the process being read) is moved to NATIVE_COMPILE_HOLD_NS ahead, and the
 * lease with them (the store's hold hook); after it, each window is what it
 * was plus the compile's time, as if its clock had stopped, and the lease
 * is renewed as a drain renews it.
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
	if (s->hold)
		s->hold(s->hold_ctx, t0 + NATIVE_COMPILE_HOLD_NS);
	return t0;
}

void native_hold__end(struct native_store *s, uint64_t t0)
{
	uint64_t now = (uint64_t)mono_ns();

	write_windows(s, t0, now > t0 ? now - t0 : 0, 0);
	if (s->hold)
		s->hold(s->hold_ctx, 0);
}

void native_store__on_compile(struct native_store *s, void (*hold)(void *ctx, uint64_t until_ns),
			      void *ctx)
{
	s->hold = hold;
	s->hold_ctx = ctx;
}
