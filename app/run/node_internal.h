/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What app/run/node.c (the pipeline's hooks, the run), node_procs.c (the
 * Node processes found) and node_model.c (the names the model asks for)
 * share. Only app/run/node*.c include it.
 */
#ifndef APP_RUN_NODE_INTERNAL_H
#define APP_RUN_NODE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "app/run/node.h"
#include "core/lib/hashmap.h"
#include "core/model/resolve.h"
#include "interp/node/node.h"
#include "interp/python/python.h"

#define NODE_TAG 0x4eULL
#define ADDR_MASK 0xffffffffffffULL
/* The pcs of JavaScript frames a process keeps (beyond: its frames stay unplaced), names cached. */
#define MAX_PCS (1u << 16)
#define MAX_NAMES (1u << 16)
/* Where the frame-pointer chain from the sample's bp meets no JavaScript: starts tried above. */
#define MAX_RESTARTS 4
#define MAX_RESTART_DEPTH 64
/* Files named in -v as refused, at most. */
#define MAX_REFUSED_NAMED 16

/* A mapped file, by identity: Node or not, decided once. */
struct node_file {
	uint64_t dev, ino;
	int res;			/* node_detect: 1, 0, -ENOTSUP, -errno */
	struct node_interp ni;
	char *path;
	/* Its Builtins_* code (the interpreter's trampolines...), as file offsets; 0, 0: none. */
	uint64_t builtins_off, builtins_end;
};

/* A name read while the process lived, by the frame's words. */
struct node_name {
	struct interp_frame key;
	char *name, *file;
	uint32_t line, first_line;
};

struct node_proc {
	pid_t pid;
	unsigned int as_id;
	const struct node_file *file;
	uint64_t builtins_start, builtins_end;	/* its file's Builtins_* code, mapped here */
	struct py_proc_mem mem;
	struct py_snap snap;
	struct node_mem heap;		/* through snap */
	struct hashmap pcs;		/* return addresses of JavaScript frames: the set */
	struct hashmap names;		/* struct interp_frame * -> struct node_name * */
	bool gone;
};

struct seen {
	unsigned int generation;
	struct node_proc *p;
};

struct node_stats {
	size_t processes, refused, no_handle, handed_over;
	uint64_t walks, no_copy, off_cpu, with_js, restarted, js_frames, truncated, faults;
	uint64_t named, not_cached, unnamed, stale, ended, pcs_full, early_failed;
};

struct run_node {
	struct pipeline_interp next;	/* Python's, or none */
	struct interp_ops next_ops;
	struct proctrack *pt;
	bool raw, full_paths;
	struct hashmap images;		/* as->id + 1 -> struct seen * */
	struct hashmap files;		/* struct node_file * (dev, ino) -> itself */
	size_t nr_refused_named;
	struct node_stats st;
	struct node_stack stack;
	struct node_fn_info fi;
	struct node_name tmp;		/* a name not cached: fi's */
	char short_file[NODE_PATH_MAX];
	unsigned char *joined;		/* a BPF sample's pieces joined */
	size_t joined_cap;
};

uint64_t node_id_hash(const void *k);
bool node_id_equal(const void *a, const void *b);
uint64_t node_file_hash(const void *k);
bool node_file_equal(const void *a, const void *b);

#define IMAGE_KEY(as) ((void *)(uintptr_t)((as)->id + 1ULL))

static inline struct node_proc *node_find(const struct run_node *rn, const struct addr_space *as)
{
	struct seen *s = as ? hashmap__find(&rn->images, IMAGE_KEY(as)) : NULL;

	return s ? s->p : NULL;
}

static inline uint32_t node_fold(uint64_t ident)
{
	uint32_t f = (uint32_t)(ident ^ (ident >> 32));

	return f ? f : 1;
}

/* node_procs.c: image as looked at (its first time, or mappings changed); a process freed. */
void node_look(struct run_node *rn, const struct addr_space *as);
void node_proc_free(struct node_proc *p);

/* node_model.c: f's name (cached in p), and the model's hooks for run_node__new. */
int node_lookup(struct run_node *rn, struct node_proc *p, const struct addr_space *as,
		const struct interp_frame *f, const struct node_name **out);
void node_model_ops(struct run_node *rn, bool raw_frames, struct interp_ops *ops);

#endif
