/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Small ELF files that look like Node binaries to interp/node, built in
 * memory: the constants of a real Node (v8dbg_*, V8's Version) in .dynsym
 * and .data, node_module_register, a version string in .rodata. Section
 * headers come first and the data last, so that every prefix of a file
 * is a file whose sections run past its end (the truncation tests).
 */
#ifndef TESTS_UNIT_NODE_NODEFAKE_H
#define TESTS_UNIT_NODE_NODEFAKE_H

#include <stddef.h>
#include <stdint.h>

enum nf_where {
	NF_DATA,	/* initialized, in .data */
	NF_BSS,		/* in .bss: reads 0 */
	NF_NOWHERE,	/* an address outside its section */
};

struct nf_sym {
	const char *name;
	int32_t value;
	uint8_t where;		/* enum nf_where */
	uint64_t size;		/* 0: 4 */
};

/* The constants of Node 20.20.2 (V8 11.3.244) that the layout reads, as its binary has them. */
extern const struct nf_sym nf_node20[];
extern const size_t nf_node20_count;

/*
 * Writes the file into out (cap bytes): the symbols, node_module_register
 * if with_register, version (e.g. "node.js/v20.20.2", or NULL) in .rodata. Returns
 * its size, 0 if it does not fit.
 */
size_t nf_build(const struct nf_sym *syms, size_t n, int with_register, const char *version,
		uint8_t *out, size_t cap);

/* nf_node20 with name's value replaced (where NF_* and size too), or dropped if drop. */
size_t nf_node20_but(const char *name, int32_t value, uint8_t where, uint64_t size, int drop,
		     struct nf_sym *out, size_t cap);

#endif
