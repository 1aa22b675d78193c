// SPDX-License-Identifier: GPL-2.0
/*
 * The unwinder's accessors on a real snapshot, without root: this process
 * copies its own registers and stack (as the kernel does for a sample) in a
 * chain of functions built without frame pointers, then unwinds the copy
 * against its own mappings, as the profiler would for another process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/ucontext.h>
#include <sys/wait.h>

#include "core/proc/proctrack.h"
#include "core/sym/symbolize.h"
#include "tests/support/tests.h"
#include "unwind/debugframe.h"
#include "unwind/image.h"
#include "unwind/unwind.h"

#define COPY_MAX 16384

struct snapshot {
	struct unwind_regs regs;
	unsigned char stack[COPY_MAX];
	size_t size;
};

/* The end of the mapping holding sp: the copy must not read past it. */
static uint64_t stack_end(uint64_t sp)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi, end = 0;
	char line[512];

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp >= lo && sp < hi)
			end = hi;
	if (f)
		fclose(f);
	return end;
}

/*
 * ip, sp and bp at one point of this function, then the stack above sp: a
 * sample. Copied a byte at a time, not by memcpy, where AddressSanitizer
 * would take the callers' redzones for an overflow (the kernel copies them
 * as any other stack bytes).
 */
__attribute__((noinline, optimize("omit-frame-pointer"), no_sanitize("address"))) static void
capture(struct snapshot *s)
{
	uint64_t ip, sp, bp, end;
	const volatile unsigned char *from;

	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	end = stack_end(sp);
	s->size = end - sp < COPY_MAX ? end - sp : COPY_MAX;
	from = (const volatile unsigned char *)sp;
	for (size_t i = 0; i < s->size; i++)
		s->stack[i] = from[i];
	s->regs.ip = ip;
	s->regs.sp = sp;
	s->regs.bp = bp;
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void unwind_level1(struct snapshot *s)
{
	capture(s);
	__asm__ volatile("" ::: "memory");	/* not a tail call */
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void unwind_level2(struct snapshot *s)
{
	unwind_level1(s);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void unwind_level3(struct snapshot *s)
{
	unwind_level2(s);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline, optimize("omit-frame-pointer"))) void unwind_level2b(struct snapshot *s)
{
	unwind_level1(s);
	__asm__ volatile("" ::: "memory");
}

/* Two samples of one thread whose inner frames differ and whose callers are the same. */
__attribute__((noinline, optimize("omit-frame-pointer"))) void unwind_level3_twice(struct snapshot *a,
										  struct snapshot *b)
{
	unwind_level2(a);
	unwind_level2b(b);
	__asm__ volatile("" ::: "memory");
}

static struct snapshot snap;
static struct proctrack *pt;
static struct addr_space *as;
static struct symbolizer *sym;
static struct unwinder *uw;

static void setup(void)
{
	unwind_level3(&snap);
	pt = proctrack__new();
	ck_assert_ptr_nonnull(pt);
	as = proctrack__addr_space(pt, getpid());
	ck_assert_ptr_nonnull(as);
	sym = symbolizer__new();
	uw = unwinder__new();
	ck_assert_ptr_nonnull(uw);
}

static void teardown(void)
{
	unwinder__free(uw);
	symbolizer__free(sym);
	proctrack__free(pt);
}

static const char *name_of(uint64_t ip, bool leaf)
{
	struct frame_sym fs;

	symbolizer__user(sym, as, leaf ? ip : ip - 1, &fs);
	return fs.name ? fs.name : "[unknown]";
}

START_TEST(unwinds_a_copy_through_functions_without_frame_pointers)
{
	uint64_t ips[MAX_STACK_DEPTH];
	unsigned int n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, ips,
					  MAX_STACK_DEPTH);
	bool main_seen = false;

	ck_assert_uint_ge(n, 5);
	ck_assert_str_eq(name_of(ips[0], true), "capture");
	ck_assert_str_eq(name_of(ips[1], false), "unwind_level1");
	ck_assert_str_eq(name_of(ips[2], false), "unwind_level2");
	ck_assert_str_eq(name_of(ips[3], false), "unwind_level3");
	for (unsigned int i = 4; i < n; i++)
		main_seen |= !strcmp(name_of(ips[i], false), "main");
	ck_assert_msg(main_seen, "main not reached in %u frames", n);
}
END_TEST

START_TEST(a_repeated_snapshot_is_replayed_from_the_cache_identically)
{
	uint64_t first[MAX_STACK_DEPTH], second[MAX_STACK_DEPTH];
	unsigned int n1, n2;
	struct unwind_stats st;

	n1 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, first, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st);
	ck_assert_uint_eq(st.cached_steps, 0);
	n2 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, second, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st);
	ck_assert_uint_eq(n1, n2);
	ck_assert_mem_eq(first, second, n1 * sizeof(first[0]));
	/*
	 * Every step but the leaf's from the cache, except where two of this
	 * stack's steps hash to one slot of the direct-mapped cache: each then
	 * evicts the other, two misses (8 of 10 once in CI, by ASLR's draw).
	 */
	ck_assert_uint_ge(st.cached_steps + 2, n1 - 1);
	ck_assert_uint_le(st.cached_steps, n1 - 1);
}
END_TEST

/*
 * The bpf backend's stack copies arrive in pieces, and the unwinder reads
 * them where they are: the copy cut into pieces held apart (each its own
 * allocation, so a read past a piece's end is a wrong word, or an ASan
 * report) unwinds to the same frames as the copy in one, walked and then
 * replayed from the cache. Whole pieces, then halving ones where the
 * program's read crossed the end of the stack; 12-byte pieces put most
 * words across two; 65536 is the whole copy in one piece, as Linux 5.15's
 * program sends it.
 */
START_TEST(a_copy_in_pieces_unwinds_as_the_copy_in_one)
{
	static const size_t sizes[] = { 12, 384, 4096, 1000, 65536 };
	uint64_t whole[MAX_STACK_DEPTH], walked[MAX_STACK_DEPTH], replayed[MAX_STACK_DEPTH];
	unsigned int n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, whole,
					  MAX_STACK_DEPTH);

	ck_assert_uint_ge(n, 5);
	for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t piece = sizes[k], nr = 0, off = 0;
		unsigned char **pieces = calloc(snap.size / 8 + 1, sizeof(*pieces));
		uint32_t *lens = calloc(snap.size / 8 + 1, sizeof(*lens));
		struct unwinder *fresh = unwinder__new();
		unsigned int n1, n2;

		ck_assert_ptr_nonnull(pieces);
		ck_assert_ptr_nonnull(lens);
		ck_assert_ptr_nonnull(fresh);
		/* Whole pieces for the first frames, then 2048, 1024, ... 8 (again) to the end. */
		for (size_t half = 2048; off < snap.size; nr++) {
			size_t len = off < 256 ? piece : half;

			if (off >= 256)
				half = half > 8 ? half / 2 : 2048;
			if (len > snap.size - off)
				len = snap.size - off;
			pieces[nr] = malloc(len);
			ck_assert_ptr_nonnull(pieces[nr]);
			memcpy(pieces[nr], snap.stack + off, len);
			lens[nr] = (uint32_t)len;
			off += len;
		}
		n1 = unwinder__unwind_pieces(fresh, as, &snap.regs, NULL,
					     (const unsigned char *const *)pieces, lens, (unsigned int)nr,
					     snap.size, walked, MAX_STACK_DEPTH);
		n2 = unwinder__unwind_pieces(fresh, as, &snap.regs, NULL,
					     (const unsigned char *const *)pieces, lens, (unsigned int)nr,
					     snap.size, replayed, MAX_STACK_DEPTH);
		unwinder__free(fresh);
		for (size_t i = 0; i < nr; i++)
			free(pieces[i]);
		free(pieces);
		free(lens);
		ck_assert_msg(n1 == n && n2 == n, "pieces of %zu: %u and %u frames, not %u", piece,
			      n1, n2, n);
		ck_assert_mem_eq(walked, whole, n * sizeof(whole[0]));
		ck_assert_mem_eq(replayed, whole, n * sizeof(whole[0]));
	}
}
END_TEST

/*
 * A sample whose innermost frames are new runs libunwind on those only and
 * replays its callers' steps from the cache (the deep outer frames of a
 * compiler's samples are mostly the same): the frames are what a new
 * unwinder finds.
 */
START_TEST(new_inner_frames_rejoin_the_cache_for_their_callers)
{
	static struct snapshot a, b;
	uint64_t first[MAX_STACK_DEPTH], second[MAX_STACK_DEPTH], fresh[MAX_STACK_DEPTH];
	struct unwinder *other = unwinder__new();
	struct unwind_stats st;
	unsigned int n1, n2, n3;
	uint64_t cached;

	ck_assert_ptr_nonnull(other);
	unwind_level3_twice(&a, &b);
	n1 = unwinder__unwind(uw, as, &a.regs, NULL, a.stack, a.size, first, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st);
	cached = st.cached_steps;
	n2 = unwinder__unwind(uw, as, &b.regs, NULL, b.stack, b.size, second, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st);
	n3 = unwinder__unwind(other, as, &b.regs, NULL, b.stack, b.size, fresh, MAX_STACK_DEPTH);
	unwinder__free(other);
	ck_assert_uint_ge(n1, 6);
	ck_assert_str_eq(name_of(second[2], false), "unwind_level2b");
	ck_assert_str_eq(name_of(second[3], false), "unwind_level3_twice");
	ck_assert_uint_eq(n2, n3);
	ck_assert_mem_eq(second, fresh, n2 * sizeof(second[0]));
	/*
	 * The callers of unwind_level3_twice: replayed, not walked again. Two
	 * may not be: the cache is direct-mapped (1,024 slots at first), and
	 * where ASLR puts the stack, two of the 15 or so steps of a and b share
	 * a slot in about one run of 15 (one step walked again).
	 */
	ck_assert_uint_ge(st.cached_steps - cached, n2 - 7);
}
END_TEST

/*
 * Images idle for a while go, with their descriptors; the step cache stays,
 * and a sample it cannot replay whole reads them again: the frames are
 * what a new unwinder finds.
 */
START_TEST(idle_images_are_dropped_and_read_again)
{
	static struct snapshot a, b;
	uint64_t first[MAX_STACK_DEPTH], second[MAX_STACK_DEPTH], fresh[MAX_STACK_DEPTH];
	struct unwinder *other = unwinder__new();
	struct unwind_stats st;
	unsigned int n1, n2, n3, dropped;
	size_t fds;

	ck_assert_ptr_nonnull(other);
	unwind_level3_twice(&a, &b);
	n1 = unwinder__unwind(uw, as, &a.regs, NULL, a.stack, a.size, first, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n1, 6);
	ck_assert_uint_eq(unwinder__drop_idle(uw, 60000), 0);	/* just used */
	unwinder__stats(uw, &st);
	ck_assert_uint_ge(st.images, 1);
	fds = open_fds();
	dropped = unwinder__drop_idle(uw, 0);
	ck_assert_uint_eq(dropped, st.images);
	unwinder__stats(uw, &st);
	ck_assert_uint_eq(st.images, 0);
	ck_assert_uint_eq(st.images_dropped, dropped);
	ck_assert_uint_le(open_fds(), fds - 1);	/* this binary's at least */

	/* The caller of unwind_level1 differs: libunwind runs from there. */
	n2 = unwinder__unwind(uw, as, &b.regs, NULL, b.stack, b.size, second, MAX_STACK_DEPTH);
	n3 = unwinder__unwind(other, as, &b.regs, NULL, b.stack, b.size, fresh, MAX_STACK_DEPTH);
	unwinder__free(other);
	ck_assert_str_eq(name_of(second[2], false), "unwind_level2b");
	ck_assert_uint_eq(n2, n3);
	ck_assert_mem_eq(second, fresh, n2 * sizeof(second[0]));
	unwinder__stats(uw, &st);
	ck_assert_uint_ge(st.images, 1);
	ck_assert_uint_ge(st.images_reloaded, 1);
	ck_assert_uint_le(st.images_reloaded, dropped);
}
END_TEST

/* An FDE is read from its file once, then found in the FDE cache, whatever the step cache knows. */
START_TEST(fdes_are_read_from_the_file_once)
{
	uint64_t first[MAX_STACK_DEPTH], again[MAX_STACK_DEPTH];
	struct unwind_stats st1, st2;
	unsigned int n1, n2;

	n1 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, first, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n1, 5);
	unwinder__stats(uw, &st1);
	ck_assert_uint_ge(st1.fde_reads, 3);
	ck_assert_uint_le(st1.fde_reads, st1.fde_lookups);
	/* The address space changed: no step is replayed, libunwind looks every FDE up again. */
	as->generation++;
	n2 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, again, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st2);
	ck_assert_uint_eq(n2, n1);
	ck_assert_mem_eq(again, first, n1 * sizeof(first[0]));
	ck_assert_uint_eq(st2.cached_steps, st1.cached_steps);
	ck_assert_uint_ge(st2.fde_lookups, st1.fde_lookups + 3);
	ck_assert_uint_eq(st2.fde_reads, st1.fde_reads);
}
END_TEST

/* Released after the last sample: its tables are gone, its counts stay for the report. */
START_TEST(a_released_unwinder_keeps_its_counts_and_gives_the_leaf)
{
	uint64_t ips[MAX_STACK_DEPTH];
	struct unwind_stats before, after;
	size_t fds;
	unsigned int n;

	n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, ips, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n, 5);
	unwinder__stats(uw, &before);
	ck_assert_uint_ge(before.table_bytes, 100000);	/* the step cache's first size at least */
	fds = open_fds();
	unwinder__release(uw);
	unwinder__stats(uw, &after);
	ck_assert_uint_eq(after.stacks, before.stacks);
	ck_assert_uint_eq(after.steps, before.steps);
	ck_assert_uint_eq(after.images, before.images);
	ck_assert_uint_lt(after.table_bytes, 4096);
	ck_assert_uint_le(open_fds(), fds - 1);	/* this binary's descriptor at least */
	ck_assert_uint_eq(unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, ips,
					   MAX_STACK_DEPTH), 1);
	ck_assert_uint_eq(ips[0], snap.regs.ip);
	/* teardown frees it as usual */
}
END_TEST

/*
 * The step cache grows where its steps are replayed more than twice as
 * often as libunwind runs them (each stack unwound four times in an
 * address space of its own), and keeps its first size where they are
 * replayed as often (twice) or not at all (once).
 */
static size_t step_cache_after(unsigned int times)
{
	uint64_t ips[MAX_STACK_DEPTH];
	struct unwind_stats st;
	struct unwinder *u = unwinder__new();

	ck_assert_ptr_nonnull(u);
	for (int i = 0; i < 400; i++) {
		as->generation++;
		for (unsigned int t = 0; t < times; t++)
			ck_assert_uint_ge(unwinder__unwind(u, as, &snap.regs, NULL, snap.stack, snap.size,
							   ips, MAX_STACK_DEPTH),
					  5);
	}
	unwinder__stats(u, &st);
	unwinder__free(u);
	return st.table_bytes;
}

START_TEST(the_step_cache_grows_only_while_it_pays)
{
	size_t once = step_cache_after(1), twice = step_cache_after(2);
	size_t four = step_cache_after(4);

	/* 120 KB of steps (1024) and the FDE cache's slots; 7,200 steps replayed: 8192 steps. */
	ck_assert_msg(once < 300000, "%zu bytes", once);
	ck_assert_msg(twice == once, "%zu bytes, %zu when nothing was replayed", twice, once);
	ck_assert_msg(four > once + 500000, "%zu bytes, %zu when nothing was replayed", four,
		      once);
}
END_TEST

/*
 * A frame a signal interrupted, written in assembly so that the lookup
 * address matters: at the ud2 the frame is 16 bytes (after the sub), at
 * ud2 - 1 (inside the sub) the CFI says 8, and the caller read there is
 * the word the sub reserved. unwind_two_calls calls it from two sites at
 * the same stack depth, so the two samples differ only in its return
 * address: the second rejoins the cache at the interrupted frame.
 */
__asm__(".text\n"
	".hidden unwind_sig_target\n"
	".type unwind_sig_target, @function\n"
	"unwind_sig_target:\n"
	".cfi_startproc\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	ud2\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size unwind_sig_target, . - unwind_sig_target\n"
	".globl unwind_two_calls\n"
	".hidden unwind_two_calls\n"
	".type unwind_two_calls, @function\n"
	"unwind_two_calls:\n"
	".cfi_startproc\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	call unwind_sig_target\n"
	"	call unwind_sig_target\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	ret\n"
	".cfi_endproc\n"
	".size unwind_two_calls, . - unwind_two_calls\n");
void unwind_two_calls(void);

static struct snapshot sig_snaps[2];
static unsigned int nr_sig_snaps;

/* Samples inside the handler, then resumes after the ud2. */
static void on_sigill(int sig, siginfo_t *si, void *ucv)
{
	ucontext_t *uc = ucv;

	(void)sig;
	(void)si;
	if (nr_sig_snaps < 2)
		capture(&sig_snaps[nr_sig_snaps++]);
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

START_TEST(a_frame_a_signal_interrupted_is_rejoined_at_its_ip)
{
	struct sigaction sa = { .sa_sigaction = on_sigill, .sa_flags = SA_SIGINFO }, old;
	uint64_t first[MAX_STACK_DEPTH], second[MAX_STACK_DEPTH], fresh[MAX_STACK_DEPTH];
	struct unwinder *other = unwinder__new();
	unsigned int n1, n2, n3, at = 0;
	struct unwind_stats st;

	ck_assert_ptr_nonnull(other);
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGILL, &sa, &old), 0);
	nr_sig_snaps = 0;
	unwind_two_calls();
	sigaction(SIGILL, &old, NULL);
	ck_assert_uint_eq(nr_sig_snaps, 2);
	/* The tracker read this process's mappings before the handler ran: read them again. */
	proctrack__free(pt);
	pt = proctrack__new();
	as = proctrack__addr_space(pt, getpid());
	ck_assert_ptr_nonnull(as);

	n1 = unwinder__unwind(uw, as, &sig_snaps[0].regs, NULL, sig_snaps[0].stack,
			      sig_snaps[0].size, first, MAX_STACK_DEPTH);
	n2 = unwinder__unwind(uw, as, &sig_snaps[1].regs, NULL, sig_snaps[1].stack,
			      sig_snaps[1].size, second, MAX_STACK_DEPTH);
	unwinder__stats(uw, &st);
	n3 = unwinder__unwind(other, as, &sig_snaps[1].regs, NULL, sig_snaps[1].stack,
			      sig_snaps[1].size, fresh, MAX_STACK_DEPTH);
	unwinder__free(other);
	ck_assert_uint_ge(n1, 6);
	for (unsigned int i = 1; i < n3 && !at; i++)
		if (!strcmp(name_of(fresh[i], true), "unwind_sig_target"))
			at = i;
	ck_assert_msg(at, "no unwind_sig_target in %u fresh frames", n3);
	ck_assert_uint_lt(at + 2, n3);
	ck_assert_str_eq(name_of(fresh[at + 1], false), "unwind_two_calls");
	ck_assert_str_eq(name_of(fresh[at + 2], false),
			 "a_frame_a_signal_interrupted_is_rejoined_at_its_ip_fn");
	ck_assert_uint_ne(first[at + 1], fresh[at + 1]);	/* the two call sites */
	ck_assert_uint_gt(st.cached_steps, 0);
	ck_assert_uint_eq(n2, n3);
	ck_assert_mem_eq(second, fresh, n2 * sizeof(second[0]));
}
END_TEST

START_TEST(a_changed_return_address_is_not_replayed)
{
	uint64_t first[MAX_STACK_DEPTH], second[MAX_STACK_DEPTH];
	unsigned int n1, n2, slot = 0;
	uint64_t ret;

	n1 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, first, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n1, 4);
	/* Where unwind_level2's return address into unwind_level3 is kept. */
	for (unsigned int off = 0; off + 8 <= snap.size && !slot; off += 8) {
		memcpy(&ret, snap.stack + off, 8);
		if (ret == first[3])
			slot = off;
	}
	ck_assert_uint_ne(slot, 0);
	/* Pretend unwind_level2 was called from unwind_level1's return site instead. */
	memcpy(snap.stack + slot, &first[2], 8);
	n2 = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, second, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n2, 4);
	ck_assert_uint_eq(second[2], first[2]);
	ck_assert_uint_eq(second[3], first[2]);
}
END_TEST

START_TEST(a_stack_deeper_than_the_limit_ends_with_the_marker)
{
	uint64_t ips[MAX_STACK_DEPTH];
	unsigned int n;
	struct unwind_stats st;

	n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, ips, 3);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(name_of(ips[1], false), "unwind_level1");
	ck_assert_uint_eq(ips[2], STACK_TRUNCATED_IP);
	{
		struct frame_sym fs;

		symbolizer__user_frame(sym, as, ips[2], true, &fs);
		ck_assert_str_eq(fs.name, "[truncated]");
		/* A garbage return address of 0 is unknown, not the marker. */
		symbolizer__user_frame(sym, as, 0, true, &fs);
		ck_assert_ptr_null(fs.name);
	}
	unwinder__stats(uw, &st);
	ck_assert_uint_eq(st.truncated, 1);
}
END_TEST

START_TEST(a_short_copy_stops_early_and_is_counted)
{
	uint64_t ips[MAX_STACK_DEPTH];
	struct unwind_stats st;
	unsigned int n;

	/* 16 bytes: capture's own frame at most, not its callers' return addresses. */
	n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, 16, ips, MAX_STACK_DEPTH);
	ck_assert_uint_lt(n, 4);
	unwinder__stats(uw, &st);
	ck_assert_uint_eq(st.dump_exhausted, 1);
}
END_TEST

START_TEST(memory_without_a_mapping_gives_the_leaf_only)
{
	struct unwind_regs regs = { .ip = 0x1000, .sp = snap.regs.sp, .bp = 0 };
	uint64_t ips[MAX_STACK_DEPTH];
	unsigned int n;

	n = unwinder__unwind(uw, as, &regs, NULL, snap.stack, snap.size, ips, MAX_STACK_DEPTH);
	ck_assert_uint_ge(n, 1);
	ck_assert_uint_eq(ips[0], 0x1000);
	/* No unwind info and bp 0: the frame-pointer fallback has nothing to follow. */
	ck_assert_uint_eq(n, 1);
}
END_TEST

static volatile sig_atomic_t masked_calls;

static void on_sigsys(int sig)
{
	(void)sig;
	masked_calls++;
}

/* From here on, rt_sigprocmask raises SIGSYS instead of running (seccomp, no privileges). */
static void trap_sigprocmask(void)
{
	struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_rt_sigprocmask, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };

	signal(SIGSYS, on_sigsys);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		_exit(253);
}

/*
 * libunwind masks every signal around each lock it takes: four system
 * calls a frame, most of the profiler's CPU on deep stacks. Unwinding
 * (uncached: a new unwinder) must make none, and still reach main.
 */
START_TEST(unwinding_makes_no_signal_mask_system_calls)
{
	pid_t child = fork();
	int status;

	ck_assert_int_ge(child, 0);
	if (child == 0) {
		uint64_t ips[MAX_STACK_DEPTH];
		unsigned int n;

		trap_sigprocmask();
		n = unwinder__unwind(uw, as, &snap.regs, NULL, snap.stack, snap.size, ips,
				     MAX_STACK_DEPTH);
		_exit(n < 5 ? 254 : masked_calls > 200 ? 200 : masked_calls);
	}
	ck_assert_int_eq(waitpid(child, &status, 0), child);
	ck_assert_msg(WIFEXITED(status), "the unwinding child was killed");
	ck_assert_msg(WEXITSTATUS(status) == 0, "%d rt_sigprocmask calls while unwinding (253: no "
		      "seccomp, 254: fewer than 5 frames)", WEXITSTATUS(status));
}
END_TEST

/* clang's .debug_frame: version 4 CIEs, rewritten as version 3 for libunwind 1.6. */
START_TEST(debug_frame_is_indexed_and_its_cies_repaired)
{
	int fd = open(workload("nofp_debugframe"), O_RDONLY | O_CLOEXEC);
	struct unwind_image img;
	struct debug_frame df;
	size_t size;
	const unsigned char *raw;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	raw = unwind_image__section(&img, ".debug_frame", &size);
	ck_assert_ptr_nonnull(raw);
	ck_assert_uint_eq(raw[8], 4);	/* the first CIE as clang wrote it */
	ck_assert_int_eq(debug_frame__load(&df, &img, NULL), 0);
	ck_assert_uint_eq(df.size, size);
	ck_assert_uint_eq(df.data[8], 3);
	/* Code alignment 1 and data alignment -8 right after the empty augmentation. */
	ck_assert_uint_eq(df.data[10], 1);
	ck_assert_uint_eq(df.data[11], 0x78);
	/* nofp_a, nofp_b, nofp_c, worker, nofp_recurse, nofp_call_lib, main: sorted. */
	ck_assert_uint_ge(df.nr_index, 7);
	for (size_t i = 1; i < df.nr_index; i++)
		ck_assert_int_le(df.index[i - 1].start, df.index[i].start);
	debug_frame__free(&df);
	unwind_image__close(&img);
}
END_TEST

Suite *unwind_suite(void)
{
	Suite *s = suite_create("unwind");
	TCase *tc = tcase_create("snapshot");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, unwinds_a_copy_through_functions_without_frame_pointers);
	tcase_add_test(tc, a_repeated_snapshot_is_replayed_from_the_cache_identically);
	tcase_add_test(tc, a_changed_return_address_is_not_replayed);
	tcase_add_test(tc, new_inner_frames_rejoin_the_cache_for_their_callers);
	tcase_add_test(tc, idle_images_are_dropped_and_read_again);
	tcase_add_test(tc, fdes_are_read_from_the_file_once);
	tcase_add_test(tc, a_released_unwinder_keeps_its_counts_and_gives_the_leaf);
	tcase_add_test(tc, the_step_cache_grows_only_while_it_pays);
	tcase_add_test(tc, a_copy_in_pieces_unwinds_as_the_copy_in_one);
	tcase_add_test(tc, a_frame_a_signal_interrupted_is_rejoined_at_its_ip);
	tcase_add_test(tc, a_stack_deeper_than_the_limit_ends_with_the_marker);
	tcase_add_test(tc, a_short_copy_stops_early_and_is_counted);
	tcase_add_test(tc, memory_without_a_mapping_gives_the_leaf_only);
	tcase_add_test(tc, debug_frame_is_indexed_and_its_cies_repaired);
	tcase_add_test(tc, unwinding_makes_no_signal_mask_system_calls);
	suite_add_tcase(s, tc);
	return s;
}
