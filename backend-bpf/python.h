/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Python frames walked in the kernel (bpf/python.bpf.c): walks loaded per
 * layout, the tables of Python processes and threads, and each count's
 * Python stack read back at its drain.
 */
#ifndef BACKEND_BPF_PYTHON_H
#define BACKEND_BPF_PYTHON_H

#include <stdint.h>

#include "bpf/profile.skel.h"
#include "bpf/profile_maps.h"
#include "bpf/python_maps.h"
#include "core/agg/sample.h"
#include "core/lib/log.h"
#include "core/run/backend.h"

struct bpf_python;

/* On the loaded counting program's maps; NULL when out of memory. */
struct bpf_python *bpf_python__new(struct profile_bpf *counting);
void bpf_python__free(struct bpf_python *bp);
/*
 * The Python processes now (backend_ops.set_interp): each layout's walk
 * loaded when first needed (a refusal named in err, once), the tables set
 * to procs and their threads. 0 or -errno.
 */
int bpf_python__set(struct bpf_python *bp, const struct interp_proc *procs, size_t nr,
		    struct errmsg *err);
/* The Python part of s from key (drained from generation gen): frames, or why none. */
void bpf_python__sample(struct bpf_python *bp, unsigned int gen, const struct profile_key *key,
			struct sample *s);
/* The drain of generation gen is over: its stacks go (the frames given are no longer valid). */
int bpf_python__clear(struct bpf_python *bp, unsigned int gen);
/* A drain without clearing (the last ones) is over: the frames given are no longer valid. */
void bpf_python__end_drain(struct bpf_python *bp);
/* Whether any Python process is walked now. */
bool bpf_python__walking(const struct bpf_python *bp);
/* Stacks whose pieces were not all there (their map was full). */
uint64_t bpf_python__lost(const struct bpf_python *bp);

#endif
