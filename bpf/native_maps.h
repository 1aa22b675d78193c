/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --unwind auto on the bpf backend: user stacks unwound inside the BPF
 * program from .eh_frame/.debug_frame compiled in user space
 * (unwind/tables/), with no stack copy (issue 45). The layouts the program
 * (bpf/native.bpf.h) and its loader (backend-bpf/native_*.c) share.
 *
 * Linux 4.9 has no map-in-map (4.12) and no loops, so every binary's
 * tables live in flat maps shared by all, and each step is a fixed number
 * of lookups:
 *
 *   pc --native_pages--> (table, bias)          where the pc's code is, per process
 *   (table, vaddr page) --native_index--> rows  which rows hold that 64 KiB of code
 *   rows --16 bisection steps--> rule           the last row at or below the vaddr
 *   rule --native_rules--> how to step          host-wide, interned across binaries
 *
 * vaddr = pc - bias is the ELF virtual address (unwind/image.h's load
 * bias). Tables are keyed by a table id that user space gives each distinct
 * file (by its identity: build-id, dev/inode, under the trust rules of
 * core/proc), so a library mapped by many processes is loaded once.
 */
#ifndef BPF_NATIVE_MAPS_H
#define BPF_NATIVE_MAPS_H

#include <linux/types.h>

/* The page a pc is looked up by (unwind/tables: UNWIND_TABLE_PAGE_SHIFT). */
#define NATIVE_PAGE_SHIFT 16
/* Where a 64 KiB page holds more than one mapping: 4 KiB pages, a mapping's granule. */
#define NATIVE_SMALL_SHIFT 12

/* Key of native_pages: a process's page of virtual addresses. */
struct native_page_key {
	__u32 tgid;
	__u32 small;			/* 0: page = va >> 16; 1: page = va >> 12 */
	__u64 page;
};

enum native_page_kind {
	/* Code with a table: vaddr = pc - bias, rows by (table, vaddr >> 16). */
	NATIVE_PAGE_TABLE = 1,
	/* More than one mapping in this 64 KiB: look the 4 KiB page up (small = 1). */
	NATIVE_PAGE_SPLIT = 2,
	/* Code known to have no usable table (none, refused, over the budget): frame pointers. */
	NATIVE_PAGE_NO_TABLE = 3,
	/* Code known to keep frame pointers throughout (unwind_table__fp_share): walk by rbp. */
	NATIVE_PAGE_FP = 4,
};

struct native_page {
	__u64 bias;
	__u32 table;
	__u32 kind;			/* enum native_page_kind */
};

/*
 * Value of native_procs: present once every page of the process is
 * written. gen changes with each (re)read of its mappings.
 */
struct native_proc {
	__u32 gen;
	__u32 nr_pages;		/* entries of native_pages it has (for -v; the program needs none) */
	/*
	 * Until then (bpf_ktime_get_ns), a sample whose leaf is in no known
	 * mapping goes as a stack copy: a library the process mapped since
	 * it was read (set when a read found new pages). After it, such a
	 * leaf is JIT code, which frame pointers walk as before.
	 */
	__u64 copies_until_ns;
	/*
	 * Not walked: every sample goes as a stack copy while the copies'
	 * lease lasts (a process that runs Node.js, whose JavaScript frames
	 * are read from the copies in user space); it has no pages.
	 */
	__u32 copies_only;
	__u32 pad;
};

/* Key of native_index: a table's 64 KiB page of ELF vaddrs. */
struct native_index_key {
	__u32 table;
	__u32 page;			/* vaddr >> 16 */
};

/* Value of native_index: the page's rows in native_rows, [first, first + nr). */
struct native_range {
	__u32 first;
	__u32 nr;			/* at most 65536 (unwind/tables' layout) */
};

/*
 * native_rows: an ARRAY of __u32, each row (rule << 16) | (vaddr & 0xffff),
 * rule an index in native_rules (host-wide: each table's rules interned on
 * load). native_rules: an ARRAY of struct native_rule; slot 0 is NONE.
 */
#define NATIVE_ROW_ADDR(r) ((r) & 0xffff)
#define NATIVE_ROW_RULE(r) ((r) >> 16)

/* unwind/tables.h's struct unwind_rule, byte for byte (enum unwind_cfa, enum unwind_rbp). */
struct native_rule {
	__s32 cfa_off;
	__s16 rbp_off;
	__u8 cfa;
	__u8 rbp;
	__u8 fold_at;
	__s8 fold_off;
	__u16 zero;
};

/* struct native_rule's cfa: unwind/tables.h's enum unwind_cfa, value for value. */
enum native_cfa {
	NATIVE_CFA_NONE,
	NATIVE_CFA_STOP,
	NATIVE_CFA_END,
	NATIVE_CFA_RSP,
	NATIVE_CFA_RBP,
	NATIVE_CFA_PLT,
	NATIVE_CFA_SIGNAL,
};

/* struct native_rule's rbp: unwind/tables.h's enum unwind_rbp. */
enum native_rbp {
	NATIVE_RBP_SAME,
	NATIVE_RBP_CFA,
	NATIVE_RBP_LOST,
};

/*
 * native_cache: per CPU, the rule the walk last found for a pc of a
 * process (slot by a hash of both), so that a hot stack's frames are found
 * with one lookup, not two hash lookups and 18 array reads each. An entry
 * stands while its epoch is native_epoch[0], which user space bumps after
 * any native_pages entry changed or went (a process read again, dropped).
 */
#define NATIVE_CACHE_SLOTS 1024

struct native_cached {
	__u64 pc;			/* the pc looked up (a return address - 1) */
	__u32 tgid;
	__u32 epoch;
	__s32 cfa_off;			/* the fold applied: this pc's */
	__s16 rbp_off;
	__u8 cfa;
	__u8 rbp;
};

/*
 * Slots of native_progs (the loader fills them): the step program, the
 * finish program; the stack-copy program that takes a user-mode sample of a
 * process the tables do not have yet, and the one that takes a kernel-mode
 * sample's too (the variant with bpf_task_pt_regs, which sends its kernel
 * stack in the record: the others take it into generation 0's stack map,
 * which the counting program's drain empties). Empty copy slots: the
 * kernel's frame-pointer walk, as before.
 */
#define NATIVE_PROG_STEP 0
#define NATIVE_PROG_FINISH 1
#define NATIVE_PROG_COPY 2
#define NATIVE_PROG_COPY_KERNEL 3
#define NATIVE_PROGS 4

/* Why a walk ended: profile_ustack.end of a stack the native walk stored. */
enum native_end {
	NATIVE_END_COMPLETE = 1,	/* an END rule: the thread's outermost frame */
	NATIVE_END_NO_CFI = 2,		/* a pc no row covers (NONE), or a STOP rule: marked */
	NATIVE_END_TRUNCATED = 3,	/* PROFILE_MAX_STACK_DEPTH frames: marked */
	NATIVE_END_READ = 4,		/* a read of the stack failed */
	NATIVE_END_UNMAPPED = 5,	/* a pc in no known mapping (new code, JIT): marked */
	NATIVE_END_FP = 6,		/* ended by a frame-pointer walk's end (zero rbp / ra) */
};

#endif
