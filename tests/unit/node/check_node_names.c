// SPDX-License-Identifier: GPL-2.0
/*
 * interp/node's walker and namer on heaps built here (interp/python's
 * py_image), with Node 20's layout as node_detect reads it from the
 * Node-like file of nodefake.c: every kind of string and what is wrong
 * with them, source position tables as V8 encodes them, lines from
 * line_ends and from the source, a frame named only while its
 * SharedFunctionInfo is what the walk saw, chains that loop or run long.
 */
#include <check.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/sym/debugfile.h"
#include "interp/node/nodeint.h"
#include "interp/python/python.h"
#include "tests/unit/node/nodefake.h"

#define HEAP 0x100000000ULL
#define STACK 0x7ffd00000000ULL
#define HEAP_SIZE (64 * 1024)

static struct node_v8_layout L;
static uint8_t heap[HEAP_SIZE];
static size_t heap_used;
static uint64_t maps[4096];

static void load_layout(void)
{
	static uint8_t file[64 * 1024];
	struct node_interp ni;
	struct errmsg why;
	size_t len;
	Elf *elf;

	ck_assert(elf_file__ready());
	len = nf_build(nf_node20, nf_node20_count, 1, "node.js/v20.20.2", file, sizeof(file));
	elf = elf_memory((char *)file, len);
	ck_assert_ptr_nonnull(elf);
	ck_assert_int_eq(node_detect_elf(elf, 0, &ni, &why), 1);
	elf_end(elf);
	L = ni.v8;
	memset(heap, 0, sizeof(heap));
	memset(maps, 0, sizeof(maps));
	heap_used = 8;
}

/* A new object of size bytes: its tagged address. */
static uint64_t alloc(size_t size)
{
	uint64_t at = heap_used;

	heap_used += (size + 7) & ~(size_t)7;
	ck_assert_uint_le(heap_used, HEAP_SIZE);
	return HEAP + at + 1;
}

static void put64(uint64_t tagged_field, uint64_t v)
{
	memcpy(heap + (tagged_field - HEAP), &v, 8);
}

static void put32(uint64_t a, int32_t v)
{
	memcpy(heap + (a - HEAP), &v, 4);
}

static uint64_t smi(int64_t v)
{
	return (uint64_t)v << 32;
}

static uint64_t map_of(int type)
{
	if (!maps[type]) {
		maps[type] = alloc(16);
		memcpy(heap + (node_field(&L, maps[type], L.map_instance_type) - HEAP),
		       &(uint16_t){ (uint16_t)type }, 2);
	}
	return maps[type];
}

static uint64_t object(int type, size_t size)
{
	uint64_t o = alloc(size);

	put64(node_field(&L, o, L.heap_object_map), map_of(type));
	return o;
}

static uint64_t seq1(const char *s, size_t n)
{
	uint64_t o = object(L.seq_string_tag | L.one_byte_string_tag, 16 + n);

	put32(node_field(&L, o, L.string_length), (int32_t)n);
	memcpy(heap + (node_field(&L, o, L.seq_one_byte_chars) - HEAP), s, n);
	return o;
}

static uint64_t str(const char *s)
{
	return seq1(s, strlen(s));
}

static uint64_t seq2(const uint16_t *u, size_t n)
{
	uint64_t o = object(L.seq_string_tag | L.two_byte_string_tag, 16 + 2 * n);

	put32(node_field(&L, o, L.string_length), (int32_t)n);
	memcpy(heap + (node_field(&L, o, L.seq_two_byte_chars) - HEAP), u, 2 * n);
	return o;
}

static uint64_t cons(uint64_t a, uint64_t b, int32_t len)
{
	uint64_t o = object(L.cons_string_tag | L.one_byte_string_tag, 32);

	put32(node_field(&L, o, L.string_length), len);
	put64(node_field(&L, o, L.cons_first), a);
	put64(node_field(&L, o, L.cons_second), b);
	return o;
}

static void image_mem(struct py_image **img, struct node_mem *mem, const void *stack, size_t n)
{
	struct py_mem pm;

	*img = py_image__new();
	ck_assert_int_eq(py_image__add(*img, HEAP, heap, heap_used), 0);
	if (n)
		ck_assert_int_eq(py_image__add(*img, STACK, stack, n), 0);
	py_image__mem(*img, &pm);
	mem->read = pm.read;
	mem->ctx = pm.ctx;
}

static int utf8_of(uint64_t s, char *out, size_t cap)
{
	struct py_image *img;
	struct node_mem mem;
	int err;

	image_mem(&img, &mem, NULL, 0);
	err = node_str_utf8(&L, &mem, s, out, cap);
	py_image__free(img);
	return err;
}

START_TEST(strings_of_every_kind)
{
	static const uint16_t two[] = { 'h', 0xe9, 0xd83d, 0xde00, '!', 0xd800, 'x', 0 };
	char out[NODE_NAME_MAX];
	uint64_t s, thin, sliced, loop;
	char long_name[3000];

	load_layout();
	/* Latin-1 one-byte strings become UTF-8. */
	ck_assert_int_eq(utf8_of(seq1("caf\xe9", 4), out, sizeof(out)), 0);
	ck_assert_str_eq(out, "caf\xc3\xa9");
	/* UTF-16: a pair is one character; a lone surrogate and NUL are U+FFFD. */
	ck_assert_int_eq(utf8_of(seq2(two, 8), out, sizeof(out)), 0);
	ck_assert_str_eq(out, "h\xc3\xa9\xf0\x9f\x98\x80!\xef\xbf\xbdx\xef\xbf\xbd");
	/* Cons of a thin string and a slice. */
	thin = object(L.thin_string_tag | L.one_byte_string_tag, 24);
	put32(node_field(&L, thin, L.string_length), 7);
	put64(node_field(&L, thin, L.thin_actual), str("Module."));
	sliced = object(L.sliced_string_tag | L.one_byte_string_tag, 32);
	put32(node_field(&L, sliced, L.string_length), 8);
	put64(node_field(&L, sliced, L.sliced_parent), str("xx_compileyy"));
	put64(node_field(&L, sliced, L.sliced_offset), smi(2));
	s = cons(thin, sliced, 15);
	ck_assert_int_eq(utf8_of(s, out, sizeof(out)), 0);
	ck_assert_str_eq(out, "Module._compile");
	/* A cons whose halves' lengths disagree with its own, a cons that contains itself. */
	ck_assert_int_eq(utf8_of(cons(str("ab"), str("cd"), 9), out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(utf8_of(cons(str("abcdef"), str("cd"), 3), out, sizeof(out)), -EINVAL);
	loop = cons(0, 0, 4);
	put64(node_field(&L, loop, L.cons_first), loop);
	put64(node_field(&L, loop, L.cons_second), loop);
	ck_assert_int_eq(utf8_of(loop, out, sizeof(out)), -ELOOP);
	/* A slice past its parent's end; an external string; not a string. */
	put64(node_field(&L, sliced, L.sliced_offset), smi(6));
	ck_assert_int_eq(utf8_of(sliced, out, sizeof(out)), -EINVAL);
	s = object(L.external_string_tag | L.one_byte_string_tag, 32);
	put32(node_field(&L, s, L.string_length), 4);
	ck_assert_int_eq(utf8_of(s, out, sizeof(out)), -ENOTSUP);
	ck_assert_int_eq(utf8_of(object(L.type_script, 64), out, sizeof(out)), -EINVAL);
	ck_assert_int_eq(utf8_of(HEAP + 0x1000000 + 1, out, sizeof(out)), -EFAULT);
	ck_assert_int_eq(utf8_of(smi(3), out, sizeof(out)), -EINVAL);
	/* Too long: cut at a character boundary, still NUL-terminated. */
	for (size_t i = 0; i < sizeof(long_name); i++)
		long_name[i] = (char)0xe9;
	ck_assert_int_eq(utf8_of(seq1(long_name, sizeof(long_name)), out, sizeof(out)), 0);
	ck_assert_uint_lt(strlen(out), sizeof(out));
	ck_assert_uint_eq(strlen(out) % 2, 0);
}
END_TEST

/* V8's encoding: zigzag base-128 varints, code delta (negative: not a statement), position delta. */
static size_t put_varint(uint8_t *p, int64_t v)
{
	uint64_t z = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
	size_t n = 0;

	do {
		p[n] = (uint8_t)(z & 0x7f);
		z >>= 7;
		if (z)
			p[n] |= 0x80;
		n++;
	} while (z);
	return n;
}

static size_t table(uint8_t *p, const int64_t (*e)[2], size_t nr)
{
	int64_t code = -1, pos = 0;
	size_t n = 0;

	for (size_t i = 0; i < nr; i++) {
		int64_t d = e[i][0] - code;

		n += put_varint(p + n, i % 2 ? -d - 1 : d);
		n += put_varint(p + n, e[i][1] - pos);
		code = e[i][0];
		pos = e[i][1];
	}
	return n;
}

/* A SourcePosition: script offset + 1 at bit 1, inlining id + 1 at bit 31. */
static int64_t sp(int64_t off, int inlined)
{
	return ((off + 1) << 1) | ((int64_t)(inlined + 1) << 31);
}

START_TEST(position_tables)
{
	const int64_t e[][2] = { { 0, sp(100, -1) }, { 5, sp(140, -1) }, { 12, sp(90, 2) } };
	uint8_t t[64];
	size_t n = table(t, e, 3);
	int64_t pos;
	unsigned int inl;

	ck_assert_int_eq(node_position_at(t, n, 4, &pos, &inl), 0);
	ck_assert_int_eq(pos, 100);
	ck_assert_uint_eq(inl, 0);
	ck_assert_int_eq(node_position_at(t, n, 5, &pos, &inl), 0);
	ck_assert_int_eq(pos, 140);
	ck_assert_int_eq(node_position_at(t, n, 1000, &pos, &inl), 0);
	ck_assert_int_eq(pos, 90);
	ck_assert_uint_eq(inl, 3);
	ck_assert_int_eq(node_position_at(t, n, -1, &pos, &inl), -ENOENT);
	/* Every truncation either ends before the entry looked for or fails. */
	for (size_t cut = 0; cut < n; cut++) {
		int err = node_position_at(t, cut, 1000, &pos, &inl);

		ck_assert(err == -EINVAL || err == -ENOENT || (err == 0 && pos != 90));
	}
	/* Eleven bytes of continuation: no varint is that long. */
	memset(t, 0xff, 11);
	ck_assert_int_eq(node_position_at(t, 11, 0, &pos, &inl), -EINVAL);
}
END_TEST

static uint64_t script(const char *name, const char *source, const int *ends, int nr_ends)
{
	uint64_t sc = object(L.type_script, 128);

	put64(node_field(&L, sc, L.script_name), str(name));
	put64(node_field(&L, sc, L.script_source), str(source));
	if (nr_ends) {
		uint64_t fa = object(L.type_fixed_array, 16 + 8 * (size_t)nr_ends);

		put64(node_field(&L, fa, L.fixed_array_length), smi(nr_ends));
		for (int i = 0; i < nr_ends; i++)
			put64(node_field(&L, fa, L.fixed_array_data) + 8 * (uint64_t)i, smi(ends[i]));
		put64(node_field(&L, sc, L.script_line_ends), fa);
	}
	return sc;
}

START_TEST(lines_from_line_ends_or_source)
{
	const char *src = "a\nbb\nccc\n";
	const int ends[] = { 1, 4, 8 };
	uint64_t with, without;
	struct py_image *img;
	struct node_mem mem;
	int line;

	load_layout();
	with = script("x.js", src, ends, 3);
	without = script("y.js", src, NULL, 0);
	image_mem(&img, &mem, NULL, 0);
	for (int pos = 0; pos <= 8; pos++) {
		int want = pos <= 1 ? 1 : pos <= 4 ? 2 : 3, l2;

		ck_assert_int_eq(node_script_line(&L, &mem, with, pos, &line), 0);
		ck_assert_int_eq(line, want);
		ck_assert_int_eq(node_script_line(&L, &mem, without, pos, &l2), 0);
		ck_assert_int_eq(l2, want);
	}
	ck_assert_int_eq(node_script_line(&L, &mem, with, 9, &line), -ENOENT);
	ck_assert_int_eq(node_script_line(&L, &mem, without, 100, &line), -ENOENT);
	ck_assert_int_eq(node_script_line(&L, &mem, with, -1, &line), -EINVAL);
	ck_assert_int_eq(node_script_line(&L, &mem, str("not a script"), 0, &line), -EINVAL);
	py_image__free(img);
}
END_TEST

/* One interpreted frame: function descend of walk.js at bytecode offset 3, under an entry frame. */
struct built {
	uint64_t stack[16];
	uint64_t sfi, fn, name_slot;
};

static void build_frame(struct built *b)
{
	const char *src = "\nfunction descend(d) {\n  return d;\n}\n";
	const int64_t e[][2] = { { 0, sp(20, -1) }, { 3, sp(26, -1) } };
	uint64_t sc = script("/srv/walk.js", src, NULL, 0), ba, pt;
	uint8_t t[32];
	size_t n = table(t, e, 2);

	b->sfi = object(L.type_shared_function_info, 64);
	b->name_slot = node_field(&L, b->sfi, L.sfi_name_or_scope_info);
	put64(b->name_slot, str("descend"));
	put64(node_field(&L, b->sfi, L.sfi_script), sc);
	b->fn = object(L.type_js_function, 64);
	put64(node_field(&L, b->fn, L.jsfunction_shared), b->sfi);
	pt = object(L.type_byte_array, 16 + n);
	put64(node_field(&L, pt, L.fixed_array_length), smi((int64_t)n));
	memcpy(heap + (node_field(&L, pt, L.fixed_array_data) - HEAP), t, n);
	ba = object(L.type_bytecode_array, 64 + 16);
	put64(node_field(&L, ba, L.bytecode_array_length), smi(16));
	put64(node_field(&L, ba, L.bytecode_array_source_positions), pt);
	/* The frame at STACK + 48: its slots below, the entry frame's at STACK + 96. */
	memset(b->stack, 0, sizeof(b->stack));
	b->stack[6] = STACK + 96;			/* caller's fp */
	b->stack[7] = 0x401000;				/* return address */
	b->stack[5] = object(L.type_fixed_array, 16);	/* context */
	b->stack[4] = b->fn;
	b->stack[2] = ba;
	b->stack[1] = smi(3 + L.bytecode_array_data - L.heap_object_tag);
	b->stack[11] = (uint64_t)L.ft_entry << 1;	/* fp - 8 of the entry frame */
	b->stack[12] = 0;
	b->stack[13] = 0x402000;
}

START_TEST(a_frame_is_named_while_its_function_is_the_same)
{
	struct node_regs r = { .ip = 0x400123, .sp = STACK, .bp = STACK + 48 };
	static struct node_stack st;
	struct node_fn_info info;
	struct py_image *img;
	struct node_mem mem;
	struct built b;

	load_layout();
	build_frame(&b);
	r.stack = b.stack;
	r.stack_size = sizeof(b.stack);
	image_mem(&img, &mem, b.stack, sizeof(b.stack));
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert_uint_eq(st.nr_frames, 2);
	ck_assert_uint_eq(st.status, 0);
	ck_assert_uint_eq(st.frames[0].kind, NODE_CODE_INTERPRETED);
	ck_assert_uint_eq(st.frames[0].fp, STACK + 48);
	ck_assert_uint_eq(st.frames[0].pc, 0x400123);
	ck_assert_uint_eq(st.frames[0].ret, 0x401000);
	ck_assert_uint_eq(st.frames[0].function, b.fn);
	ck_assert_uint_eq(st.frames[0].sfi, b.sfi);
	ck_assert_int_eq(st.frames[0].offset, 3);
	ck_assert_uint_eq(st.frames[1].kind, NODE_CODE_TYPED);
	ck_assert_uint_eq(st.frames[1].frame_type, L.ft_entry);
	ck_assert_uint_eq(st.frames[1].pc, 0x401000);
	ck_assert_int_eq(node_name_frame(&L, &mem, &st.frames[0], &info), 0);
	ck_assert_str_eq(info.name, "descend");
	ck_assert_str_eq(info.file, "/srv/walk.js");
	ck_assert_int_eq(info.line, 3);	/* position 26: "return" */
	ck_assert_int_eq(node_name_frame(&L, &mem, &st.frames[1], &info), -EINVAL);
	/* Kept without its BytecodeArray: the SFI's function data gives it (or no line). */
	struct node_frame kept = st.frames[0];

	kept.code = 0;
	ck_assert_int_eq(node_name_frame(&L, &mem, &kept, &info), 0);
	ck_assert_int_eq(info.line, 0);
	py_image__free(img);
	put64(node_field(&L, b.sfi, L.sfi_function_data), st.frames[0].code);
	image_mem(&img, &mem, b.stack, sizeof(b.stack));
	ck_assert_int_eq(node_name_frame(&L, &mem, &kept, &info), 0);
	ck_assert_int_eq(info.line, 3);
	py_image__free(img);

	/* The same address, another function's name now: not named by it. */
	put64(b.name_slot, str("other"));
	image_mem(&img, &mem, b.stack, sizeof(b.stack));
	ck_assert_int_eq(node_name_frame(&L, &mem, &st.frames[0], &info), -ESTALE);
	py_image__free(img);
	/* Not a SharedFunctionInfo any more. */
	put64(node_field(&L, b.sfi, L.heap_object_map), map_of(L.type_fixed_array));
	image_mem(&img, &mem, b.stack, sizeof(b.stack));
	ck_assert_int_eq(node_name_frame(&L, &mem, &st.frames[0], &info), -ESTALE);
	py_image__free(img);
}
END_TEST

START_TEST(chains_that_loop_or_run_long)
{
	static uint64_t stack[2 * 300 + 4];
	struct node_regs r = { .ip = 1, .sp = STACK, .bp = STACK + 8 };
	static struct node_stack st;
	struct py_image *img;
	struct node_mem mem;

	load_layout();
	/* 300 stub frames, 16 bytes apart: 128 of them, then truncated. */
	for (int i = 0; i < 300; i++) {
		stack[1 + 2 * i] = STACK + 8 + 16 * (uint64_t)(i + 1);
		stack[2 + 2 * i] = 0x400000 + (uint64_t)i;
		stack[2 * i] = (uint64_t)L.ft_stub << 1;
	}
	r.stack = stack;
	r.stack_size = sizeof(stack);
	image_mem(&img, &mem, NULL, 0);
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert_uint_eq(st.nr_frames, NODE_MAX_FRAMES);
	ck_assert(st.status & NODE_WALK_TRUNCATED);
	/* A frame pointing to itself, one pointing down, one outside the copy. */
	stack[1] = STACK + 8;
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert_uint_eq(st.nr_frames, 1);
	ck_assert(st.status & NODE_WALK_LEFT_STACK);
	stack[1] = STACK;
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert(st.status & NODE_WALK_LEFT_STACK);
	r.bp = STACK + sizeof(stack);
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert_uint_eq(st.nr_frames, 0);
	ck_assert(st.status & NODE_WALK_LEFT_STACK);
	/* Native frames (no marker, no JSFunction) are counted, not reported. */
	memset(stack, 0, sizeof(stack));
	stack[1] = STACK + 40;
	stack[5] = 0;
	r.bp = STACK + 8;
	ck_assert_int_eq(node_walk(&L, &r, &mem, &st), 0);
	ck_assert_uint_eq(st.nr_frames, 0);
	ck_assert_uint_eq(st.native_frames, 2);
	ck_assert_uint_eq(st.status, 0);
	py_image__free(img);
}
END_TEST

Suite *node_names_suite(void)
{
	Suite *s = suite_create("node_names");
	TCase *tc = tcase_create("image");

	tcase_add_test(tc, strings_of_every_kind);
	tcase_add_test(tc, position_tables);
	tcase_add_test(tc, lines_from_line_ends_or_source);
	tcase_add_test(tc, a_frame_is_named_while_its_function_is_the_same);
	tcase_add_test(tc, chains_that_loop_or_run_long);
	suite_add_tcase(s, tc);
	return s;
}
