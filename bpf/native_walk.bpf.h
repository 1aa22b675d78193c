/* SPDX-License-Identifier: GPL-2.0 */
/*
 * User stacks unwound in the program from the tables user space compiled
 * (bpf/native_maps.h, unwind/tables/), with no stack copy (issue 45), for
 * Linux 4.9: no loops (each run steps NATIVE_FRAMES_PER_RUN frames,
 * unrolled, then tail-calls the step program again), helper buffers on the
 * BPF stack, helpers of 4.9, 4,096 instructions a program.
 *
 * The counting program (profile_native.bpf.c, COUNTING_NATIVE) hands a
 * 64-bit user-mode sample of a process in native_procs over to the step
 * program with its registers; the finish program stores the stack (leaf
 * first, PROFILE_MAX_STACK_DEPTH ips at most, why it ended in
 * profile_ustack.end) in the generation's table and counts the key, or
 * hands it to the Python walk, which counts it. Other samples go to the
 * kernel's frame-pointer walk, each reason counted. The off-CPU program
 * (offcpu_native.bpf.c) hands over a thread switching out, with the user
 * registers at the top of its kernel stack, and stores the stack's id in
 * the thread's start entry.
 *
 * A frame: the rule this CPU last found for the process's pc
 * (native_cache, while its epoch stands: a hot stack's frames are found
 * with one lookup); else the pc's page in native_pages (the 4 KiB page
 * where the 64 KiB one is SPLIT); for a TABLE page the rows of vaddr's 64
 * KiB in native_index, 16 bisection steps for the last row at or below it,
 * the row's fold, its rule, kept in native_cache; then one step by the
 * rule (unwind/tables/README.md). The two hash lookups and 18 array reads
 * were two thirds of a 40-deep sample's 9,700 ns; with the cache it costs
 * what the kernel's frame-pointer walk of the same depth does.
 * FP and NO_TABLE pages, and pcs in no known page, take one frame-pointer
 * step: rbp is then the CFA - 16 and holds the caller's rbp. A return
 * address is looked up at pc - 1 (the call may be a function's last
 * instruction), the leaf and a signal frame's interrupted pc at the pc.
 *
 * Branches are few: the bisection is arithmetic, every failure goes to one
 * place, and the registers are reloaded from the walk's state at each
 * frame, so that 4.9's verifier prunes every path at the next frame.
 */
#ifndef BPF_NATIVE_WALK_BPF_H
#define BPF_NATIVE_WALK_BPF_H

/*
 * The walk itself, shared by the counting program's (bpf/native.bpf.h) and
 * the off-CPU program's (bpf/offcpu_native.bpf.c) variants: the tables'
 * maps, one walk's state, a frame's step, and the store of a walked
 * stack. The includer defines stat_inc() and its statistics' slots:
 * NATIVE_STAT_NOTED (processes noted), NATIVE_STAT_END_NO_CFI, _READ,
 * _UNMAPPED, _TRUNCATED (why walks ended).
 */
#include <linux/errno.h>

#include "bpf/native_maps.h"
#include "bpf/ustack.bpf.h"

/* Sizes are set by the loader before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, struct native_proc);
} native_procs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct native_page_key);
	__type(value, struct native_page);
} native_pages SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct native_index_key);
	__type(value, struct native_range);
} native_index SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 20);
	__type(key, __u32);
	__type(value, __u32);
} native_rows SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1 << 14);
	__type(key, __u32);
	__type(value, struct native_rule);
} native_rules SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, NATIVE_CACHE_SLOTS);
	__type(key, __u32);
	__type(value, struct native_cached);
} native_cache SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} native_epoch SEC(".maps");

/* Processes sampled that native_procs lacked, noted once (PROFILE_STAT_NATIVE_NOTED). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32);
	__type(value, __u32);
} native_unknown SEC(".maps");

/*
 * A record for each pid noted, which wakes user space to read it at once
 * (its poll, 5 ms apart, was half of what a new process's first samples
 * waited for their tables). libbpf sizes it to the CPUs.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} native_wake SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PROG_ARRAY);
	__uint(max_entries, NATIVE_PROGS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} native_progs SEC(".maps");

/*
 * Frames a run steps: PROFILE_MAX_STACK_DEPTH in 21 runs, Python's walk (10
 * tail calls) after them within 4.9's 32.
 */
#ifndef NATIVE_FRAMES_PER_RUN
#define NATIVE_FRAMES_PER_RUN 6
#endif
/* Where rt_sigframe's ucontext holds rbp, rsp and rip (40 + sigcontext's 80, 120, 128). */
#define NATIVE_UC_RBP 120
#define NATIVE_UC_WORDS 7	/* rbp, rbx, rdx, rax, rcx, rsp, rip */

/*
 * NATIVE_STACK_WINDOW (the 5.15 variant: a helper may write a map value,
 * 4.9's only the BPF stack): the saved registers are read from a copy of
 * NATIVE_WIN_WORDS words of the user stack, taken again where a frame's
 * slots fall outside it. A read of user memory is a helper call (about 70
 * ns here, what the kernel's frame-pointer walk pays a frame), and a chain
 * of small frames then pays one for several.
 */
#define NATIVE_WIN_WORDS 32

/* One sample's walk, carried across tail calls. */
struct native_walk {
	struct profile_key key;		/* counted by the finish program; user_stack_id to come */
	__u64 ip, sp, bp;		/* the frame being stepped from */
	__u64 hash;			/* of the ips so far */
	__u32 gen;
	__u32 tgid;
	__u32 exact;			/* ip is not a return address: the leaf, a signal's */
	__u32 bp_lost;			/* rbp is not known (a LOST rule) */
	__u32 done;
	__u32 epoch;			/* native_epoch's at the sample: native_cache's entries of it stand */
	struct profile_ustack st;	/* st.end: why it ended */
	__u64 spill;			/* st.ips[PROFILE_MAX_STACK_DEPTH], which a masked index may name */
#ifdef NATIVE_STACK_WINDOW
	__u64 win_lo;			/* the user address win[0] was read from; 0: none yet */
	__u64 win[NATIVE_WIN_WORDS];
#endif
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct native_walk);
} native_walk SEC(".maps");

/* The lookups' keys and the reads' buffers, on the BPF stack, zeroed once a run. */
struct native_scratch {
	struct native_page_key pk;
	struct native_index_key ik;
	__u32 idx;
	__u32 zero;			/* native_walk's key */
	__u32 slot;			/* native_cache's */
	__u32 pad;
	__u64 buf[NATIVE_UC_WORDS];
};

/* tgid noted in native_unknown for user space to read (once until it is taken), and woken. */
static __always_inline void native_note(void *ctx, __u32 tgid)
{
	__u32 one = 1;

	if (!bpf_map_update_elem(&native_unknown, &tgid, &one, BPF_NOEXIST)) {
		stat_inc(NATIVE_STAT_NOTED);
		/* No ring (user space could not open one): its poll finds the pid. */
		bpf_perf_event_output(ctx, &native_wake, BPF_F_CURRENT_CPU, &tgid, sizeof(tgid));
	}
}

/* native_cache's slot of a process's pc (a return address - 1, the leaf's itself). */
static __always_inline __u32 native_cache_slot(__u64 lpc, __u32 tgid)
{
	return (__u32)(lpc ^ (lpc >> 9) ^ ((__u64)tgid << 5)) & (NATIVE_CACHE_SLOTS - 1);
}

/*
 * The 8 bytes at user address addr in *dst: 0, else they could not be
 * read. From the walk's window where it holds them; else the window is
 * read again from the word below addr (a saved rbp is below its return
 * address, the callers' frames above), or, where that cannot be read (the
 * top of a stack), the 8 bytes alone.
 */
static __always_inline long native_read_word(struct native_walk *w, __u64 *dst, __u64 addr)
{
#ifdef NATIVE_STACK_WINDOW
	__u64 off = addr - w->win_lo;

	if (w->win_lo && off <= (NATIVE_WIN_WORDS - 1) * 8 && !(off & 7)) {
		*dst = w->win[(off >> 3) & (NATIVE_WIN_WORDS - 1)];
		return 0;
	}
	if (!bpf_probe_read_user(w->win, sizeof(w->win), (void *)(addr - 8))) {
		w->win_lo = addr - 8;
		*dst = w->win[1];
		return 0;
	}
	w->win_lo = 0;
#endif
	return bpf_probe_read(dst, 8, (void *)addr);
}

static __always_inline void native_end(struct native_walk *w, __u32 why)
{
	w->st.end = why;
	w->done = 1;
}

/*
 * The rule at vaddr of table (after its fold) in *cfa, *cfa_off, *rbp,
 * *rbp_off; 0, or -1 where no row covers it.
 */
static __always_inline int native_rule(struct native_scratch *sc, __u32 table, __u64 vaddr,
				       __u32 *cfa, __s32 *cfa_off, __u32 *rbp, __s32 *rbp_off)
{
	struct native_range *rg;
	struct native_rule *rule;
	__u64 lo, n, key, addr;
	__u32 *row, rid, fold;

	sc->ik.table = table;
	sc->ik.page = vaddr >> NATIVE_PAGE_SHIFT;
	rg = bpf_map_lookup_elem(&native_index, &sc->ik);
	if (!rg)
		return -1;
	lo = rg->first;
	n = rg->nr;
	if (n - 1 >= 1u << NATIVE_PAGE_SHIFT)	/* 0, or more than a page holds */
		return -1;
	key = vaddr & ((1u << NATIVE_PAGE_SHIFT) - 1);
	/*
	 * unwind/tables/lookup.c's search, the last row at or below key, with
	 * n halved rounding up at every step: a step that does not move lo
	 * keeps one row more than lookup.c's, above key, which is never
	 * chosen; n no longer depends on the rows, and from 2^16 it is 1 after
	 * 16 steps (a step with half 0 looks at lo again and keeps it).
	 */
#pragma clang loop unroll(full)
	for (int i = 0; i < 16; i++) {
		__u64 half = n >> 1;

		n -= half;
		sc->idx = lo + half;
		row = bpf_map_lookup_elem(&native_rows, &sc->idx);
		if (!row)
			return -1;
		lo += half & (__u32)ustack_mask_le(NATIVE_ROW_ADDR(*row), key);
	}
	sc->idx = lo;
	row = bpf_map_lookup_elem(&native_rows, &sc->idx);
	if (!row)
		return -1;
	addr = NATIVE_ROW_ADDR(*row);
	rid = NATIVE_ROW_RULE(*row);
	sc->idx = rid;
	rule = bpf_map_lookup_elem(&native_rules, &sc->idx);
	if (!rule)
		return -1;
	/* The fold, where there is one and key is fold_at or more past the row. */
	fold = (__u32)ustack_mask_le(rule->fold_at, key - addr) & ~(__u32)ustack_mask_le(rule->fold_at, 0);
	*cfa = rule->cfa;
	*cfa_off = rule->cfa_off + (rule->fold_off & (__s32)fold);
	*rbp = rule->rbp;
	*rbp_off = rule->rbp_off;
	return 0;
}

/* One frame: from w's ip, sp, bp to its caller's, the caller's pc appended. */
static __always_inline void native_frame(struct native_walk *w, struct native_scratch *sc)
{
	__u32 cfa, rbp, kind, tgid, by_fp = 0;
	__s32 cfa_off, rbp_off;
	struct native_cached *ce;
	struct native_page *pg;
	__u64 pc, lpc, base, ca, ip, n;
#ifndef NATIVE_STACK_WINDOW
	struct native_walk *fresh;
	__u64 off;
#endif

	if (w->done)
		return;
	pc = w->ip;
	lpc = pc - 1 + (w->exact & 1);
	tgid = w->tgid;
	sc->slot = native_cache_slot(lpc, tgid);
	ce = bpf_map_lookup_elem(&native_cache, &sc->slot);
	if (ce && ce->pc == lpc && ce->tgid == tgid && ce->epoch == w->epoch) {
		kind = NATIVE_PAGE_TABLE;
		cfa = ce->cfa;
		cfa_off = ce->cfa_off;
		rbp = ce->rbp;
		rbp_off = ce->rbp_off;
	} else {
		sc->pk.tgid = tgid;
		sc->pk.small = 0;
		sc->pk.page = lpc >> NATIVE_PAGE_SHIFT;
		pg = bpf_map_lookup_elem(&native_pages, &sc->pk);
		if (pg && pg->kind == NATIVE_PAGE_SPLIT) {
			sc->pk.small = 1;
			sc->pk.page = lpc >> NATIVE_SMALL_SHIFT;
			pg = bpf_map_lookup_elem(&native_pages, &sc->pk);
		}
		kind = pg ? pg->kind : 0;
		if (kind == NATIVE_PAGE_TABLE) {
			if (native_rule(sc, pg->table, lpc - pg->bias, &cfa, &cfa_off, &rbp,
					&rbp_off)) {
				native_end(w, NATIVE_END_NO_CFI);
				return;
			}
			/*
			 * Looked up again: 4.9's verifier loses the first
			 * pointer's null check across the branches above.
			 */
			ce = bpf_map_lookup_elem(&native_cache, &sc->slot);
			if (ce) {
				ce->pc = lpc;
				ce->tgid = tgid;
				ce->epoch = w->epoch;
				ce->cfa_off = cfa_off;
				ce->rbp_off = (__s16)rbp_off;
				ce->cfa = (__u8)cfa;
				ce->rbp = (__u8)rbp;
			}
		}
	}
	if (kind != NATIVE_PAGE_TABLE) {
		/* A frame-pointer step: the CFA is rbp + 16, the caller's rbp at CFA - 16. */
		by_fp = kind ? NATIVE_END_FP : NATIVE_END_UNMAPPED;
		if (!w->bp) {
			native_end(w, by_fp);
			return;
		}
		cfa = NATIVE_CFA_RBP;
		cfa_off = 16;
		rbp = NATIVE_RBP_CFA;
		rbp_off = -16;
	}
	if (cfa == NATIVE_CFA_SIGNAL) {
		/* The interrupted registers, from the ucontext the signal frame starts with. */
		if (bpf_probe_read(sc->buf, sizeof(sc->buf), (void *)(w->sp + NATIVE_UC_RBP))) {
			native_end(w, NATIVE_END_READ);
			return;
		}
		ip = sc->buf[6];
		w->bp = sc->buf[0];
		w->sp = sc->buf[5];
		w->bp_lost = 0;
		w->exact = 1;
	} else {
		if (cfa < NATIVE_CFA_RSP) {
			native_end(w, cfa == NATIVE_CFA_END ? NATIVE_END_COMPLETE : NATIVE_END_NO_CFI);
			return;
		}
		if (cfa == NATIVE_CFA_RBP && w->bp_lost) {
			native_end(w, NATIVE_END_NO_CFI);
			return;
		}
		base = cfa == NATIVE_CFA_RBP ? w->bp : w->sp;
		ca = base + cfa_off;
		/* A lazy PLT entry has pushed its index from its 11th byte on. */
		if (cfa == NATIVE_CFA_PLT)
			ca += (__u32)ustack_mask_le(11, lpc & 15) & 8;
		if (native_read_word(w, &sc->buf[0], ca - 8)) {
			native_end(w, by_fp ? by_fp : NATIVE_END_READ);
			return;
		}
		ip = sc->buf[0];
		if (rbp == NATIVE_RBP_CFA) {
			if (native_read_word(w, &sc->buf[1], ca + rbp_off)) {
				native_end(w, by_fp ? by_fp : NATIVE_END_READ);
				return;
			}
			w->bp = sc->buf[1];
			w->bp_lost = 0;
		} else if (rbp == NATIVE_RBP_LOST) {
			w->bp_lost = 1;
		}
		w->sp = ca;
		w->exact = 0;
	}
	if (!ip) {
		native_end(w, by_fp ? by_fp : NATIVE_END_COMPLETE);
		return;
	}
	w->ip = ip;
	n = w->st.depth;
	/*
	 * At most PROFILE_MAX_STACK_DEPTH - 1 here: the mask only tells the
	 * verifier. 4.9 takes a variable offset only on a pointer that a
	 * lookup just returned (the range of any other is unknown to it), and
	 * whole (the constant part too): a lookup a frame, which the 5.15
	 * variant does without (w's bounds are known to its verifier).
	 */
#ifdef NATIVE_STACK_WINDOW
	w->st.ips[n & 127] = ip;
#else
	off = ((n & 127) << 3) + __builtin_offsetof(struct native_walk, st.ips);
	asm volatile("" : "+r"(off));
	fresh = bpf_map_lookup_elem(&native_walk, &sc->zero);
	if (fresh)
		*(__u64 *)((char *)fresh + off) = ip;
#endif
	w->st.depth = n + 1;
	w->hash = ustack_hash_add(w->hash, ip);
	if (n + 1 >= PROFILE_MAX_STACK_DEPTH)
		native_end(w, NATIVE_END_TRUNCATED);
}

/*
 * Whether a and b are one stack. With bounded loops (5.3; NATIVE_BOUNDED_LOOPS,
 * set by the 5.15 variant) to b's depth, else ustack_same's 127 compares
 * without a branch, which 4.9 needs: in a 5-deep stack's sample they were
 * about a third of what a walk cost more than a frame-pointer one.
 */
#ifdef NATIVE_GLOBAL_FUNCS
/* A global function (see native_frame_call): its loop verified once, not at each slot tried. */
__noinline int native_same(const struct profile_ustack *a, const struct profile_ustack *b)
{
	return a && b && ustack_same_to_depth(a, b);
}
#else
static __always_inline int native_same(const struct profile_ustack *a,
				       const struct profile_ustack *b)
{
#ifdef NATIVE_BOUNDED_LOOPS
	return ustack_same_to_depth(a, b);
#else
	return ustack_same(a, b);
#endif
}
#endif

/* A claim's value: its slot being written, then written (another CPU may compare it). */
#define NATIVE_CLAIM_WRITING 1
#define NATIVE_CLAIM_DONE 2

/*
 * The walk's stack in slots (claims its claims) from slot h, or the next
 * one: the slot, or -1. A claimed slot is looked up before one is claimed:
 * a hot stack's is claimed already, and a failed insert takes the hash
 * bucket's lock where a lookup takes none. A slot another CPU is writing
 * is passed over: half old stack and half new, it could compare equal to
 * this one and then hold another (x86-64 keeps the stores in order: the
 * claim says DONE only after the stack is whole). The walk's stack is
 * read through a pointer looked up just before: 4.9 refuses the offset
 * of one kept across the helpers' calls.
 */
static __always_inline int native_store(void *slots, void *claims, __u64 h, __u32 mask)
{
	struct profile_ustack *old;
	struct native_walk *w;
	__u32 writing = NATIVE_CLAIM_WRITING, zero = 0, idx, *claim;

#pragma clang loop unroll(full)
	for (int k = 0; k < 2; k++) {
		idx = ((__u32)h + k) & mask;
		old = bpf_map_lookup_elem(slots, &idx);
		if (!old)
			return -1;
		claim = bpf_map_lookup_elem(claims, &idx);
		if (!claim && !bpf_map_update_elem(claims, &idx, &writing, BPF_NOEXIST)) {
			w = bpf_map_lookup_elem(&native_walk, &zero);
			if (!w)
				return -1;	/* a per-CPU array's one element: not so */
			__builtin_memcpy(old, &w->st, sizeof(w->st));
			claim = bpf_map_lookup_elem(claims, &idx);
			if (claim)
				*(volatile __u32 *)claim = NATIVE_CLAIM_DONE;
			return idx;
		}
		if (!claim)
			claim = bpf_map_lookup_elem(claims, &idx);
		w = bpf_map_lookup_elem(&native_walk, &zero);
		if (claim && w && *(volatile __u32 *)claim == NATIVE_CLAIM_DONE &&
		    native_same(old, &w->st))
			return idx;
	}
	return -1;
}


/*
 * w, a walk of process tgid (of generation gen) from its leaf's registers:
 * the leaf counted, the rules this CPU kept for it valid while the epoch
 * stands.
 */
static __always_inline void native_walk_start(struct native_walk *w, __u32 tgid, __u32 gen,
					      __u64 ip, __u64 sp, __u64 bp)
{
	__u32 zero = 0, *epoch;

	w->ip = ip;
	w->sp = sp;
	w->bp = bp;
	w->hash = ip;
	w->gen = gen;
	w->tgid = tgid;
	w->exact = 1;
	w->bp_lost = 0;
	w->done = 0;
	epoch = bpf_map_lookup_elem(&native_epoch, &zero);
	w->epoch = epoch ? *epoch : 0;
	w->st.depth = 1;
	w->st.end = 0;
#ifdef NATIVE_STACK_WINDOW
	w->win_lo = 0;
#endif
	w->st.ips[0] = ip;
}

/* Why a walk ended, counted in the includer's NATIVE_STAT_END_* slots. */
static __always_inline void native_count_end(__u32 end)
{
	if (end == NATIVE_END_NO_CFI)
		stat_inc(NATIVE_STAT_END_NO_CFI);
	else if (end == NATIVE_END_READ)
		stat_inc(NATIVE_STAT_END_READ);
	else if (end == NATIVE_END_UNMAPPED)
		stat_inc(NATIVE_STAT_END_UNMAPPED);
	else if (end == NATIVE_END_TRUNCATED)
		stat_inc(NATIVE_STAT_END_TRUNCATED);
}

#ifdef NATIVE_GLOBAL_FUNCS
/*
 * native_frame as a global function (5.12: pointer arguments), which the
 * verifier checks once, not once for each frame a run steps: the step
 * program's verification was most of what a run's start cost more than
 * --unwind fp's. Its pointers may be NULL as far as the verifier knows.
 */
__noinline int native_frame_call(struct native_walk *w, struct native_scratch *sc)
{
	if (!w || !sc)
		return 0;
	native_frame(w, sc);
	return 0;
}
#endif

/*
 * A step program's run: NATIVE_FRAMES_PER_RUN frames, then a tail call to
 * itself again or, the walk done, to the finish program. Returns 0 where
 * there was no walk, 1 where neither program was there.
 */
static __always_inline int native_step_run(void *ctx)
{
	struct native_scratch sc;
	struct native_walk *w;
	__u32 zero = 0;

	w = bpf_map_lookup_elem(&native_walk, &zero);
	if (!w)
		return 0;
	/* Every slot written: the paths into each frame then look alike to the verifier. */
	__builtin_memset(&sc, 0, sizeof(sc));
#pragma clang loop unroll(full)
	for (int i = 0; i < NATIVE_FRAMES_PER_RUN; i++)
#ifdef NATIVE_GLOBAL_FUNCS
		native_frame_call(w, &sc);
#else
		native_frame(w, &sc);
#endif
	if (!w->done)
		bpf_tail_call(ctx, &native_progs, NATIVE_PROG_STEP);
	bpf_tail_call(ctx, &native_progs, NATIVE_PROG_FINISH);
	return 1;
}

#endif
