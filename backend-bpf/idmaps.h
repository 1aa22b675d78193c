/* SPDX-License-Identifier: GPL-2.0 */
/*
 * bcc's --cgroupmap and --mntnsmap: the program variants that read the
 * pinned maps (bpf/profile_idmap.bpf.c, bpf/offcpu_mntns.bpf.c, ...) stand
 * in for the counting or off-CPU program, on its maps, with the pinned maps
 * in place of their placeholders (bpf/idmap.bpf.h).
 */
#ifndef BPFBACKEND_IDMAPS_H
#define BPFBACKEND_IDMAPS_H

#include <stdbool.h>
#include <stddef.h>

#include "core/backend/backend.h"

struct bpf_object;
struct bpf_program;

/* The IDMAP_* filters cfg asks for; 0 for none. */
int idmaps__filters(const struct backend_config *cfg);

/* --mntnsmap's variant is CO-RE: whether this kernel has the BTF it needs; else why. */
bool idmaps__have_btf(char *why, size_t len);

/*
 * What the variants cannot do, before anything is loaded (in a pid
 * namespace, with --unwind dwarf, without BTF). Returns 0 or -errno with why.
 */
int idmaps__probe(const struct backend_config *cfg, bool in_pidns, char *why, size_t len);

/* Why the kernel refused a variant (what: "program", "off-CPU program"): the version it needs. */
void idmaps__refused(const struct backend_config *cfg, const char *what, int err, char *why,
		     size_t len);

/*
 * Before the variant obj is loaded: every map that main (loaded) has under
 * the same name is main's, the placeholders are the pinned maps of cfg,
 * and only the program for cfg's filters is loaded; it is returned in
 * *prog. Returns 0 or -errno.
 */
int idmaps__prepare(struct bpf_object *obj, const struct bpf_object *main,
		    const struct backend_config *cfg, struct bpf_program **prog);

#endif
