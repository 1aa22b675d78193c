/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The off-CPU program's variant that unwinds user stacks by the native
 * tables (bpf/offcpu_native.bpf.c; --unwind auto): loaded on the off-CPU
 * program's maps and, where the counting program unwinds by them too, on
 * its tables (one store fills both); else on tables of its own, for which
 * the backend makes a store (native.c).
 */
#ifndef BACKEND_BPF_OFFCPU_NATIVE_H
#define BACKEND_BPF_OFFCPU_NATIVE_H

#include <bpf/libbpf.h>

struct native_store_opts;
struct offcpu_native_bpf;

/*
 * Loaded on offcpu's maps, and on tables' native tables (NULL: its own,
 * sized for a store made with opts), slots walked stacks kept for the run
 * (a power of two): its skeleton, or NULL with errno.
 */
struct offcpu_native_bpf *offcpu_native__load(struct bpf_object *offcpu,
					      const struct bpf_object *tables, unsigned int slots,
					      const struct native_store_opts *opts);
/* Its parts: the switch program to attach, the walked stacks' map, the object. */
struct bpf_program *offcpu_native__switch_prog(const struct offcpu_native_bpf *skel);
int offcpu_native__stacks_fd(const struct offcpu_native_bpf *skel);
struct bpf_object *offcpu_native__object(const struct offcpu_native_bpf *skel);
void offcpu_native__destroy(struct offcpu_native_bpf *skel);

/* -v: how the user stacks at switch-out were walked (the off-CPU program's stats). */
void offcpu_native__report(int stats_fd, int nr_cpus);

#endif
