// SPDX-License-Identifier: GPL-2.0
/*
 * profile_native.bpf.c with kernel-mode samples unwound too, from the
 * task's user registers (bpf_task_pt_regs: Linux 5.15 with kernel BTF);
 * profile_native.bpf.c where this one is refused.
 *
 * bpf-compat: linux-5.15
 */
#define NATIVE_TASK_REGS
#define NATIVE_BOUNDED_LOOPS
#define NATIVE_STACK_WINDOW
#define NATIVE_GLOBAL_FUNCS
#include "bpf/profile_native.bpf.c"
