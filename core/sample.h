/* SPDX-License-Identifier: GPL-2.0 */
/* What a backend hands the core: one stack, seen `weight` times. */
#ifndef CORE_SAMPLE_H
#define CORE_SAMPLE_H

#include <stdint.h>
#include <sys/types.h>

#define TASK_COMM_LEN 16
/* The kernel's default perf_event_max_stack, and bpf_get_stackid()'s limit. */
#define MAX_STACK_DEPTH 127

/* Stands last in user_ips for a stack deeper than MAX_STACK_DEPTH (dwarf mode). */
#define STACK_TRUNCATED_IP UINT64_MAX

struct sample {
	pid_t pid;			/* thread group id */
	pid_t tid;
	int cpu;
	char comm[TASK_COMM_LEN];	/* the thread's comm */
	const uint64_t *kernel_ips;	/* leaf first */
	unsigned int nr_kernel;
	const uint64_t *user_ips;	/* leaf first */
	unsigned int nr_user;
	/* 0, or why the stack is missing: -EEXIST (collision) or -ENOMEM (map full). */
	int kernel_err;
	int user_err;
	uint64_t weight;		/* 1 for a ring sample, N for a kernel-counted entry */
};

#endif
