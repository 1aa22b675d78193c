/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU program's maps and body, shared by offcpu.bpf.c (Linux 4.9)
 * and its variants that also filter by bcc's pinned id maps
 * (offcpu_idmap.bpf.c, offcpu_mntns.bpf.c): see offcpu.bpf.c for what it
 * does and the rules it keeps.
 */
#ifndef BPF_OFFCPU_BPF_H
#define BPF_OFFCPU_BPF_H

#include <linux/errno.h>

#include "bpf/cgroup.bpf.h"
#include "bpf/cgroup_members.bpf.h"
#include "bpf/idmap.bpf.h"
#include "bpf/offcpu_maps.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct offcpu_config);
} config SEC(".maps");

/* Sizes are set by the loader before load (-p/-L, --stack-storage-size, ...). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u8);
} filter_ids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

/*
 * Stacks whose bucket in stacks held another (-EEXIST): a stack map keeps
 * one stack a bucket, so a few hundred stacks in 16,384 buckets collide
 * more often than not. Sized by the loader (an eighth of stacks).
 */
struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 2048);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, PROFILE_MAX_STACK_DEPTH * sizeof(__u64));
} overflow SEC(".maps");

/* Threads switched out, by tid. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct offcpu_start);
} start SEC(".maps");

/* Nanoseconds switched out by key; two, so that one is drained while the other counts. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct offcpu_key);
	__type(value, __u64);
} counts0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 40960);
	__type(key, struct offcpu_key);
	__type(value, __u64);
} counts1 SEC(".maps");

/* Intervals dropped for a switch-in not seen, by tid (struct offcpu_missed). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32);
	__type(value, struct offcpu_missed);
} missed SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, OFFCPU_STAT_CNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

static __always_inline void stat_inc(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &slot);

	if (v)
		*v += 1;	/* per-CPU slot; sched_switch runs with interrupts off */
}

/* After stat_inc, which they use. */
#include "bpf/nsids.bpf.h"
#include "bpf/python_offcpu.bpf.h"

/* A stack id as stored; failures to store are counted, "no stack" (-EFAULT) is not. */
static __always_inline __s32 stack_id(__s32 id)
{
	if (id == -EEXIST)
		stat_inc(OFFCPU_STAT_STACK_COLLISION);
	else if (id == -ENOMEM)
		stat_inc(OFFCPU_STAT_STACK_FULL);
	return id;
}

/* The current task's stack (flags: bpf_get_stackid's) in stacks, else in overflow. */
static __always_inline __s32 offcpu_stack(void *ctx, __u64 flags)
{
	__s32 id = bpf_get_stackid(ctx, &stacks, flags);

	if (id == -EEXIST) {
		stat_inc(OFFCPU_STAT_STACK_OVERFLOWED);
		id = bpf_get_stackid(ctx, &overflow, flags);
		if (id >= 0)
			return id | PROFILE_STACK_OVERFLOW;
	}
	return stack_id(id);
}

#ifdef OFFCPU_NATIVE
#include "bpf/offcpu_native.bpf.h"
#else
/* Without the tables: every user stack is the kernel's frame-pointer walk. */
#define offcpu_native_loaded(cfg, tgid) (-1)
#define offcpu_native_note(ctx, walk, tgid, uid) do { } while (0)
#endif

/*
 * One of tid's intervals is dropped: its switch-in was not seen. Only this
 * CPU switches tid out now, so no other CPU updates its entry meanwhile.
 */
static __always_inline void missed_switch_in(__u32 tid, __u32 tgid)
{
	struct offcpu_missed *m, first;

	stat_inc(OFFCPU_STAT_MISSED_SWITCH_IN);
	m = bpf_map_lookup_elem(&missed, &tid);
	if (m) {
		m->count += 1;
		return;
	}
	__builtin_memset(&first, 0, sizeof(first));
	first.tgid = tgid;
	first.count = 1;
	if (bpf_map_update_elem(&missed, &tid, &first, BPF_NOEXIST))
		stat_inc(OFFCPU_STAT_MISSED_UNKEYED);
}

/* Add ns to key's total; insertion races with other CPUs are retried once. */
static __always_inline void count(void *counts, struct offcpu_key *key, __u64 ns)
{
	__u64 *val;

	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, ns);
		return;
	}
	if (bpf_map_update_elem(counts, key, &ns, BPF_NOEXIST) == 0) {
		stat_inc(OFFCPU_STAT_NEW_KEYS);
		return;
	}
	/* Another CPU inserted it first, or the map is full. */
	val = bpf_map_lookup_elem(counts, key);
	if (val) {
		__sync_fetch_and_add(val, ns);
		return;
	}
	stat_inc(OFFCPU_STAT_COUNT_FULL);
}

/* sched_switch's prev_state: 0 or the helper's error. */
static __always_inline long read_prev_state(void *ctx, struct offcpu_config *cfg, __u64 *state)
{
	__u32 s32 = 0;
	long err;

	/* The helper's size must be a constant in 4.9: one read per field size. */
	if (cfg->prev_state_size == 8)
		return bpf_probe_read(state, 8, ctx + cfg->prev_state_off);
	err = bpf_probe_read(&s32, 4, ctx + cfg->prev_state_off);
	*state = s32;
	return err;
}

/* st's interval of tid, delta ns long, is counted (unless -m/-M leave it out). */
static __always_inline void end_interval(struct offcpu_config *cfg, struct offcpu_start *st,
					 __u32 tid, __s64 delta)
{
	struct offcpu_key key;
	__u64 us;

	if (delta <= 0) {
		stat_inc(OFFCPU_STAT_BAD_DELTA);
		return;
	}
	/* -m/-M compare whole µs, as bcc does; the sum is in ns (see count maps). */
	us = (__u64)delta / 1000;
	if (us < cfg->min_us || us > cfg->max_us)
		return;

	/* Padding is hashed too: zero the whole key first. */
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = st->tgid;
	key.tid = tid;
	key.user_stack_id = st->user_stack_id;
	key.kernel_stack_id = st->kernel_stack_id;
	__builtin_memcpy(key.comm, st->comm, sizeof(key.comm));
	key.py_stack = st->py_stack;
	if (cfg->active_counts)
		count(&counts1, &key, (__u64)delta);
	else
		count(&counts0, &key, (__u64)delta);
}

/* Thread tid is switched in: its interval ends. */
static __always_inline void switch_in(struct offcpu_config *cfg, __u32 tid, __u64 now)
{
	struct offcpu_start *st;

	st = bpf_map_lookup_elem(&start, &tid);
	if (!st)
		return;		/* not wanted, or switched out before the program ran */
	end_interval(cfg, st, tid, now - st->ts);
	bpf_map_delete_elem(&start, &tid);
}

/* The current task's CPU time in ns (se.sum_exec_runtime), or 0 where unknown. */
static __always_inline __u64 current_runtime(struct offcpu_config *cfg)
{
	__u64 ns = 0;

	if (cfg->runtime_off)
		bpf_probe_read(&ns, 8, (void *)(long)bpf_get_current_task() + cfg->runtime_off);
	return ns;
}

/*
 * tid switches out again, and its entry st says that no switch-in was seen
 * since its last switch-out. Its time off-CPU since then is the time gone
 * less the CPU time it had since: the kernel keeps that time current at
 * every switch (update_curr, before sched_switch), and tid ran once, from
 * the unreported switch-in to now (a switch-out between would have been
 * seen here; were it missed too, the difference is still its time away).
 * On this project's VMs it was within 10-60 us of perf's switch records
 * per interval. The CPU time leaves out steal time and, with
 * IRQ_TIME_ACCOUNTING, interrupts: those count as off-CPU. Without the CPU
 * time the interval is dropped, and counted as missed.
 */
static __always_inline void unreported_switch_in(struct offcpu_config *cfg, struct offcpu_start *st,
						 __u32 tid, __u32 tgid, __u64 now, __u64 runtime)
{
	__u64 ran = runtime - st->runtime;

	if (!runtime || !st->runtime || runtime < st->runtime || now <= st->ts ||
	    ran >= now - st->ts) {
		missed_switch_in(tid, tgid);
		return;
	}
	stat_inc(OFFCPU_STAT_UNREPORTED_IN);
	end_interval(cfg, st, tid, (__s64)(now - st->ts - ran));
}

/*
 * The current task is switching out: store it if it is wanted (bcc's -p, -L,
 * --state, --user-threads-only, --kernel-threads-only). Returns its tid when
 * it was stored, else 0.
 */
static __always_inline __u32 switch_out(void *ctx, struct offcpu_config *cfg, __u64 now)
{
	struct offcpu_start st, *left;
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id, tgid = id >> 32;
	__u64 state = 0, runtime;
	long err;

	if (tid == 0)
		return 0;		/* the idle task is never off-CPU */
	if ((cfg->flags & OFFCPU_CFG_FILTER_TGID) && !bpf_map_lookup_elem(&filter_ids, &tgid))
		return 0;
	if ((cfg->flags & OFFCPU_CFG_FILTER_TID) && !bpf_map_lookup_elem(&filter_ids, &tid))
		return 0;
	/*
	 * The thread is on-CPU: an entry of its own means its switch-in was
	 * not seen. Some kernels emit no sched_switch at all for some
	 * switches (this project's 6.18 VMs: none out of their init agent's
	 * threads, and some out of the idle task, for ftrace too; perf's
	 * switch records come), and the program is skipped while another
	 * tracing program holds this CPU's bpf_prog_active. The interval ends
	 * from the thread's CPU time where it is known, and is dropped where
	 * not; either way the entry goes, or, not replaced below when --state
	 * or an exit skips this switch-out, it would be counted at the next
	 * switch-in with on-CPU time included.
	 */
	runtime = current_runtime(cfg);
	left = bpf_map_lookup_elem(&start, &tid);
	if (left) {
		unreported_switch_in(cfg, left, tid, tgid, now, runtime);
		bpf_map_delete_elem(&start, &tid);
	}

	err = read_prev_state(ctx, cfg, &state);
	if (err) {
		stat_inc(OFFCPU_STAT_BAD_CTX);
		return 0;
	}
	if (state & cfg->exit_states)
		return 0;
	/*
	 * Inside a pid namespace: named by records, by thread; those outside
	 * it are left. Not at an exit (above): the kernel has no ids of the
	 * thread left to write into its record (nsids.c).
	 */
	if ((cfg->flags & OFFCPU_CFG_NSIDS) &&
	    !nsid_visible(ctx, tid, tgid, tid, OFFCPU_STAT_NSIDS_FULL))
		return 0;
	if (cfg->flags & OFFCPU_CFG_FILTER_STATE) {
		if (cfg->state == 0 ? (state & cfg->state_mask) != 0 :
				      (state & cfg->state_mask & cfg->state) == 0)
			return 0;
	}

	__builtin_memset(&st, 0, sizeof(st));
	st.ts = now;
	st.runtime = runtime;
	st.state = state;
	st.tgid = tgid;
	st.user_stack_id = PROFILE_STACK_NOT_TAKEN;
	st.kernel_stack_id = PROFILE_STACK_NOT_TAKEN;
	/*
	 * Kernel threads have no user stack (-EFAULT): without BTF this is how
	 * the program tells them apart (bcc reads PF_KTHREAD). Neither have
	 * user workers (io_uring, 6.4+) nor a process between exit_mm and its
	 * end (switched out in exit_mmap, seen on 6.18): their kernel stacks,
	 * which start at a system call, tell the loader.
	 */
	if (cfg->flags & (OFFCPU_CFG_USER_STACK | OFFCPU_CFG_USER_THREADS |
			  OFFCPU_CFG_KERNEL_THREADS)) {
		/* A loaded process's is walked by the tables once it is stored (offcpu_on_switch). */
		int walk = offcpu_native_loaded(cfg, tgid);
		__s32 uid = PROFILE_STACK_NOT_TAKEN;

		if (walk <= 0 || (cfg->flags & (OFFCPU_CFG_USER_THREADS | OFFCPU_CFG_KERNEL_THREADS)))
			uid = offcpu_stack(ctx, BPF_F_USER_STACK);
		if ((cfg->flags & OFFCPU_CFG_USER_THREADS) && uid == -EFAULT)
			return 0;
		if ((cfg->flags & OFFCPU_CFG_KERNEL_THREADS) && uid != -EFAULT)
			return 0;
		offcpu_native_note(ctx, walk, tgid, uid);
		if (cfg->flags & OFFCPU_CFG_USER_STACK)
			st.user_stack_id = walk > 0 ? PROFILE_STACK_NOT_TAKEN : uid;
	}
	if (cfg->flags & OFFCPU_CFG_KERNEL_STACK) {
		__u64 skip = cfg->kernel_skip & BPF_F_SKIP_FIELD_MASK;

		st.kernel_stack_id = offcpu_stack(ctx, skip);
	}
	bpf_get_current_comm(&st.comm, sizeof(st.comm));
	/* tid's entry, if any, was dropped above: a failure is a full map. */
	if (bpf_map_update_elem(&start, &tid, &st, BPF_ANY)) {
		stat_inc(OFFCPU_STAT_START_FULL);
		return 0;
	}
	return tid;
}

/*
 * A tracepoint program's return value decides whether the tracepoint's perf
 * events record the event (perf_trace_run_bpf_submit): 0 would silence
 * sched_switch for every other tool while we run (perf record -e
 * sched:sched_switch, perf's off-CPU profiles). Always 1.
 */
#define LET_OTHERS_RECORD 1

/*
 * --cgroup's thread table for the on-CPU programs (cgroup_members.bpf.h):
 * the current thread, switching out, is in it while it is under the
 * cgroups (under: cgroup_wanted()'s answer). A thread that moves to
 * another cgroup while it runs is looked up by its old one until it next
 * switches out; one that exits leaves the table.
 */
static __always_inline void track_member(void *ctx, struct offcpu_config *cfg, int under)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 state = 0;
	__u8 one = 1;

	if (!tid)
		return;		/* the idle task */
	if (under && !(read_prev_state(ctx, cfg, &state) == 0 && (state & cfg->exit_states))) {
		if (!bpf_map_lookup_elem(&cg_members, &tid) &&
		    bpf_map_update_elem(&cg_members, &tid, &one, BPF_ANY))
			stat_inc(OFFCPU_STAT_MEMBERS_FULL);
		return;
	}
	bpf_map_delete_elem(&cg_members, &tid);
}

/*
 * sched:sched_process_fork, with OFFCPU_CFG_TRACK_CGROUPS: the parent is
 * the current task, and the new thread starts in its cgroups (unless
 * clone3's CLONE_INTO_CGROUP, 5.7+, put it elsewhere: then it is known
 * from its first switch-out). Without this a new thread would not be
 * sampled before its first switch-out. An entry left by an earlier thread
 * of the same id is replaced.
 */
static __always_inline int offcpu_on_fork(void *ctx)
{
	struct offcpu_config *cfg;
	__u32 zero = 0, child = 0;
	__u8 one = 1;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg || !(cfg->flags & OFFCPU_CFG_TRACK_CGROUPS))
		return LET_OTHERS_RECORD;
	if (bpf_probe_read(&child, 4, ctx + cfg->child_pid_off) || !child) {
		stat_inc(OFFCPU_STAT_BAD_CTX);
		return LET_OTHERS_RECORD;
	}
	if (!cgroup_wanted())
		bpf_map_delete_elem(&cg_members, &child);
	else if (bpf_map_update_elem(&cg_members, &child, &one, BPF_ANY))
		stat_inc(OFFCPU_STAT_MEMBERS_FULL);
	return LET_OTHERS_RECORD;
}

/* One sched_switch; id_filter: the IDMAP_* filters of this variant (a constant). */
static __always_inline int offcpu_on_switch(void *ctx, int id_filter)
{
	struct offcpu_config *cfg;
	__u32 zero = 0, prev_pid = 0, next_pid = 0, stored = 0;
	int track, under;
	__u64 now;

	cfg = bpf_map_lookup_elem(&config, &zero);
	if (!cfg)
		return LET_OTHERS_RECORD;
	track = cfg->flags & OFFCPU_CFG_TRACK_CGROUPS;
	if (!track && !cfg->next_pid_off)
		return LET_OTHERS_RECORD;
	/*
	 * --cgroup: prev is the current task, and a switch-in counts only what
	 * its switch-out stored.
	 */
	under = cgroup_wanted();
	/* The table is kept from the open, before the sums start, and without them. */
	if (track)
		track_member(ctx, cfg, under);
	if (!cfg->next_pid_off)
		return LET_OTHERS_RECORD;
	stat_inc(OFFCPU_STAT_SWITCHES);
	now = bpf_ktime_get_ns();
	/* Wrong offsets would count garbage: prev is the current task. */
	if (bpf_probe_read(&prev_pid, 4, ctx + cfg->prev_pid_off) ||
	    bpf_probe_read(&next_pid, 4, ctx + cfg->next_pid_off) ||
	    prev_pid != (__u32)bpf_get_current_pid_tgid()) {
		stat_inc(OFFCPU_STAT_BAD_CTX);
		return LET_OTHERS_RECORD;
	}
	if (next_pid)
		switch_in(cfg, next_pid, now);
	/* --cgroupmap, --mntnsmap: likewise. Last: the walks after it are tail calls. */
	if (under && idmap_wanted(id_filter))
		stored = switch_out(ctx, cfg, now);
#ifdef OFFCPU_NATIVE
	/* The native walk hands the thread to the Python walk when it is done. */
	if (stored)
		offcpu_native_hand_over(ctx, cfg, stored);
#endif
#ifdef OFFCPU_PYTHON
	if (stored && (cfg->flags & OFFCPU_CFG_PYTHON)) {
		struct offcpu_start *st = bpf_map_lookup_elem(&start, &stored);

		if (st)
			py_hand_over_offcpu(ctx, st, st->tgid, stored);
	}
#endif
	return LET_OTHERS_RECORD;
}

#endif
