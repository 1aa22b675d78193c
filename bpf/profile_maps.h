/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layouts shared by the BPF program (bpf/profile.bpf.c) and its loader
 * (backend-bpf/). Fixed-size types only: both sides must agree byte for byte.
 */
#ifndef BPF_PROFILE_MAPS_H
#define BPF_PROFILE_MAPS_H

#include <linux/types.h>

#include "bpf/python_maps.h"

#define PROFILE_COMM_LEN 16
#define PROFILE_MAX_STACK_DEPTH 127

/* Stack id stored when that stack was not asked for (-U, -K). */
#define PROFILE_STACK_NOT_TAKEN (-1000)
/*
 * Set in a stack id taken from the generation's overflow stack map (after a
 * collision in its first stack map). Ids are below --stack-storage-size's
 * limit of 2^24, so the bit is free.
 */
#define PROFILE_STACK_OVERFLOW (1 << 30)
/*
 * Set in a user stack id the program walked itself (Linux 5.5,
 * bpf/fpwalk.bpf.h): the stack is in the generation's ustacks map, under
 * the id's other bits.
 */
#define PROFILE_STACK_WALKED (1 << 29)
/*
 * Set in a stack copy's stack id taken into generation 1's stack maps
 * (bpf/stackid.bpf.h, take_copy_stack): the counting program's ids go with
 * their generation's counts, a copy's go to user space alone.
 */
#define PROFILE_STACK_GEN1 (1 << 28)

/* A value of the ustacks maps: the ip, then the return addresses, depth of them. */
struct profile_ustack {
	__u32 depth;
	__u32 end;			/* the native walk's enum native_end (bpf/native_maps.h), else 0 */
	__u64 ips[PROFILE_MAX_STACK_DEPTH];
};

/* profile_config.flags */
#define PROFILE_CFG_USER_STACK (1U << 0)
#define PROFILE_CFG_KERNEL_STACK (1U << 1)
#define PROFILE_CFG_INCLUDE_IDLE (1U << 2)
#define PROFILE_CFG_FILTER_TGID (1U << 3)	/* -p: tgid must be in filter_ids */
#define PROFILE_CFG_FILTER_TID (1U << 4)	/* -L: tid must be in filter_ids */
#define PROFILE_CFG_PIDNS (1U << 5)	/* ids as seen in the pid namespace pidns_dev/ino */
#define PROFILE_CFG_CGROUP_MEMBERS (1U << 6)	/* --cgroup: the thread must be in cg_members */
#define PROFILE_CFG_KEY_TID (1U << 7)	/* the key holds the tid without filtering by it */
#define PROFILE_CFG_PYTHON (1U << 8)	/* walk the Python frames of py_procs' processes */
/*
 * The native walk's processes not loaded yet, and its walks that end at
 * code mapped since, go to stack copies while copies_until_ns lasts: the
 * runs that name processes (backend-bpf/first_copies.c). Without it only
 * the processes native_procs leaves to copies (copies_only) take them.
 */
#define PROFILE_CFG_COPY_NEW (1U << 9)

/* The one element of the config ARRAY map (no global variables before 5.2). */
struct profile_config {
	__u32 flags;
	/*
	 * The generation the counting program writes: count map, stack map and
	 * overflow stack map 0 or 1. The other one is being drained and cleared.
	 */
	__u32 active_counts;
	__u32 dump_chunks;		/* dwarf program only */
	/*
	 * The native walk (bpf/native.bpf.h): slots of its stored-stack
	 * arrays, a power of two (0 when it is not loaded).
	 */
	__u32 native_slots;
	/* The profiler's pid namespace (stat of /proc/self/ns/pid), with PROFILE_CFG_PIDNS. */
	__u64 pidns_dev;
	__u64 pidns_ino;
	/*
	 * The native walk's stack copies of processes it cannot walk yet are
	 * taken until this CLOCK_MONOTONIC time (bpf_ktime_get_ns), which
	 * user space moves on at each drain: a stopped or starved profiler
	 * reads no copies, and the kernel's walk counts those samples here.
	 */
	__u64 copies_until_ns;
};

/* Key of the count maps: bcc's key_t plus the thread id under -L. */
struct profile_key {
	__u32 tgid;
	__u32 tid;			/* with PROFILE_CFG_FILTER_TID or _KEY_TID, else 0 */
	__s32 user_stack_id;		/* >= 0, -EFAULT (none), or an error */
	__s32 kernel_stack_id;
	__u64 kernel_ip;		/* the interrupted ip when in the kernel, else 0 */
	char comm[PROFILE_COMM_LEN];
	/* The Python frames' (bpf/python_maps.h: PY_STACK_*), 0 for other processes. */
	__u64 py_stack;
};

/*
 * --unwind dwarf: for each sample the program sends the copy of the user
 * stack (from sp up, until a read fails or --stack-dump-size is reached) in
 * pieces, then the head that closes the sample, all through a perf event
 * array. A run of a BPF program is not interrupted by another on its CPU,
 * so a sample's records are consecutive in that CPU's ring; user space
 * joins the pieces that precede a head, and drops a sample when records
 * were lost before its head.
 *
 * Linux 4.9's helpers read into and send from the BPF stack only: there the
 * pieces are PROFILE_DUMP_PIECE_STACK bytes (the room left on the 512-byte
 * BPF stack). From 4.10 they go through a per-CPU map value, in pieces of
 * PROFILE_DUMP_PIECE_MAP: fewer records, and much less work for the
 * verifier (4.19's marks every stack byte a helper reads in every earlier
 * state: minutes for the stack variant under emulation). From 5.15 the
 * head and the whole copy go in one record (DWARF_REC_HEAD_PIECE), the
 * copy's first PROFILE_DUMP_PIECE_ONE bytes in a piece before it when
 * longer: a perf record's size is 16 bits, and the sample's header, time,
 * cpu and raw size take 28 bytes of it.
 */
#define PROFILE_DUMP_PIECE_STACK 384
#define PROFILE_DUMP_PIECE_MAP 4096
#define PROFILE_DUMP_PIECE_ONE 61440
#define PROFILE_DUMP_UNIT PROFILE_DUMP_PIECE_STACK	/* of profile_config.dump_chunks */
#define PROFILE_DUMP_MAX_UNITS 171	/* 65664 bytes, above --stack-dump-size's 65528 */
#define PROFILE_DUMP_MAX (PROFILE_DUMP_UNIT * PROFILE_DUMP_MAX_UNITS)

enum dwarf_record_kind {
	DWARF_REC_PIECE = 1,
	DWARF_REC_HEAD = 2,
	/* A head, then a piece (the copy or its end): a sample in one record, from 5.15. */
	DWARF_REC_HEAD_PIECE = 3,
	/*
	 * The same, then the kernel stack (leaf first) in the rest of the
	 * record: head.kernel_stack_id is its number of frames, not an id
	 * (negative: the error). The piece may be empty (no user copy). The
	 * 5.15 program's: it needs no stack map.
	 */
	DWARF_REC_HEAD_PIECE_KSTACK = 4,
	/*
	 * Python frames walked at the sample (struct dwarf_py), sent before
	 * the sample's pieces and head: the head says how many it has.
	 */
	DWARF_REC_PY = 5,
};

/* A piece: this, then len bytes of the stack copy. */
struct dwarf_piece {
	__u32 kind;			/* DWARF_REC_PIECE */
	__u32 len;			/* bytes of data: raw records are padded to 8 bytes */
};

struct dwarf_head {
	__u32 kind;			/* DWARF_REC_HEAD */
	__u32 tgid;
	__u32 tid;
	__s32 kernel_stack_id;
	/* A frame-pointer stack id when no user registers were available, else NOT_TAKEN. */
	__s32 user_stack_id;
	__u16 regs_valid;		/* ip, sp and bp are the user registers, pieces precede */
	/*
	 * The Python frames of the sample (PROFILE_CFG_PYTHON): why there are
	 * none (PY_STACK_*, 0 for a process that is not Python), or
	 * DWARF_PY_SENT or'ed with the walk's PY_WALK_* status when they went
	 * in DWARF_REC_PY records just before. In the room of a flag: the 4.9
	 * program has no 8 bytes of BPF stack to spare for a field of its own.
	 */
	__u16 py;
	__u64 kernel_ip;
	__u64 ip, sp, bp;
	char comm[PROFILE_COMM_LEN];
};

#define DWARF_PY_SENT 0x100

/*
 * A DWARF_REC_PY record: frames first .. first + PY_FRAMES_PER_PIECE - 1 of
 * the sample's Python stack of nr frames (leaf first); those from nr on are
 * not meaningful. tid is the sampled thread's, for the join to check
 * against the head.
 */
struct dwarf_py {
	__u32 kind;
	__u32 first;
	__u32 tid;
	__u32 nr;
	struct py_frame frames[PY_FRAMES_PER_PIECE];
};

/* profile_config.dump_chunks: --stack-dump-size in PROFILE_DUMP_UNITs, rounded up. */

/* Slots of the per-CPU stats array. */
enum profile_stat {
	PROFILE_STAT_SAMPLES,		/* program runs */
	PROFILE_STAT_NEW_KEYS,		/* keys inserted (for the drain decision) */
	PROFILE_STAT_HASH_FULL,		/* samples dropped: count map full */
	PROFILE_STAT_NO_USER_REGS,	/* dwarf: kernel-mode sample, frame-pointer user stack */
	/* Counting program: stacks lost (collision in both stack maps, full map, fault). */
	PROFILE_STAT_USER_STACK_LOST,
	PROFILE_STAT_KERNEL_STACK_LOST,
	PROFILE_STAT_STACK_OVERFLOWED,	/* collisions in the first stack map saved by the second */
	PROFILE_STAT_STACK_NOMEM,	/* of the lost: no free element in the stack map */
	PROFILE_STAT_NSIDS_FULL,	/* pid namespace records: a task not kept in the nsids map */
	/* Counting program runs ended; with SAMPLES, the loader waits out runs in flight. */
	PROFILE_STAT_RUNS_DONE,
	/* Python (bpf/python.bpf.c): samples walked, pieces not stored (map full), tail calls refused. */
	PROFILE_STAT_PY_WALKED,
	PROFILE_STAT_PY_FULL,
	PROFILE_STAT_PY_NO_PROG,
	/* Threads noted in py_unknown (bpf/python_common.bpf.h): user space reads them at once. */
	PROFILE_STAT_PY_UNKNOWN,
	/*
	 * Stack ids in the keys inserted: no more stacks than this are new to
	 * the stack maps (a user-mode sample takes one; a Python stack's key is
	 * new at every new frame or line, its native stacks seldom).
	 */
	PROFILE_STAT_NEW_STACKS,
	/*
	 * The native walk (bpf/native.bpf.h, --unwind auto): user stacks
	 * walked and stored; samples that went to the kernel's frame-pointer
	 * walk instead (kernel mode, 32-bit code, a process the tables do not
	 * have yet, a stored-stack table full, the step program missing);
	 * walks that ended without CFI, at a failed read, at a pc in no known
	 * mapping, or cut at PROFILE_MAX_STACK_DEPTH.
	 */
	PROFILE_STAT_NATIVE_WALKED,
	PROFILE_STAT_NATIVE_KERNEL_MODE,
	PROFILE_STAT_NATIVE_COMPAT,
	PROFILE_STAT_NATIVE_UNKNOWN,
	/* Processes noted in native_unknown: user space reads them at once. */
	PROFILE_STAT_NATIVE_NOTED,
	PROFILE_STAT_NATIVE_FULL,
	PROFILE_STAT_NATIVE_NO_PROG,
	PROFILE_STAT_NATIVE_NO_CFI,
	PROFILE_STAT_NATIVE_READ,
	PROFILE_STAT_NATIVE_UNMAPPED,
	PROFILE_STAT_NATIVE_TRUNCATED,
	/* Samples of processes not loaded yet sent as stack copies instead (the copy program's). */
	PROFILE_STAT_NATIVE_COPIED,
	/* Of them, walks whose leaf was in code mapped since the process was read (native_finish). */
	PROFILE_STAT_NATIVE_UNMAPPED_COPIED,
	/*
	 * Samples of the processes left to copies (native_proc.copies_only):
	 * sent as copies (also in PROFILE_STAT_NATIVE_COPIED), and walked by
	 * frame pointers instead because the copies' lease was out (a drain
	 * late) or the copy program is missing.
	 */
	PROFILE_STAT_NATIVE_INTERP_COPIED,
	PROFILE_STAT_NATIVE_INTERP_FP,
	PROFILE_STAT_CNT,
};

#endif
