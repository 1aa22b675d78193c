/* SPDX-License-Identifier: GPL-2.0 */
/* What the files of interp/node share and nobody else calls. */
#ifndef INTERP_NODE_NODEINT_H
#define INTERP_NODE_NODEINT_H

#include "interp/node/node.h"

/*
 * The int32 constants an ELF file defines under the names a Node binary
 * carries (every v8dbg_*, V8's Version::*_), read from .dynsym and, when
 * asked, .symtab. Names point into the file's string tables: valid while
 * its Elf is open.
 */
struct node_consts {
	struct node_const {
		const char *name;
		int32_t value;
		uint32_t order;		/* .dynsym before .symtab, first definition wins */
	} *v;
	size_t nr, cap;
	bool symtab_read;
	bool has_register;	/* node_module_register: the addon ABI only Node exports */
};

/* More than any Node has (531 in Node 20): a file with more is not believed past them. */
#define NODE_MAX_CONSTS 4096

/* Reads .dynsym (symtab: also .symtab) into c: 0, -ENOMEM. Call node_consts__free after. */
int node_consts__read(Elf *elf, struct node_consts *c, bool symtab);
void node_consts__free(struct node_consts *c);
/* The value of name: true and *v, or false. */
bool node_consts__get(const struct node_consts *c, const char *name, int32_t *v);

/* Node's version from the strings of .rodata that name it: 0, or -ENOENT (none, or they disagree). */
int node_elf__rodata_version(Elf *elf, int *major, int *minor, int *patch);
/* Whether DT_SONAME starts with "libnode.so". */
bool node_elf__is_libnode(Elf *elf);

/* Fills l from c for V8 major.minor.build: 0, or -ENOTSUP with why (the fields missing). */
int node_v8_layout__fill(struct node_v8_layout *l, const struct node_consts *c, int major,
			 int minor, int build, struct errmsg *why);

#endif
