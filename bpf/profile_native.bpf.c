// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program with user stacks unwound by the tables
 * (bpf/native.bpf.h; --unwind auto), for Linux 4.9: the counting program
 * hands a sample over to the step program, which steps
 * NATIVE_FRAMES_PER_RUN frames a run and tail-calls itself, then the
 * finish program, which stores the stack and counts the key (or hands it
 * to the Python walk, which counts it). Loaded on the counting program's
 * maps (profile.bpf.c).
 *
 * bpf-compat: linux-4.9
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <linux/bpf_perf_event.h>
#include <linux/ptrace.h>
#include <bpf/bpf_helpers.h>

#define COUNTING_NATIVE
#define COUNTING_PYTHON
#include "bpf/native.bpf.h"
#include "bpf/counting.bpf.h"

SEC("perf_event")
int profile_native(struct bpf_perf_event_data *ctx)
{
	return count_sample(ctx, PIDNS_NEVER);
}

SEC("perf_event")
int native_step(struct bpf_perf_event_data *ctx)
{
	if (native_step_run(ctx))
		stat_inc(PROFILE_STAT_NATIVE_NO_PROG);
	stat_inc(PROFILE_STAT_RUNS_DONE);
	return 0;
}

/*
 * Whether the walk's leaf is in a known mapping of its process: the rule
 * this CPU cached for it in the walk (a table's, the hot case: one array
 * read), else its page.
 */
static __always_inline int native_leaf_known(struct native_walk *w, __u32 tgid)
{
	__u64 ip = w->st.ips[0];
	__u32 slot = native_cache_slot(ip, tgid);
	struct native_page_key pk = { .tgid = tgid, .page = ip >> NATIVE_PAGE_SHIFT };
	struct native_cached *ce = bpf_map_lookup_elem(&native_cache, &slot);
	struct native_page *pg;

	if (ce && ce->pc == ip && ce->tgid == tgid && ce->epoch == w->epoch)
		return 1;
	pg = bpf_map_lookup_elem(&native_pages, &pk);
	if (pg && pg->kind == NATIVE_PAGE_SPLIT) {
		pk.small = 1;
		pk.page = ip >> NATIVE_SMALL_SHIFT;
		pg = bpf_map_lookup_elem(&native_pages, &pk);
	}
	return pg != NULL;
}

/*
 * A walk whose leaf is in no known mapping (or no row covers it), or that
 * ended at such code:
 * its process is noted, to be read again (a library mapped since it was
 * read: ld.so maps them after the exec it was first read at, dlopen
 * later). The step from such a leaf took rbp for a frame pointer, which
 * code without them does not keep (xz;[liblzma.so.5], or main lost under a
 * dlopened library, the walk complete but wrong): within a second of a read
 * that found new pages, and while the copies are read, the sample goes to
 * the stack-copy program instead (a tail call: nothing after it runs), as
 * a process not loaded yet does; after that second such code is a JIT's,
 * which keeps frame pointers. Its kernel stack, taken by the counting
 * program, is taken again there: a loss counted here is taken back.
 */
static __always_inline void native_unmapped(struct bpf_perf_event_data *ctx,
					    const struct profile_config *cfg, struct native_walk *w)
{
	struct native_proc *proc;
	__u64 now, cs = ctx->regs.cs;
	__s32 kid = w->key.kernel_stack_id;
	/* The keys from the BPF stack: 4.9's helpers take no map value's. */
	__u32 tgid = w->tgid;
	int lost;

	/*
	 * A leaf no row covers is unknown too: a library mapped since, into
	 * the 64 KiB page of one the process had (its entry another's table).
	 */
	if (!(w->st.end == NATIVE_END_NO_CFI && w->st.depth == 1) && native_leaf_known(w, tgid)) {
		if (w->st.end == NATIVE_END_UNMAPPED)
			native_note(ctx, tgid);
		return;
	}
	native_note(ctx, tgid);
	now = bpf_ktime_get_ns();
	proc = bpf_map_lookup_elem(&native_procs, &tgid);
	if (!proc || now >= proc->copies_until_ns || now >= cfg->copies_until_ns)
		return;
	lost = kid < 0 && kid != -EFAULT && kid != PROFILE_STACK_NOT_TAKEN;
	if (lost)
		stat_add(PROFILE_STAT_KERNEL_STACK_LOST, -1);
	stat_inc(PROFILE_STAT_NATIVE_UNMAPPED_COPIED);
	asm volatile("" : "+r"(cs));
	bpf_tail_call(ctx, &native_progs, (cs & 3) ? NATIVE_PROG_COPY : NATIVE_PROG_COPY_KERNEL);
	/* No copy program there: counted here after all. */
	stat_add(PROFILE_STAT_NATIVE_UNMAPPED_COPIED, -1);
	if (lost)
		stat_inc(PROFILE_STAT_KERNEL_STACK_LOST);
}

SEC("perf_event")
int native_finish(struct bpf_perf_event_data *ctx)
{
	struct profile_config *cfg;
	struct profile_key key;
	struct native_walk *w;
	__u32 zero = 0, mask;
	__u64 h;
	int id;

	w = bpf_map_lookup_elem(&native_walk, &zero);
	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!w || !cfg) {
		stat_inc(PROFILE_STAT_RUNS_DONE);
		return 0;
	}
	native_unmapped(ctx, cfg, w);
	mask = cfg->native_slots - 1;
	h = ustack_hash_end(w->hash);
	__builtin_memcpy(&key, &w->key, sizeof(key));
	/* One copy of the store, on either generation's maps. */
	id = native_store(w->gen ? (void *)&ustacks1 : (void *)&ustacks0,
			  w->gen ? (void *)&uclaims1 : (void *)&uclaims0, h, mask);
	if (id >= 0) {
		key.user_stack_id = id | PROFILE_STACK_WALKED;
		stat_inc(PROFILE_STAT_NATIVE_WALKED);
		native_count_end(w->st.end);
	} else {
		/* No room: the kernel's frame-pointer walk, as before. */
		stat_inc(PROFILE_STAT_NATIVE_FULL);
		key.user_stack_id = w->gen ? take_stack(ctx, &stacks1, &overflow1, BPF_F_USER_STACK,
							PROFILE_STAT_USER_STACK_LOST)
					   : take_stack(ctx, &stacks, &overflow0, BPF_F_USER_STACK,
							PROFILE_STAT_USER_STACK_LOST);
	}
	if (cfg->flags & PROFILE_CFG_PYTHON)
		py_hand_over(ctx, &key, w->gen);
	if (w->gen)
		count(&counts1, &key);
	else
		count(&counts0, &key);
	stat_inc(PROFILE_STAT_RUNS_DONE);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";	/* bpf_get_stackid is GPL-only */
