/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The bpf backend's off-CPU time: bpf/offcpu.bpf.c on sched:sched_switch
 * (its record read at the offsets tracefs gives: no BTF needed, Linux 4.9)
 * sums microseconds per {thread, stacks at switch-out} in the kernel; the
 * loader drains the sums into the pipeline, and at the end counts the
 * threads still switched out up to then (bcc forgets them).
 */
#ifndef BPFBACKEND_OFFCPU_H
#define BPFBACKEND_OFFCPU_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "core/agg/pipeline.h"
#include "core/backend/backend.h"

struct bpf_offcpu;
struct bpf_python;

/*
 * Whether it can run here: tracefs, the tracepoint, the program; with
 * track, what keeping --cgroup's thread table needs too. 0 or -errno with why.
 */
int bpf_offcpu__probe(const struct backend_config *cfg, bool track, char *why, size_t len);

struct bpf_object;
struct native_store_opts;
/*
 * --unwind auto's user stacks by the native tables (backend-bpf/offcpu_native.h):
 * those of the counting program's unwinder (tables), or, NULL, its own, for
 * a store made with opts (bpf_offcpu__native_object).
 */
struct bpf_offcpu_native {
	const struct bpf_object *tables;
	const struct native_store_opts *opts;
};

/*
 * Load and attach (idle until start). Off-CPU time if cfg asks for it,
 * its user stacks by the native tables where native is not NULL; with
 * members_fd >= 0, also --cgroup's thread table there for the on-CPU
 * programs (bpf/cgroup_members.bpf.h), kept from now on. Returns 0 or
 * -errno with a reason.
 */
int bpf_offcpu__open(struct bpf_offcpu **out, const struct backend_config *cfg,
		     struct pipeline *p, int members_fd, const struct bpf_offcpu_native *native,
		     struct errmsg *err);
/* Its variant that walks by the native tables (their maps its own where tables was NULL), or NULL. */
struct bpf_object *bpf_offcpu__native_object(const struct bpf_offcpu *o);
/* That variant told to walk by frame pointers: no store fills its tables. */
void bpf_offcpu__native_off(struct bpf_offcpu *o);
int bpf_offcpu__start(struct bpf_offcpu *o, struct errmsg *err);
/* Stop summing; the end of the run for threads still switched out. */
void bpf_offcpu__stop(struct bpf_offcpu *o);
/* Move sums into the pipeline: now and then while running, everything once stopped. */
int bpf_offcpu__drain(struct bpf_offcpu *o);
/* Adds its losses and counts to st. */
void bpf_offcpu__stats(const struct bpf_offcpu *o, struct backend_stats *st);
void bpf_offcpu__close(struct bpf_offcpu *o);

/* Its Python walk, or NULL when it walks none (backend_ops.set_interp tells it the processes). */
struct bpf_python *bpf_offcpu__python(const struct bpf_offcpu *o);

/* Test seam: the threads' CPU time unknown, as without kernel BTF (switch-ins unreported lost). */
extern bool bpf_offcpu__test_no_runtime;

#endif
