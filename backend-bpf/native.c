// SPDX-License-Identifier: GPL-2.0
/*
 * The counting program that unwinds user stacks by the native tables
 * (bpf/native.bpf.h), on the counting program's maps: its stored-stack
 * tables are ARRAYs whose claimed slots the drain empties
 * (stack_cache__set_walked_claims). Where the kernel refuses it, -v says
 * why (-vv shows the verifier's log) and the run goes on without it.
 */
#include "backend-bpf/bpfbackend_internal.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>

#include "backend-bpf/countmap.h"
#include "backend-bpf/native.h"

/* The largest power of two at most n, and 1 at least. */
static unsigned int pow2_floor(unsigned int n)
{
	unsigned int p = 1;

	while (p <= n / 2)
		p *= 2;
	return p;
}

void bpf_native__open(struct backend *b)
{
	/* A generation's stacks: a quarter of the stack map's, as the frame-pointer walk's. */
	unsigned int slots = pow2_floor(b->stack_size / 4);
	struct profile_native_bpf *skel;
	int err = bpf_load__native_program(b->skel, slots, &skel);

	if (err) {
		pr_info("bpf: the kernel refused the program that unwinds user stacks by the "
			"binaries' tables (%s; -vv shows why): frame pointers\n", strerror(-err));
		profile_native_bpf__destroy(skel);
		return;
	}
	b->native = skel;
	b->native_prog_fd = bpf_program__fd(skel->progs.profile_native);
	b->config.native_slots = slots;
	stack_cache__set_walked_claims(&b->stacks[0], bpf_map__fd(skel->maps.ustacks0),
				       bpf_map__fd(skel->maps.uclaims0));
	stack_cache__set_walked_claims(&b->stacks[1], bpf_map__fd(skel->maps.ustacks1),
				       bpf_map__fd(skel->maps.uclaims1));
	pr_info("bpf: user stacks unwound by the program from the binaries' tables (%u stacks a "
		"generation); kernel-mode samples, 32-bit code and processes not yet loaded by "
		"frame pointers\n", slots);
}

void bpf_native__report(struct backend *b)
{
	struct native_stats s = {
		.walked = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_WALKED),
		.kernel_mode = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_KERNEL_MODE),
		.compat = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_COMPAT),
		.unknown = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_UNKNOWN),
		.noted = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NOTED),
		.full = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_FULL),
		.no_prog = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NO_PROG),
		.no_cfi = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NO_CFI),
		.read = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_READ),
		.unmapped = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_UNMAPPED),
		.truncated = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_TRUNCATED),
	};

	pr_info("bpf: native unwinding: %llu stacks walked (%llu ended without CFI, %llu at a "
		"failed read, %llu at code in no known mapping, %llu cut at %d frames); by frame "
		"pointers instead: %llu kernel-mode, %llu 32-bit, %llu of processes not loaded "
		"(%llu noted), %llu for want of room, %llu without the step program\n",
		(unsigned long long)s.walked, (unsigned long long)s.no_cfi,
		(unsigned long long)s.read, (unsigned long long)s.unmapped,
		(unsigned long long)s.truncated, PROFILE_MAX_STACK_DEPTH,
		(unsigned long long)s.kernel_mode, (unsigned long long)s.compat,
		(unsigned long long)s.unknown, (unsigned long long)s.noted,
		(unsigned long long)s.full, (unsigned long long)s.no_prog);
}

int bpf_native__fds(const struct backend *b, struct native_maps_fds *out)
{
	if (!b->native)
		return -ENOENT;
	out->procs = bpf_map__fd(b->native->maps.native_procs);
	out->pages = bpf_map__fd(b->native->maps.native_pages);
	out->index = bpf_map__fd(b->native->maps.native_index);
	out->rows = bpf_map__fd(b->native->maps.native_rows);
	out->rules = bpf_map__fd(b->native->maps.native_rules);
	out->unknown = bpf_map__fd(b->native->maps.native_unknown);
	out->stats = b->stats_fd;
	return 0;
}

void (*bpf_native__test_add)(const struct native_maps_fds *fds, int pid);

bool bpf_native__noticed(struct backend *b)
{
	return b->native && bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NOTED) != b->native_noted;
}

void bpf_native__take_unknown(struct backend *b)
{
	struct native_maps_fds fds;
	__u32 key = 0, next;
	uint64_t noted = bpf_backend__read_stat(b, PROFILE_STAT_NATIVE_NOTED);

	if (noted == b->native_noted || bpf_native__fds(b, &fds))
		return;
	b->native_noted = noted;
	/* Deleted as read: a process noted again after this is read again. */
	while (!bpf_map_get_next_key(fds.unknown, &key, &next)) {
		bpf_map_delete_elem(fds.unknown, &next);
		if (bpf_native__test_add)
			bpf_native__test_add(&fds, (int)next);
		key = next;
	}
}

void bpf_native__add_targets(struct backend *b)
{
	struct native_maps_fds fds;

	if (bpf_native__fds(b, &fds) || !bpf_native__test_add)
		return;
	for (int i = 0; i < b->cfg->nr_pids; i++)
		bpf_native__test_add(&fds, b->cfg->pids[i]);
}
