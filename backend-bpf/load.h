/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Loading the counting program and its variants (pid namespaces, bcc's
 * pinned id maps) with the map sizes a run asks for. libbpf's messages go
 * through the profiler's verbosity.
 */
#ifndef BACKEND_BPF_LOAD_H
#define BACKEND_BPF_LOAD_H

#include <stdbool.h>

#include "bpf/profile.skel.h"
#include "bpf/profile_fpwalk.skel.h"
#include "bpf/profile_fpwalk_regs.skel.h"
#include "bpf/profile_idmap.skel.h"
#include "bpf/profile_mntns.skel.h"
#include "bpf/profile_native.skel.h"
#include "bpf/profile_native_regs.skel.h"
#include "bpf/profile_pidns.skel.h"
#include "core/backend/backend.h"

/* In a pid namespace, the stack-copy program has the namespace's ids only in its 5.15 variant. */
#define PIDNS_DWARF_WHY "the profiler runs in a pid namespace, where --unwind dwarf on the bpf " \
			"backend needs bpf_task_pt_regs (Linux 5.15 with BTF)"
/* What --unwind auto does there instead, with kernels before that (-v). */
#define PIDNS_AUTO_FP "in a pid namespace, user stacks by frame pointers (--unwind auto: " \
		      "the in-kernel unwinder does not run there, and stack copies need " \
		      "bpf_task_pt_regs, Linux 5.15 with BTF)"
/* Before 5.7, with the records' variant (nsids.h) refused: printf format, its strerror. */
#define PIDNS_WHY "the profiler runs in a pid namespace, whose ids the bpf backend takes " \
		  "from bpf_get_ns_current_pid_tgid (Linux 5.7) or else from the perf " \
		  "records the kernel writes; the kernel refused the program of the latter: %s"


/* The overflow stack map of a generation: only collisions of the first map go there. */
unsigned int bpf_load__overflow_size(unsigned int stack);
/*
 * Open and load the program with these map sizes (members: of --cgroup's
 * thread table, 0 when unused; python: the Python walk's tables at their
 * size, else at one entry; maps_only: the maps without the program, for
 * the variants). Returns the skeleton or NULL, errno set.
 */
struct profile_bpf *bpf_load__program(unsigned int hash, unsigned int stack, unsigned int nr_ids,
				       bool dwarf, unsigned int members, bool python,
				       bool maps_only);
/*
 * The counting program on the maps of one loaded with maps_only, where no
 * variant runs on them. Returns the skeleton or NULL, errno set.
 */
struct profile_bpf *bpf_load__counting_program(struct profile_bpf *maps);

/* The counting program for a profiler in a pid namespace, on the loaded one's maps. */
struct profile_pidns_bpf *bpf_load__pidns_program(struct profile_bpf *counting);
/*
 * The counting program that walks user stacks itself, on the loaded one's
 * maps, its stack tables of `entries`: the 5.15 variant (kernel-mode
 * samples too) into *regs, else the 5.5 one into *plain. Returns 0 or
 * -errno (neither loaded); the caller destroys what was loaded.
 */
int bpf_load__fpwalk_program(struct profile_bpf *counting, unsigned int entries,
			     struct profile_fpwalk_regs_bpf **regs, struct profile_fpwalk_bpf **plain);
/*
 * The counting program that unwinds user stacks by the native tables
 * (bpf/native.bpf.h), on the loaded one's maps, with slots stored stacks a
 * generation (a power of two), its tables at the sizes of the store made
 * with store_opts, its step and finish programs in its native_progs: the
 * 5.15 variant (a kernel-mode sample's user registers by bpf_task_pt_regs)
 * into *regs where regs_wanted, else the 4.9 one (those registers read from
 * the top of the task's kernel stack) into *plain. Returns 0 or -errno; the
 * caller destroys what was opened.
 */
struct native_store_opts;
int bpf_load__native_program(struct profile_bpf *counting, unsigned int slots,
			     const struct native_store_opts *store_opts, bool regs_wanted,
			     struct profile_native_regs_bpf **regs, struct profile_native_bpf **plain);
/*
 * Of any object that holds the native tables' maps (the counting
 * program's variants, the off-CPU one's): their sizes for a store made
 * with store_opts, set before its load; once loaded, its step and finish
 * programs put in its native_progs. Both return 0 or -errno.
 */
int bpf_load__size_native_tables(struct bpf_object *obj, const struct native_store_opts *store_opts);
int bpf_load__native_progs(struct bpf_object *obj);
/*
 * bcc's pinned maps: the counting program's variant that reads them, on the
 * loaded one's maps (--mntnsmap's is CO-RE). Returns 0 or -errno; the
 * caller destroys what was opened.
 */
int bpf_load__idmap_program(struct profile_bpf *counting, const struct backend_config *c,
			    struct profile_idmap_bpf **idmap, struct profile_mntns_bpf **mntns,
			    struct bpf_program **prog);

#endif
