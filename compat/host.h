/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the host says of itself: the perf_event sysctls, the memory
 * available, the kernel's release.
 */
#ifndef COMPAT_HOST_H
#define COMPAT_HOST_H

#include <stdbool.h>
#include <stdint.h>

/* kernel.perf_event_paranoid (2, the kernel's default, if it cannot be read). */
int perf_event_paranoid(void);

/* kernel.perf_event_max_sample_rate: the highest -F, and 1e9 / it the shortest -c (ns). */
unsigned int perf_event_max_sample_rate(void);

/* MemAvailable from /proc/meminfo, in bytes; 0 if unknown. */
uint64_t mem_available_bytes(void);

/* "6.18.44-..." from uname. */
const char *kernel_release(void);

/*
 * Whether user stacks taken inside a system call may end at the libc
 * wrapper on this kernel (uname's release and machine): before Linux 4.16,
 * x86-64's system-call fast path left rbp out of the registers it saved, so
 * the kernel's walk of the user stack starts from an older value, for perf
 * record's profiles too (tests/kernels/README.md, the 4.4 cell).
 */
bool kernel_cuts_syscall_user_stacks(const char *release, const char *machine);

#endif
