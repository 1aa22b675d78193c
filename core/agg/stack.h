/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rules every stack follows, whichever backend took it, each written
 * once: where a stack ends, and which address names a frame.
 */
#ifndef CORE_AGG_STACK_H
#define CORE_AGG_STACK_H

#include <stdbool.h>
#include <stdint.h>

#include "core/proc/proctrack.h"

/*
 * Where a stack ends: before the first address no frame can have, 0 or a
 * perf context marker (>= (u64)-4095), except the unwinder's
 * STACK_TRUNCATED_IP, which is kept as the stack's last frame. The bpf
 * backend's stack map ends stacks with zeros; perf callchains can carry
 * zeros and markers where a walk went astray. Returns the frames kept.
 */
unsigned int stack__depth(const uint64_t *ips, unsigned int nr);

/*
 * Where a user stack of a known process ends: before the first caller's
 * return address that lies in no executable mapping of its address space
 * (a frame-pointer walk gone astray returns 0x1, or a data pointer). The
 * leaf is the interrupted address and always stays. Returns the frames kept.
 */
unsigned int stack__user_depth(const struct addr_space *as, const uint64_t *ips, unsigned int nr);

/* The fewest identical frames at the depth limit taken for a frame-pointer loop. */
#define STACK_LOOP_MIN 8

/*
 * A frame pointer that points at itself makes the kernel's walk repeat one
 * return address until the depth limit. When a stack of MAX_STACK_DEPTH
 * frames ends with STACK_LOOP_MIN or more identical ones, they are one frame
 * and the stack is marked cut (STACK_TRUNCATED_IP), in ips (which must hold
 * nr frames). Any other stack of MAX_STACK_DEPTH frames was cut at the limit
 * too (a deep recursion): its last frame becomes the marker. Returns the
 * frames kept.
 */
unsigned int stack__collapse_loop(uint64_t *ips, unsigned int nr);

/*
 * Off-CPU stacks start in the scheduler: the frames above the first one in
 * [start, end) (__schedule) belong to the tracing path, which differs with
 * the kernel and with what else is attached. Returns how many frames to
 * drop from the leaf: 0 if none is in the range.
 */
unsigned int stack__frames_above(const uint64_t *ips, unsigned int nr, uint64_t start,
				 uint64_t end);

/*
 * The address to look up for frame `index` (0 is the leaf): every caller's
 * frame holds a return address, which may already belong to the next line
 * or function, so ip - 1.
 */
static inline uint64_t stack__lookup_addr(uint64_t ip, unsigned int index)
{
	return index ? ip - 1 : ip;
}

#endif
