// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as a Node binary, read by interp/node
 * as a mapped file is: symbol tables, the sections their constants point
 * into (.data, .bss), .rodata's version strings, the soname; then the
 * layout filled, derived and checked. Whatever the file says, reads stay
 * within it, and a layout accepted has every field a walker needs, within
 * bounds, with 64-bit V8's tagging.
 *
 * Seeds: Node-like files of tests/unit/node/nodefake.c (NODE_FUZZ_SEEDS=DIR
 * CK_RUN_SUITE=node_layout build/tests/check_profile).
 */
#include <errno.h>
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "interp/node/node.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *image, text[4096];
	struct node_interp ni;
	struct errmsg why;
	Elf *elf;
	int ret;

	if (!elf_file__ready() || !size)
		return 0;
	/* libelf may write to a memory image (elf_memory's contract): a copy of its own. */
	image = malloc(size);
	if (!image)
		return 0;
	memcpy(image, data, size);
	elf = elf_memory(image, size);
	if (!elf) {
		free(image);
		return 0;
	}
	why.text[0] = '\0';
	ret = node_detect_elf(elf, 0x7f0000000000ULL, &ni, &why);
	if (strnlen(why.text, sizeof(why.text)) == sizeof(why.text))
		abort();
	if (ret == 1) {
		for (unsigned int f = 0; f < NODE_V8_NR_FIELDS; f++)
			if (node_v8_field__required(f) && ni.v8.src[f] == 0)
				abort();
		if (ni.v8.tagged_size != 8 || ni.v8.heap_object_tag != 1 ||
		    ni.v8.fp_function % 8 || ni.v8.script_name < 0 || ni.v8.script_name >= 4096)
			abort();
		node_v8_layout__not_const(&ni.v8, text, sizeof(text));
		node_v8_layout__not_const(&ni.v8, text, 7);
	} else if (ret == -ENOTSUP && !why.text[0]) {
		abort();
	}
	elf_end(elf);
	free(image);
	return 0;
}
