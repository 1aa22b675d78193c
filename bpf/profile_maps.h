/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layouts shared by the BPF program (bpf/profile.bpf.c) and its loader
 * (backend-bpf/). Fixed-size types only: both sides must agree byte for byte.
 */
#ifndef BPF_PROFILE_MAPS_H
#define BPF_PROFILE_MAPS_H

#include <linux/types.h>

#define PROFILE_COMM_LEN 16
#define PROFILE_MAX_STACK_DEPTH 127

/* Stack id stored when that stack was not asked for (-U, -K). */
#define PROFILE_STACK_NOT_TAKEN (-1000)

/* profile_config.flags */
#define PROFILE_CFG_USER_STACK (1U << 0)
#define PROFILE_CFG_KERNEL_STACK (1U << 1)
#define PROFILE_CFG_INCLUDE_IDLE (1U << 2)
#define PROFILE_CFG_FILTER_TGID (1U << 3)	/* -p: tgid must be in filter_ids */
#define PROFILE_CFG_FILTER_TID (1U << 4)	/* -L: tid must be in filter_ids */

/* The one element of the config ARRAY map (no global variables before 5.2). */
struct profile_config {
	__u32 flags;
	/* Which of the two count maps the program writes: the other one is being drained. */
	__u32 active_counts;
};

/* Key of the count maps: bcc's key_t plus the thread id under -L. */
struct profile_key {
	__u32 tgid;
	__u32 tid;			/* only with PROFILE_CFG_FILTER_TID, else 0 */
	__s32 user_stack_id;		/* >= 0, -EFAULT (none), or an error */
	__s32 kernel_stack_id;
	__u64 kernel_ip;		/* the interrupted ip when in the kernel, else 0 */
	char comm[PROFILE_COMM_LEN];
};

/* Slots of the per-CPU stats array. */
enum profile_stat {
	PROFILE_STAT_SAMPLES,		/* program runs */
	PROFILE_STAT_NEW_KEYS,		/* keys inserted (for the drain decision) */
	PROFILE_STAT_HASH_FULL,		/* samples dropped: count map full */
	PROFILE_STAT_CNT,
};

#endif
