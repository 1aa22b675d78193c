/* SPDX-License-Identifier: GPL-2.0 */
/*
 * From one entry of the in-kernel count map to the core's sample. Pure: no
 * libbpf, so the tests can feed it the same stacks the perf backend sees.
 */
#ifndef BPFBACKEND_CONVERT_H
#define BPFBACKEND_CONVERT_H

#include <stdint.h>

#include "bpf/profile_maps.h"
#include "core/sample/sample.h"

/*
 * kstack/ustack: the stack map's values for the key's ids (zero-terminated
 * arrays of PROFILE_MAX_STACK_DEPTH), or NULL when the id is not a stack.
 * kbuf (MAX_STACK_DEPTH + 1 entries) receives the kernel ips.
 */
void bpf_convert__sample(const struct profile_key *key, uint64_t count, const uint64_t *kstack,
			 const uint64_t *ustack, uint64_t *kbuf, struct sample *out);

#endif
