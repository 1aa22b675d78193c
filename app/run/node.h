/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Node.js frames in a run (issue 48): which processes run Node (a mapped
 * executable that interp/node's node_detect accepts, decided once per
 * file), their V8 frames walked over each sample's stack copy
 * (node_walk, at the pipeline's interpreter hook) and named from the
 * process itself when the stack is resolved (node_name_frame), placed
 * among the native frames by core/model/mixed.c. Put in front of the
 * Python hooks: an image that is not Node's goes to them.
 */
#ifndef APP_RUN_NODE_H
#define APP_RUN_NODE_H

#include <stdbool.h>

#include "core/agg/pipeline.h"

struct resolver;
struct run_node;

/*
 * Hooks into pl and res in front of what they have (Python's): raw keeps
 * every native frame of V8 (--node raw), full_paths names files in full.
 * NULL when out of memory.
 */
struct run_node *run_node__new(struct pipeline *pl, struct resolver *res, bool raw,
			       bool full_paths);
void run_node__free(struct run_node *rn);
/* Image as is freed: its process goes (its frames named already keep their names). */
void run_node__ended(struct run_node *rn, const struct addr_space *as);
/* -v: the Node processes found, their versions, frames walked and named. */
void run_node__report(const struct run_node *rn, const struct resolver *res);

#endif
