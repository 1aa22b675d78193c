// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/load.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "backend-bpf/idmaps.h"
#include "backend-bpf/interruptible.h"
#include "backend-bpf/native.h"
#include "backend-bpf/python.h"
#include "backend-bpf/shared_maps.h"
#include "compat/features.h"
#include "core/lib/log.h"

/*
 * libbpf's own messages: a refused program's verifier log is a warning to
 * libbpf, but the probe's one-line reason is what -v shows; the log is for
 * -vv, libbpf's chatter for -vvv.
 */
static int libbpf_log(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int need = level == LIBBPF_WARN ? 2 : 3;

	if (log_verbosity() < need)
		return 0;
	fputs("profile: libbpf: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

/* The overflow stack map of a generation: only collisions of the first map go there. */
unsigned int bpf_load__overflow_size(unsigned int stack)
{
	return stack >= 8 ? stack / 8 : 1;
}

/*
 * With dwarf, only the stack-copy program runs: it takes its stack ids in
 * generation 0's maps, never cleared, and generation 1's stay minimal, as
 * do the count maps it never writes (preallocated at full size, they took
 * about a tenth of a dwarf run's start-up CPU).
 */
static void set_sizes(struct profile_bpf *skel, unsigned int hash, unsigned int stack,
		      unsigned int nr_ids, bool dwarf, unsigned int members, bool python)
{
	unsigned int more = dwarf ? 1 : stack, python_stacks;

	bpf_map__set_max_entries(skel->maps.counts0, dwarf ? 1 : hash);
	bpf_map__set_max_entries(skel->maps.counts1, dwarf ? 1 : hash);
	bpf_map__set_max_entries(skel->maps.stacks, stack);
	bpf_map__set_max_entries(skel->maps.stacks1, more);
	bpf_map__set_max_entries(skel->maps.overflow0, bpf_load__overflow_size(stack));
	bpf_map__set_max_entries(skel->maps.overflow1, bpf_load__overflow_size(more));
	bpf_map__set_max_entries(skel->maps.filter_ids, nr_ids ? nr_ids : 1);
	bpf_map__set_max_entries(skel->maps.cg_members, members ? members : 1);
	/* The Python walk's tables (bpf/python.bpf.h): preallocated, so as small as unused. */
	bpf_map__set_max_entries(skel->maps.py_procs, python ? PY_MAX_PROCS : 1);
	bpf_map__set_max_entries(skel->maps.py_threads, python ? PY_MAX_THREADS_IN_KERNEL : 1);
	/* The stack copies send their Python frames in the records: no stacks stored. */
	python_stacks = python && !dwarf ? PY_MAX_PIECES_STORED : 1;
	bpf_map__set_max_entries(skel->maps.py_stacks0, python_stacks);
	bpf_map__set_max_entries(skel->maps.py_stacks1, python_stacks);
	bpf_map__set_max_entries(skel->maps.py_unknown, python ? PY_MAX_UNKNOWN : 1);
}

/* Open and load the program with these map sizes. Returns the skeleton or NULL, errno set. */
struct profile_bpf *bpf_load__program(unsigned int hash, unsigned int stack, unsigned int nr_ids,
				       bool dwarf, unsigned int members, bool python,
				       bool maps_only)
{
	struct profile_bpf *skel;
	int err;

	libbpf_set_print(libbpf_log);
	skel = profile_bpf__open();
	if (!skel)
		return NULL;
	set_sizes(skel, hash, stack, nr_ids, dwarf, members, python);
	/* A variant usually runs on the maps: the program is verified only if none does. */
	if (maps_only)
		err = bpf_program__set_autoload(skel->progs.profile_sample, false);
	else
		err = 0;
	if (!err)
		err = bpf_interruptible__load(skel->skeleton);
	if (err) {
		profile_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/*
 * An opened object's programs loaded on counting's maps (settings, filter,
 * stack ids, statistics and counts). Returns 0 or -errno.
 */
static int load_on(struct bpf_object *obj, struct bpf_object_skeleton *skeleton,
		   const struct profile_bpf *counting)
{
	int err = shared_maps__reuse(obj, counting->obj);

	return err ? err : bpf_interruptible__load(skeleton);
}

struct profile_bpf *bpf_load__counting_program(struct profile_bpf *maps)
{
	struct profile_bpf *skel = profile_bpf__open();
	int err = skel ? load_on(skel->obj, skel->skeleton, maps) : -errno;

	if (err) {
		profile_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* The counting program for a profiler in a pid namespace, on the loaded one's maps. */
struct profile_pidns_bpf *bpf_load__pidns_program(struct profile_bpf *counting)
{
	struct profile_pidns_bpf *skel = profile_pidns_bpf__open();
	int err = skel ? load_on(skel->obj, skel->skeleton, counting) : -errno;

	if (err) {
		profile_pidns_bpf__destroy(skel);
		errno = -err;
		return NULL;
	}
	return skel;
}

/* One of the fpwalk variants, opened, sized and loaded on counting's maps. */
static int load_fpwalk(struct bpf_object *obj, struct bpf_object_skeleton *skeleton,
		       const struct profile_bpf *counting, unsigned int entries)
{
	const char *tables[] = { "ustacks0", "ustacks1" };
	int err;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, tables[i]),
					       entries);
		if (err)
			return err;
	}
	return load_on(obj, skeleton, counting);
}

int bpf_load__fpwalk_program(struct profile_bpf *counting, unsigned int entries,
			     struct profile_fpwalk_regs_bpf **regs, struct profile_fpwalk_bpf **plain)
{
	int err;

	*regs = profile_fpwalk_regs_bpf__open();
	if (!*regs)
		return -errno;
	err = load_fpwalk((*regs)->obj, (*regs)->skeleton, counting, entries);
	if (!err)
		return 0;
	pr_debug("bpf: the user walk of kernel-mode samples was refused (%s): user-mode "
		 "samples only\n", strerror(-err));
	profile_fpwalk_regs_bpf__destroy(*regs);
	*regs = NULL;
	*plain = profile_fpwalk_bpf__open();
	if (!*plain)
		return -errno;
	return load_fpwalk((*plain)->obj, (*plain)->skeleton, counting, entries);
}

int bpf_load__size_native_tables(struct bpf_object *obj, const struct native_store_opts *store_opts)
{
	static const char *const mapped[] = { "native_rows", "native_rules" };
	struct native_map_sizes ns;
	int err;

	/* The store's sizes, from the same options it is made with. */
	native_store__map_sizes(store_opts, &ns);
	const struct {
		const char *name;
		unsigned int size;
	} sizes[] = {
		{ "native_procs", ns.procs }, { "native_pages", ns.pages },
		{ "native_index", ns.index }, { "native_rows", ns.rows },
		{ "native_rules", ns.rules }, { "native_unknown", ns.unknown },
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, sizes[i].name),
					       sizes[i].size);
		if (err)
			return err;
	}
	/*
	 * The rows and rules mapped into the store (5.5+): a table's 40,000
	 * rows written in place, not a syscall's copy each (10 ms of a new
	 * process's read, while its samples go by frame pointers).
	 */
	if (kernel_feature__state(FEAT_BPF_MMAPABLE_ARRAY) == FEATURE_SUPPORTED)
		for (size_t i = 0; i < sizeof(mapped) / sizeof(mapped[0]); i++) {
			struct bpf_map *m = bpf_object__find_map_by_name(obj, mapped[i]);

			err = bpf_map__set_map_flags(m, bpf_map__map_flags(m) | BPF_F_MMAPABLE);
			if (err)
				return err;
		}
	return 0;
}

int bpf_load__native_progs(struct bpf_object *obj)
{
	__u32 slot[] = { NATIVE_PROG_STEP, NATIVE_PROG_FINISH };
	const char *progs[] = { "native_step", "native_finish" };
	int fd = bpf_map__fd(bpf_object__find_map_by_name(obj, "native_progs"));

	for (int i = 0; i < 2; i++) {
		int prog = bpf_program__fd(bpf_object__find_program_by_name(obj, progs[i]));

		if (bpf_map_update_elem(fd, &slot[i], &prog, BPF_ANY))
			return -errno;
	}
	return 0;
}

/* One of the native unwinder's objects, sized and loaded on counting's maps, native_progs filled. */
static int load_native(struct bpf_object *obj, struct bpf_object_skeleton *skeleton,
		       const struct profile_bpf *counting, unsigned int slots,
		       const struct native_store_opts *store_opts)
{
	static const char *const slotted[] = { "ustacks0", "ustacks1", "uclaims0", "uclaims1" };
	int err = bpf_load__size_native_tables(obj, store_opts);

	if (err)
		return err;
	for (size_t i = 0; i < sizeof(slotted) / sizeof(slotted[0]); i++) {
		err = bpf_map__set_max_entries(bpf_object__find_map_by_name(obj, slotted[i]), slots);
		if (err)
			return err;
	}
	err = load_on(obj, skeleton, counting);
	return err ? err : bpf_load__native_progs(obj);
}

int bpf_load__native_program(struct profile_bpf *counting, unsigned int slots,
			     const struct native_store_opts *store_opts, bool regs_wanted,
			     struct profile_native_regs_bpf **regs, struct profile_native_bpf **plain)
{
	int err;

	*regs = NULL;
	if (!regs_wanted)
		goto plain;
	*regs = profile_native_regs_bpf__open();
	if (!*regs)
		return -errno;
	err = load_native((*regs)->obj, (*regs)->skeleton, counting, slots, store_opts);
	if (!err)
		return 0;
	pr_debug("bpf: the native unwinder of kernel-mode samples was refused (%s): user-mode "
		 "samples only\n", strerror(-err));
	profile_native_regs_bpf__destroy(*regs);
	*regs = NULL;
plain:
	*plain = profile_native_bpf__open();
	if (!*plain)
		return -errno;
	return load_native((*plain)->obj, (*plain)->skeleton, counting, slots, store_opts);
}

/*
 * bcc's pinned maps: the counting program's variant that reads them, on the
 * loaded one's maps (--mntnsmap's is CO-RE). Returns 0 or -errno; the
 * caller destroys what was opened.
 */
int bpf_load__idmap_program(struct profile_bpf *counting, const struct backend_config *c,
			    struct profile_idmap_bpf **idmap, struct profile_mntns_bpf **mntns,
			    struct bpf_program **prog)
{
	int err;

	if (c->mntnsmap_fd) {
		*mntns = profile_mntns_bpf__open();
		if (!*mntns)
			return -errno;
		err = idmaps__prepare((*mntns)->obj, counting->obj, c, prog);
		return err ? err : bpf_interruptible__load((*mntns)->skeleton);
	}
	*idmap = profile_idmap_bpf__open();
	if (!*idmap)
		return -errno;
	err = idmaps__prepare((*idmap)->obj, counting->obj, c, prog);
	return err ? err : bpf_interruptible__load((*idmap)->skeleton);
}

