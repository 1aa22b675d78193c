// SPDX-License-Identifier: GPL-2.0
/*
 * Loading the off-CPU program that unwinds user stacks by the native
 * tables (offcpu_native.h), and its -v counts.
 */
#include "backend-bpf/offcpu_native.h"

#include <errno.h>

#include "backend-bpf/countmap.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/load.h"
#include "backend-bpf/shared_maps.h"
#include "bpf/offcpu_maps.h"
#include "bpf/offcpu_native.skel.h"
#include "core/lib/log.h"

/* The tables and what the walk shares with the counting program's: one store fills them. */
static const char *const table_maps[] = { "native_procs", "native_pages", "native_index",
					  "native_rows",  "native_rules", "native_cache",
					  "native_epoch", "native_unknown", "native_wake" };

static int reuse_tables(struct bpf_object *obj, const struct bpf_object *tables)
{
	for (size_t i = 0; i < sizeof(table_maps) / sizeof(table_maps[0]); i++) {
		const struct bpf_map *src = bpf_object__find_map_by_name(tables, table_maps[i]);
		int err;

		if (!src)
			return -ENOENT;
		err = bpf_map__reuse_fd(bpf_object__find_map_by_name(obj, table_maps[i]),
					bpf_map__fd(src));
		if (err)
			return err;
	}
	return 0;
}

struct offcpu_native_bpf *offcpu_native__load(struct bpf_object *offcpu,
					      const struct bpf_object *tables, unsigned int slots,
					      const struct native_store_opts *opts)
{
	struct offcpu_native_bpf *skel = offcpu_native_bpf__open();
	int err;

	if (!skel)
		return NULL;
	/* Its maps by name: the off-CPU program's first, then the tables. */
	err = shared_maps__reuse(skel->obj, offcpu);
	if (!err)
		err = tables ? reuse_tables(skel->obj, tables)
			     : bpf_load__size_native_tables(skel->obj, opts);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.ustacks_off, slots);
	if (!err)
		err = bpf_map__set_max_entries(skel->maps.uclaims_off, slots);
	if (!err)
		err = bpf_interruptible__load(skel->skeleton);
	if (!err)
		err = bpf_load__native_progs(skel->obj);
	if (err) {
		offcpu_native_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

struct bpf_program *offcpu_native__switch_prog(const struct offcpu_native_bpf *skel)
{
	return skel->progs.offcpu_switch_native;
}

int offcpu_native__stacks_fd(const struct offcpu_native_bpf *skel)
{
	return bpf_map__fd(skel->maps.ustacks_off);
}

struct bpf_object *offcpu_native__object(const struct offcpu_native_bpf *skel)
{
	return skel->obj;
}

void offcpu_native__destroy(struct offcpu_native_bpf *skel)
{
	offcpu_native_bpf__destroy(skel);
}

void offcpu_native__report(int stats_fd, int nr_cpus)
{
#define S(slot) ((unsigned long long)percpu_stat(stats_fd, OFFCPU_STAT_NATIVE_##slot, nr_cpus))
	pr_info("bpf: native unwinding off-CPU: %llu stacks walked at switch-out (%llu ended "
		"without CFI, %llu at a failed read, %llu at code in no known mapping, %llu cut at "
		"%d frames); by frame pointers instead: %llu of processes not loaded (%llu "
		"processes noted, some for code mapped since), %llu left to stack copies "
		"(Node.js), %llu without user registers found, %llu for want of room, %llu at a "
		"leaf without CFI; %llu without the step or finish program (by frame pointers "
		"from the switch program, else without a user stack)\n",
		S(WALKED), S(NO_CFI), S(READ), S(UNMAPPED), S(TRUNCATED), PROFILE_MAX_STACK_DEPTH,
		S(UNKNOWN), S(NOTED), S(COPIES_ONLY), S(NO_REGS), S(FULL), S(LEAF_FP), S(NO_PROG));
#undef S
}
