// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: hostile stacks and heaps for interp/node's frame walker
 * and namer, read through an in-memory image (interp/python's py_image).
 * The layout is Node 20's, read by node_detect_elf from the Node-like file
 * of tests/unit/node/nodefake.c, varied by the input's first byte towards
 * Node 18 (code inline) and 24 (no JSFunction::code, ScopeInfo positions
 * first). Whatever the bytes, reads stay within the image, walks end,
 * names are bounded, NUL-terminated UTF-8.
 *
 * Input: flags (1 byte), bp's offset in the stack (2), the stack's length
 * (2), the stack, then the heap. So that the fuzzer can make object graphs,
 * each aligned word whose low byte is 0xa5 becomes a tagged pointer into
 * the heap ((word >> 8) % heap length, 8-aligned, + 1) and 0xa7 an address
 * in the stack. Seeds: tests/fuzz/corpus/node_walk/ (a JS frame whose
 * function, SharedFunctionInfo, name and Script all read).
 */
#include <gelf.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "interp/node/nodeint.h"
#include "interp/python/python.h"
#include "tests/unit/node/nodefake.c"

#define HEAP_BASE 0x100000000ULL
#define STACK_BASE 0x7ffd00000000ULL
#define MAX_STACK 4096

static struct node_v8_layout layout20;
static bool have_layout;

static void init_layout(void)
{
	static uint8_t file[64 * 1024];
	struct node_interp ni;
	struct errmsg why;
	size_t len;
	Elf *elf;

	have_layout = true;
	len = nf_build(nf_node20, nf_node20_count, 1, "node.js/v20.20.2", file, sizeof(file));
	elf = len ? elf_memory((char *)file, len) : NULL;
	if (!elf || node_detect_elf(elf, 0, &ni, &why) != 1)
		abort();
	elf_end(elf);
	layout20 = ni.v8;
}

static void rewrite(uint8_t *p, size_t len, size_t heap_len, size_t stack_len)
{
	for (size_t i = 0; i + 8 <= len; i += 8) {
		uint64_t w;

		memcpy(&w, p + i, 8);
		if ((w & 0xff) == 0xa5 && heap_len >= 8)
			w = HEAP_BASE + (((w >> 8) % heap_len) & ~7ULL) + 1;
		else if ((w & 0xff) == 0xa7 && stack_len >= 8)
			w = STACK_BASE + (((w >> 8) % stack_len) & ~7ULL);
		else
			continue;
		memcpy(p + i, &w, 8);
	}
}

static void check_name(const char *s, size_t cap)
{
	size_t n = strnlen(s, cap);

	if (n == cap)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct node_stack st;
	static struct node_fn_info info;
	struct node_v8_layout l;
	struct py_image *img;
	struct py_mem pm;
	struct node_mem mem;
	struct node_regs r;
	size_t stack_len, heap_len;
	uint8_t *buf;

	if (!elf_file__ready() || size < 5)
		return 0;
	if (!have_layout)
		init_layout();
	l = layout20;
	if (data[0] & 1) {		/* Node 18: instructions inline after the Code header */
		l.code_inline = true;
		l.code_instruction_start = 128;
	}
	if (data[0] & 2)		/* Node 24: no JSFunction::code */
		l.src[NODE_V8_jsfunction_code] = NODE_SRC_MISSING;
	if (data[0] & 4)		/* V8 12+: positions before the locals */
		l.scope_info_first_vars = 5;
	if (data[0] & 8)		/* V8 12+: position tables in trusted byte arrays */
		l.type_trusted_byte_array = l.type_byte_array + 1;
	stack_len = (size_t)(data[3] | data[4] << 8) % (MAX_STACK + 1);
	if (stack_len > size - 5)
		stack_len = size - 5;
	heap_len = size - 5 - stack_len;
	buf = malloc(size - 5 + 1);
	if (!buf)
		return 0;
	memcpy(buf, data + 5, size - 5);
	rewrite(buf, stack_len, heap_len, stack_len);
	rewrite(buf + stack_len, heap_len, heap_len, stack_len);
	img = py_image__new();
	if (!img) {
		free(buf);
		return 0;
	}
	if (heap_len)
		py_image__add(img, HEAP_BASE, buf + stack_len, heap_len);
	if (stack_len)
		py_image__add(img, STACK_BASE, buf, stack_len);
	py_image__mem(img, &pm);
	mem.read = pm.read;
	mem.ctx = pm.ctx;

	r.sp = STACK_BASE;
	r.bp = STACK_BASE + (stack_len ? (size_t)(data[1] | data[2] << 8) % stack_len : 0);
	r.ip = 0x400000;
	r.stack = buf;
	r.stack_size = stack_len;
	if (node_walk(&l, &r, &mem, &st) == 0) {
		if (st.nr_frames > NODE_MAX_FRAMES)
			abort();
		for (unsigned int i = 0; i < st.nr_frames; i++) {
			const struct node_frame *f = &st.frames[i];

			if (f->fp < r.sp || f->fp >= r.sp + stack_len || (i && f->fp <= st.frames[i - 1].fp))
				abort();
			if (node_name_frame(&l, &mem, f, &info) == 0) {
				check_name(info.name, sizeof(info.name));
				check_name(info.file, sizeof(info.file));
				if (info.line < 0 || info.first_line < 0)
					abort();
			}
		}
	}
	/* The position decoder on raw bytes: any table ends. */
	if (heap_len) {
		int64_t pos;
		unsigned int inl;

		node_position_at(buf + stack_len, heap_len, (int64_t)(data[1] | data[2] << 8), &pos,
				 &inl);
	}
	py_image__free(img);
	free(buf);
	return 0;
}
