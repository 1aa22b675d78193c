// SPDX-License-Identifier: GPL-2.0
/*
 * interp/python on synthetic memory, for every layout of
 * bpf/python_layouts.h including 3.14 (no build of it here): threads
 * found, frames walked with the in-kernel walk's records and statuses,
 * names and lines decoded, and what garbage, loops and reused objects do.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/utf8.h"
#include "interp/python/pyint.h"
#include "tests/unit/python/pyfake.h"

#define APP_FILE "/srv/app/site-packages/pkg/m\xc3\xb6" "d.py"
#define LAYOUT(_i) py_layout__by_id((unsigned int)(_i))

/* The names a test stack runs, unicode of each width where the version has it. */
static const char *name_at(const struct py_layout *l, int i)
{
	static const char *const uni[] = { "leaf_\xc3\xa9t\xc3\xa9", "\xcf\x80_middle",
					   "\xf0\xa0\x80\x80main" };
	static const char *const ascii[] = { "leaf", "middle", "main" };

	return l->major == 2 ? ascii[i] : uni[i];
}

/* A process with one interpreter, a thread running leaf <- middle (entered from C) <- main. */
struct scene {
	struct fake f;
	uint64_t interp, busy, idle, codes[3], frames[3];
	int units[3], lines[3];
};

static void scene_build(struct scene *s, const struct py_layout *l)
{
	static const int table_lines[] = { 10, 10, 11, 12, 12, 14, 15, 15, 20 };
	uint8_t table[256];
	size_t len;
	uint64_t back = 0;

	fake_init(&s->f, l);
	len = fake_linetable(l, 10, table_lines, 9, table, sizeof(table));
	ck_assert_uint_le(len, sizeof(table));
	s->interp = fake_interp(&s->f);
	s->idle = fake_thread(&s->f, s->interp, 0, 4001);
	for (int i = 2; i >= 0; i--) {
		s->units[i] = 2 * i + 1;
		s->lines[i] = table_lines[s->units[i]];
		s->codes[i] = fake_code(&s->f, name_at(l, i), APP_FILE,
					10, table, len);
		back = fake_frame(&s->f, s->codes[i], fake_lasti(&s->f, s->codes[i], s->units[i]),
				  back, i == 1);
		s->frames[i] = back;
	}
	s->busy = fake_thread(&s->f, s->interp, s->frames[0], 4002);
	fake_finish(&s->f);
}

START_TEST(layouts_cover_every_version)
{
	static const int versions[][3] = {
		{ 2, 7, PY_LAYOUT_PY27 },   { 3, 6, PY_LAYOUT_PY36 },   { 3, 7, PY_LAYOUT_PY37 },
		{ 3, 8, PY_LAYOUT_PY38 },   { 3, 9, PY_LAYOUT_PY38 },   { 3, 10, PY_LAYOUT_PY310 },
		{ 3, 11, PY_LAYOUT_PY311 }, { 3, 12, PY_LAYOUT_PY312 }, { 3, 13, PY_LAYOUT_PY313 },
		{ 3, 14, PY_LAYOUT_PY314 },
	};

	for (size_t i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
		const struct py_layout *l = py_layout__for_version(versions[i][0], versions[i][1]);

		ck_assert_ptr_nonnull(l);
		ck_assert_int_eq(l->id, versions[i][2]);
	}
	ck_assert_ptr_null(py_layout__for_version(3, 15));
	ck_assert_ptr_null(py_layout__for_version(3, 5));
	ck_assert_ptr_null(py_layout__for_version(2, 6));
	ck_assert_ptr_null(py_layout__by_id(PY_LAYOUT_NONE));
	ck_assert_ptr_null(py_layout__by_id(PY_NR_LAYOUTS));
	/* The table is the header's: a few values by hand. */
	ck_assert_int_eq(py_layout__by_id(PY_LAYOUT_PY314)->frame_entry, 74);
	ck_assert_int_eq(py_layout__by_id(PY_LAYOUT_PY311)->cframe_current, 8);
	ck_assert_int_eq(py_layout__by_id(PY_LAYOUT_PY27)->str_data, 36);
}
END_TEST

START_TEST(threads_frames_and_names_of_every_layout)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_tstate threads[8];
	struct py_stack *st = malloc(sizeof(*st));
	struct errmsg why = { "" };
	struct py_codes *codes;
	unsigned int flags;
	struct scene s;
	int n;

	ck_assert_ptr_nonnull(st);
	scene_build(&s, l);
	/* PY_FUZZ_SEEDS=DIR: the scene as a seed of the fuzz target (tests/fuzz/corpus/python). */
	if (getenv("PY_FUZZ_SEEDS")) {
		char name[32];

		snprintf(name, sizeof(name), "layout-%d.%d", l->major, l->minor);
		fake_write_seed(&s.f, getenv("PY_FUZZ_SEEDS"), name);
	}
	ck_assert_msg(!py_interp__validate(&s.f.pi, &s.f.mem, &why), "%s", why.text);
	n = py_threads__read(&s.f.pi, &s.f.mem, FAKE_TID_OFFSET, threads, 8, &flags);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(flags, 0);
	/* Pushed at the head: the newest first, as CPython lists them. */
	ck_assert_uint_eq(threads[0].tstate, s.busy);
	ck_assert_uint_eq(threads[0].tid, 4002);
	ck_assert_uint_eq(threads[0].check, fake_check(&s.f, s.busy));
	ck_assert_uint_eq(threads[0].interp, s.interp);
	ck_assert_uint_eq(threads[1].tstate, s.idle);
	ck_assert_uint_eq(threads[1].tid, 4001);

	ck_assert_int_eq(py_walk(l, &s.f.mem, s.idle, st), 0);
	ck_assert_uint_eq(st->nr_frames, 0);
	ck_assert_int_eq(py_walk(l, &s.f.mem, s.busy, st), 0);
	ck_assert_uint_eq(st->nr_frames, 3);
	ck_assert_uint_eq(st->status, 0);
	/* The leaf alone, as the walk read it first (the perf reader's check of a walk). */
	{
		struct py_frame leaf;
		uint64_t addr;

		ck_assert_int_eq(py_walk_leaf(l, &s.f.mem, s.idle, &leaf, &addr), 0);
		ck_assert_uint_eq(addr, 0);
		ck_assert_uint_eq(leaf.code, 0);
		ck_assert_int_eq(py_walk_leaf(l, &s.f.mem, s.busy, &leaf, &addr), 0);
		ck_assert_uint_ne(addr, 0);
		ck_assert_uint_eq(leaf.code, st->frames[0].code);
		ck_assert_uint_eq(leaf.lasti, st->frames[0].lasti);
		ck_assert_uint_eq(leaf.ident, st->frames[0].ident);
		ck_assert_int_eq(py_walk_leaf(l, &s.f.mem, 0xdead0000ULL, &leaf, &addr), -EFAULT);
	}
	codes = py_codes__new(&s.f.pi, &s.f.mem);
	ck_assert_ptr_nonnull(codes);
	for (int i = 0; i < 3; i++) {
		struct py_frame *fr = &st->frames[i];
		bool entry = i == 1 && l->entry_kind != PY_ENTRY_NONE;
		struct py_code_info info;

		ck_assert_uint_eq(fr->code & ~PY_FRAME_ENTRY, s.codes[i]);
		ck_assert_msg(!!(fr->code & PY_FRAME_ENTRY) == entry, "frame %d entry", i);
		ck_assert(py_frame__is_shim(l, fr) == (entry && l->entry_kind == PY_ENTRY_OWNER));
		ck_assert_uint_eq(fr->lasti, fake_lasti(&s.f, s.codes[i], s.units[i]));
		/* Every function's frame has its code object's identity; a shim has none. */
		ck_assert(!fr->ident == py_frame__is_shim(l, fr));
		ck_assert_int_eq(py_codes__lookup(codes, fr->code, fr->ident, fr->lasti, &info), 0);
		ck_assert_str_eq(info.name, name_at(l, i));
		ck_assert_str_eq(info.file, APP_FILE);
		ck_assert_str_eq(py_short_filename(info.file), "pkg/m\xc3\xb6" "d.py");
		ck_assert_int_eq(info.line, s.lines[i]);
		ck_assert_int_eq(info.firstline, 10);
		ck_assert(!info.stale);
	}
	/* One entry per code object, names interned: three names and one file. */
	ck_assert_uint_eq(py_codes__count(codes), 3);
	py_codes__free(codes);
	free(st);
	fake_free(&s.f);
}
END_TEST

/* A chain of n frames of one code object; the last one's back is back. */
static uint64_t chain(struct fake *f, uint64_t code, int n, uint64_t *first)
{
	uint64_t frame = 0;

	for (int i = 0; i < n; i++) {
		frame = fake_frame(f, code, fake_lasti(f, code, 0), frame, 0);
		if (!i && first)
			*first = frame;
	}
	return frame;
}

START_TEST(deep_looping_and_broken_stacks_end_marked)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_stack *st = malloc(sizeof(*st));
	uint64_t code, deep, loop, broken, bottom, t_deep, t_loop, t_broken, interp;
	struct fake f;

	ck_assert_ptr_nonnull(st);
	fake_init(&f, l);
	interp = fake_interp(&f);
	code = fake_code(&f, "f", "f.py", 1, NULL, 0);
	deep = chain(&f, code, PY_MAX_FRAMES + 5, NULL);
	t_deep = fake_thread(&f, interp, deep, 1);
	/* A frame whose caller is itself, as in memory reused for something else. */
	loop = fake_frame(&f, code, 0, 0, 0);
	fake_put64(&f, loop + l->frame_back, loop);
	t_loop = fake_thread(&f, interp, loop, 2);
	/* Five frames, the oldest of which has a caller outside any mapping. */
	broken = chain(&f, code, 5, &bottom);
	fake_put64(&f, bottom + l->frame_back, 0xdead0000ULL);
	t_broken = fake_thread(&f, interp, broken, 3);
	fake_finish(&f);

	ck_assert_int_eq(py_walk(l, &f.mem, t_deep, st), 0);
	ck_assert_uint_eq(st->nr_frames, PY_MAX_FRAMES);
	ck_assert_uint_eq(st->status, PY_WALK_TRUNCATED);
	ck_assert_int_eq(py_walk(l, &f.mem, t_loop, st), 0);
	ck_assert_uint_eq(st->nr_frames, PY_MAX_FRAMES);
	ck_assert_uint_eq(st->status, PY_WALK_TRUNCATED);
	ck_assert_int_eq(py_walk(l, &f.mem, t_broken, st), 0);
	ck_assert_uint_eq(st->nr_frames, 5);
	ck_assert_uint_eq(st->status, PY_WALK_FAULT);
	/* A thread state that is not there at all. */
	ck_assert_int_eq(py_walk(l, &f.mem, 0xdead0000ULL, st), -EFAULT);
	ck_assert_int_eq(py_walk(l, &f.mem, 0, st), -EFAULT);
	free(st);
	fake_free(&f);
}
END_TEST

START_TEST(thread_lists_that_loop_or_break_end)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_tstate threads[PY_MAX_THREADS];
	uint64_t interp, a, b;
	unsigned int flags;
	struct fake f;
	int n;

	fake_init(&f, l);
	interp = fake_interp(&f);
	a = fake_thread(&f, interp, 0, 1);
	b = fake_thread(&f, interp, 0, 2);
	/* b -> a -> b: the list of a state freed and reused. */
	fake_put64(&f, a + l->tstate_next, b);
	fake_finish(&f);
	n = py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, PY_MAX_THREADS, &flags);
	ck_assert_int_eq(n, 2);
	ck_assert_uint_eq(flags, PY_THREADS_CYCLE);
	/* At most max. */
	n = py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, 1, &flags);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(flags & PY_THREADS_TRUNCATED, PY_THREADS_TRUNCATED);
	fake_free(&f);

	fake_init(&f, l);
	interp = fake_interp(&f);
	a = fake_thread(&f, interp, 0, 1);
	fake_put64(&f, a + l->tstate_next, 0xdead0000ULL);
	fake_finish(&f);
	n = py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, PY_MAX_THREADS, &flags);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(flags, PY_THREADS_FAULT);
	fake_free(&f);
}
END_TEST

/* Interpreters: every one's threads, and a list of interpreters that loops ends. */
START_TEST(threads_of_every_interpreter)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_tstate threads[16];
	uint64_t main_interp, sub;
	unsigned int flags;
	struct fake f;
	int n;

	if (l->interp_next < 0)
		return;	/* 3.14's is not in the table: its main interpreter only */
	fake_init(&f, l);
	main_interp = fake_interp(&f);
	sub = fake_interp(&f);
	fake_thread(&f, main_interp, 0, 10);
	fake_thread(&f, sub, 0, 20);
	fake_thread(&f, sub, 0, 21);
	fake_finish(&f);
	n = py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, 16, &flags);
	ck_assert_int_eq(n, 3);
	ck_assert_uint_eq(flags, 0);
	ck_assert_uint_eq(threads[0].tid, 10);
	ck_assert_uint_eq(threads[1].interp, sub);
	ck_assert_uint_eq(threads[2].tid, 20);
	fake_free(&f);

	fake_init(&f, l);
	main_interp = fake_interp(&f);
	fake_thread(&f, main_interp, 0, 10);
	fake_put64(&f, main_interp + l->interp_next, main_interp);
	fake_finish(&f);
	n = py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, 16, &flags);
	ck_assert_int_eq(n, 1);
	ck_assert_uint_eq(flags, PY_THREADS_CYCLE);
	fake_free(&f);
}
END_TEST

/* 2.7 and 3.6 stripped of interp_head: the GIL holder's interpreter, or later. */
START_TEST(old_versions_without_interp_head_use_the_gil_holder)
{
	for (unsigned int id = PY_LAYOUT_PY27; id <= PY_LAYOUT_PY36; id++) {
		const struct py_layout *l = LAYOUT(id);
		struct py_tstate threads[4];
		unsigned int flags;
		uint64_t interp;
		struct fake f;

		fake_init(&f, l);
		interp = fake_interp(&f);
		fake_thread(&f, interp, 0, 7);
		fake_thread(&f, interp, 0, 8);
		fake_finish(&f);
		f.pi.interp_head = 0;
		ck_assert_int_eq(py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, 4, &flags),
				 2);
		ck_assert_uint_eq(flags, PY_THREADS_FROM_GIL);
		fake_free(&f);

		fake_init(&f, l);
		fake_interp(&f);
		fake_finish(&f);
		f.pi.interp_head = 0;
		ck_assert_int_eq(py_threads__read(&f.pi, &f.mem, FAKE_TID_OFFSET, threads, 4, &flags),
				 -EAGAIN);
		fake_free(&f);
	}
}
END_TEST

START_TEST(a_code_object_reused_reads_again_and_a_gone_process_keeps_names)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_code_info info;
	struct py_codes *codes;
	uint64_t code, other, ident;
	struct fake f;

	fake_init(&f, l);
	code = fake_code(&f, "first", "a.py", 3, NULL, 0);
	other = fake_str(&f, "second");
	fake_finish(&f);
	/* The cache reads through f.mem, which fake_remap points at new memory. */
	codes = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, fake_lasti(&f, code, 0), &info), 0);
	ck_assert_str_eq(info.name, "first");
	/* An empty table: co_lnotab says the first line, the later ones no line. */
	ck_assert_int_eq(info.line, l->lines_kind == PY_LINES_LNOTAB ? 3 : 0);

	/* The same address, another code object. */
	fake_put64(&f, code + l->code_name, other);
	if (l->code_qualname >= 0)
		fake_put64(&f, code + l->code_qualname, other);
	fake_remap(&f, false);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), 0);
	ck_assert_str_eq(info.name, "second");
	ck_assert(!info.stale);
	/* Each cached by its identity: the first still names the frames read while it lived. */
	ck_assert_uint_eq(py_codes__count(codes), 2);

	/* The object freed and its memory now something else: not a code object. */
	fake_put64(&f, code + PY_OB_TYPE, f.pi.str_type);
	fake_remap(&f, false);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), -EINVAL);
	/* Their entries stay, for frames read while they lived (with their identities). */
	ck_assert_uint_eq(py_codes__count(codes), 2);

	/*
	 * Read it again, then lose the process: the names read stand, marked
	 * stale, for frames of its identity (a frame without one has none).
	 */
	fake_put64(&f, code + PY_OB_TYPE, f.pi.code_type);
	fake_remap(&f, false);
	ck_assert_int_eq(py_code__ident(l, &f.mem, code, &ident), 0);
	ck_assert_int_eq(py_codes__lookup(codes, code, ident, 0, &info), 0);
	fake_remap(&f, true);
	ck_assert_int_eq(py_codes__lookup(codes, code, ident, 0, &info), 0);
	ck_assert_str_eq(info.name, "second");
	ck_assert(info.stale);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), -EFAULT);
	/* Never seen and not readable: an error, no name. */
	ck_assert_int_eq(py_codes__lookup(codes, code + 4096, 0, 0, &info), -EFAULT);
	py_codes__free(codes);
	fake_free(&f);
}
END_TEST

/* Strings as memory has them, valid or not, are valid UTF-8 and bounded. */
/*
 * A frame is named by the code object it ran, whose identity the walk read
 * (as the in-kernel walk does): after that object is freed, or another
 * takes its memory, only a name cached while it lived names the frame.
 */
START_TEST(frames_are_named_only_by_the_code_object_they_ran)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_stack *st = malloc(sizeof(*st));
	uint64_t code, frame, ts, lasti, ran, now, other;
	struct py_codes *seen, *fresh;
	struct py_code_info info;
	struct fake f;

	ck_assert_ptr_nonnull(st);
	fake_init(&f, l);
	code = fake_code(&f, "spin_a", "made.py", 2, NULL, 0);
	lasti = fake_lasti(&f, code, 0);
	frame = fake_frame(&f, code, lasti, 0, 0);
	ts = fake_thread(&f, fake_interp(&f), frame, 7);
	other = fake_str(&f, "spin_b");
	fake_finish(&f);
	ck_assert_int_eq(py_walk(l, &f.mem, ts, st), 0);
	ck_assert_uint_eq(st->nr_frames, 1);
	ran = st->frames[0].ident;
	ck_assert_uint_ne(ran, 0);
	/* seen names the frame while its code lives; fresh is asked only after. */
	seen = py_codes__new(&f.pi, &f.mem);
	fresh = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_a");

	/* Freed, its memory not taken yet: its fields in place, pymalloc's link in its first word. */
	fake_put64(&f, code, code + 4096);
	fake_remap(&f, false);
	ck_assert_int_eq(py_codes__lookup(fresh, code, ran, lasti, &info), -ESTALE);
	ck_assert_int_eq(py_codes__lookup(fresh, code, 0, lasti, &info), -ESTALE);
	ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_a");
	/* Freed by glibc (3.11+'s larger code objects): its links over the count and the type. */
	fake_put64(&f, code + PY_OB_TYPE, 0x5a5a5a5a5a5a5a5aULL);
	fake_remap(&f, false);
	ck_assert_int_eq(py_codes__lookup(fresh, code, ran, lasti, &info), -ESTALE);
	ck_assert_int_eq(py_codes__lookup(fresh, code, 0, lasti, &info), -EINVAL);
	ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_a");
	fake_put64(&f, code + PY_OB_TYPE, f.pi.code_type);
	fake_put64(&f, code, 1);

	/*
	 * 3.12+: a successor whose strings all took its predecessor's places
	 * (the same addresses, other text) differs by its co_version alone.
	 */
	if (l->code_version >= 0) {
		fake_put32(&f, code + l->code_version, ++f.versions);
		fake_remap(&f, false);
		ck_assert_int_eq(py_codes__lookup(fresh, code, ran, lasti, &info), -ESTALE);
		ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
		ck_assert_str_eq(info.name, "spin_a");
	}

	/* Another code object in its memory, with a name of its own. */
	fake_put64(&f, code + l->code_name, other);
	if (l->code_qualname >= 0)
		fake_put64(&f, code + l->code_qualname, other);
	if (l->code_version >= 0)
		fake_put32(&f, code + l->code_version, ++f.versions);
	fake_remap(&f, false);
	ck_assert_int_eq(py_codes__lookup(fresh, code, ran, lasti, &info), -ESTALE);
	ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_a");
	/* Its own frames, walked now, are its own. */
	ck_assert_int_eq(py_walk(l, &f.mem, ts, st), 0);
	now = st->frames[0].ident;
	ck_assert_uint_ne(now, ran);
	ck_assert_int_eq(py_codes__lookup(fresh, code, now, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_b");
	ck_assert_int_eq(py_codes__lookup(seen, code, now, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_b");
	/* Both cached in seen, by identity; the predecessor's still names its frames. */
	ck_assert_uint_eq(py_codes__count(seen), 2);
	ck_assert_int_eq(py_codes__lookup(seen, code, ran, lasti, &info), 0);
	ck_assert_str_eq(info.name, "spin_a");
	py_codes__free(seen);
	py_codes__free(fresh);
	free(st);
	fake_free(&f);
}
END_TEST

START_TEST(strings_are_bounded_valid_utf8)
{
	const struct py_layout *l = LAYOUT(PY_LAYOUT_PY312);
	struct py_code_info info;
	struct py_codes *codes;
	uint64_t code, name;
	uint16_t units[3] = { 'a', 0xd800, 'b' };
	uint32_t wide[3] = { 0x110000, 'x', 0 };
	struct fake f;

	fake_init(&f, l);
	code = fake_code(&f, "placeholder", "f.py", 1, NULL, 0);
	/* A kind-2 string with a lone surrogate, and a length of 2^62 characters. */
	name = fake_str(&f, "\xcf\x80\xcf\x80\xcf\x80");
	fake_put(&f, name + l->str_compact_size, units, sizeof(units));
	fake_put64(&f, name + 16, 1ULL << 62);
	fake_put64(&f, code + l->code_qualname, name);
	fake_alloc(&f, 8192);	/* zeros after it, which are NULs */
	fake_finish(&f);
	codes = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), 0);
	ck_assert_uint_le(strlen(info.name), PY_NAME_MAX - 1);
	ck_assert_uint_ge(strlen(info.name), PY_NAME_MAX - 4);
	ck_assert_uint_eq(utf8__boundary(info.name, strlen(info.name)), strlen(info.name));
	ck_assert(!strncmp(info.name, "a\xef\xbf\xbd" "b\xef\xbf\xbd", 8));
	py_codes__free(codes);
	fake_free(&f);

	fake_init(&f, l);
	code = fake_code(&f, "placeholder", "f.py", 1, NULL, 0);
	name = fake_str(&f, "\xcf\x80\xcf\x80\xcf\x80");
	fake_put(&f, name + l->str_compact_size, units, sizeof(units));
	fake_put64(&f, code + l->code_qualname, name);
	/* Kind 4: past U+10FFFF, and a NUL. */
	name = fake_str(&f, "\xf0\xa0\x80\x80xy");
	fake_put(&f, name + l->str_compact_size, wide, sizeof(wide));
	fake_put64(&f, code + l->code_filename, name);
	fake_alloc(&f, 8192);	/* room for the reads past short strings */
	fake_finish(&f);
	codes = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), 0);
	ck_assert_str_eq(info.name, "a\xef\xbf\xbd" "b");
	ck_assert_str_eq(info.file, "\xef\xbf\xbdx\xef\xbf\xbd");
	py_codes__free(codes);
	fake_free(&f);
}
END_TEST

START_TEST(long_names_are_cut_at_a_character)
{
	const struct py_layout *l = LAYOUT(_i);
	char *longname = malloc(3 * PY_NAME_MAX + 1);
	struct py_code_info info;
	struct py_codes *codes;
	uint64_t code;
	struct fake f;

	ck_assert_ptr_nonnull(longname);
	/* "é" repeated: two bytes each in UTF-8, so the cut falls inside one but for care. */
	for (int i = 0; i < 3 * PY_NAME_MAX / 2; i++)
		memcpy(longname + 2 * i, "\xc3\xa9", 2);
	longname[3 * PY_NAME_MAX / 2 * 2] = '\0';
	fake_init(&f, l);
	code = fake_code(&f, longname, "f.py", 1, NULL, 0);
	fake_finish(&f);
	codes = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), 0);
	ck_assert_uint_eq(strlen(info.name), PY_NAME_MAX - 2);
	ck_assert_uint_eq(utf8__boundary(info.name, strlen(info.name)), strlen(info.name));
	for (size_t i = 0; info.name[i]; i += utf8__seq_len((const unsigned char *)info.name + i, 4))
		ck_assert_uint_gt(utf8__seq_len((const unsigned char *)info.name + i, 4), 0);
	py_codes__free(codes);
	fake_free(&f);
	free(longname);
}
END_TEST

START_TEST(not_code_objects_are_refused)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_code_info info;
	struct py_codes *codes;
	uint64_t code, notcode;
	struct fake f;

	fake_init(&f, l);
	code = fake_code(&f, "f", "f.py", 1, NULL, 0);
	notcode = fake_str(&f, "None, as a shim's f_executable");
	/* A code object whose name is not a str (its type is the code type). */
	fake_put64(&f, code + l->code_name, code);
	if (l->code_qualname >= 0)
		fake_put64(&f, code + l->code_qualname, code);
	fake_finish(&f);
	codes = py_codes__new(&f.pi, &f.mem);
	ck_assert_int_eq(py_codes__lookup(codes, notcode, 0, 0, &info), -EINVAL);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, 0, &info), -EINVAL);
	ck_assert_int_eq(py_codes__lookup(codes, 0, 0, 0, &info), -EFAULT);
	ck_assert_uint_eq(py_codes__count(codes), 0);
	py_codes__free(codes);
	fake_free(&f);
}
END_TEST

START_TEST(frames_just_pushed_are_at_their_first_line)
{
	const struct py_layout *l = LAYOUT(_i);
	static const int lines[] = { 5, 6, 7 };
	struct py_code_info info;
	struct py_codes *codes;
	uint8_t table[64];
	uint64_t code;
	size_t len;
	struct fake f;

	fake_init(&f, l);
	len = fake_linetable(l, 4, lines, 3, table, sizeof(table));
	code = fake_code(&f, "f", "f.py", 4, table, len);
	fake_finish(&f);
	codes = py_codes__new(&f.pi, &f.mem);
	/* 3.12's prev_instr of a frame just pushed is one unit before the code: -2 bytes. */
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, fake_lasti(&f, code, -1), &info), 0);
	ck_assert_int_eq(info.line, 4);
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, fake_lasti(&f, code, 2), &info), 0);
	ck_assert_int_eq(info.line, 7);
	/* Past the table: no line. */
	ck_assert_int_eq(py_codes__lookup(codes, code, 0, fake_lasti(&f, code, 40), &info), 0);
	ck_assert_int_eq(info.line, l->lines_kind == PY_LINES_LNOTAB ? 7 : 0);
	py_codes__free(codes);
	fake_free(&f);
}
END_TEST

/*
 * Issue 46 row 2: line tables held once per content, whichever bytes
 * object holds them, and counted in the process's budget: past it a table
 * is refused (its frames keep their names, without a line) and counted.
 */
#define BIG_TABLE 30000
#define SHARERS 32

/* A table of l's kind giving lines 5, 6, 7 to units 0-2, padded to len with entries past them. */
static size_t padded_table(const struct py_layout *l, uint8_t *table, size_t len)
{
	static const int lines[] = { 5, 6, 7 };
	size_t n = fake_linetable(l, 4, lines, 3, table, len);

	/* 3.11+: "no location" entries; 3.10 and co_lnotab: (0, 0) pairs. */
	memset(table + n, l->lines_kind == PY_LINES_LOCATIONS ? 0xf8 : 0, len - n);
	return len;
}

START_TEST(line_tables_are_held_once_and_within_the_budget)
{
	const struct py_layout *l = LAYOUT(_i);
	static uint8_t table[BIG_TABLE + 8];
	uint64_t codes[SHARERS], own[2];
	struct py_codes_held h;
	struct py_code_info info;
	struct py_codes *c;
	struct fake f;

	fake_init(&f, l);
	for (int i = 0; i < SHARERS; i++)
		codes[i] = fake_code(&f, "sharer", "s.py", 4, table,
				     padded_table(l, table, BIG_TABLE));
	/* Two more, each its own content (a longer table). */
	for (int i = 0; i < 2; i++)
		own[i] = fake_code(&f, "own", "o.py", 4, table,
				   padded_table(l, table, BIG_TABLE + 4 * (i + 1)));
	fake_finish(&f);
	c = py_codes__new(&f.pi, &f.mem);
	for (int i = 0; i < SHARERS; i++) {
		ck_assert_int_eq(py_codes__lookup(c, codes[i], 0, fake_lasti(&f, codes[i], 2),
						  &info), 0);
		ck_assert_int_eq(info.line, 7);
	}
	py_codes__held(c, &h);
	ck_assert_uint_eq(h.tables, 1);
	ck_assert_uint_eq(h.table_bytes, BIG_TABLE);

	/* Room for one more table and names: the first of its own held, the second not. */
	py_codes__set_limit(c, h.name_bytes + h.table_bytes + BIG_TABLE + 4 + 64);
	ck_assert_int_eq(py_codes__lookup(c, own[0], 0, fake_lasti(&f, own[0], 1), &info), 0);
	ck_assert_int_eq(info.line, 6);
	ck_assert_int_eq(py_codes__lookup(c, own[1], 0, fake_lasti(&f, own[1], 1), &info), 0);
	ck_assert_str_eq(info.name, "own");
	ck_assert_int_eq(info.line, 0);
	py_codes__held(c, &h);
	ck_assert_uint_eq(h.tables, 2);
	ck_assert_uint_eq(h.tables_refused, 1);
	ck_assert_uint_eq(h.table_bytes_refused, BIG_TABLE + 8);
	ck_assert_uint_le(h.name_bytes + h.table_bytes, h.limit);

	/* A name past the budget is refused too, and counted. */
	fake_free(&f);
	fake_init(&f, l);
	codes[0] = fake_code(&f, "a_new_name", "new.py", 4, NULL, 0);
	fake_finish(&f);
	py_codes__free(c);
	c = py_codes__new(&f.pi, &f.mem);
	py_codes__set_limit(c, 4);
	ck_assert_int_eq(py_codes__lookup(c, codes[0], 0, 0, &info), -ENOSPC);
	py_codes__held(c, &h);
	ck_assert_uint_eq(h.names_refused, 1);
	py_codes__free(c);
	fake_free(&f);
}
END_TEST

START_TEST(validation_refuses_what_memory_contradicts)
{
	const struct py_layout *l = LAYOUT(_i);
	uint64_t name = 0;
	struct errmsg why;
	struct fake f;

	fake_init(&f, l);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), 0);
	fake_free(&f);

	/* PyCode_Type named otherwise: the symbol or the bias is wrong. */
	fake_init(&f, l);
	name = fake_alloc(&f, 16);
	fake_put(&f, name, "codf", 5);
	fake_put64(&f, f.pi.code_type + PY_TYPE_TP_NAME, name);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why.text, "PyCode_Type"));
	fake_free(&f);
	if (l->minor < 13 || l->major != 3)
		return;

	/* 3.13+: the debug offsets disagree with the table, say free-threaded, or are absent. */
	fake_init(&f, l);
	fake_put64(&f, f.pi.runtime + 72, l->interp_threads_head + 8);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why.text, "interp_threads_head"));
	fake_free(&f);
	fake_init(&f, l);
	fake_put64(&f, f.pi.runtime + 16, 1);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why.text, "free-threaded"));
	fake_free(&f);
	fake_init(&f, l);
	fake_put(&f, f.pi.runtime, "xdebugpz", 8);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), -ENOTSUP);
	fake_free(&f);
	fake_init(&f, l);
	fake_finish(&f);
	ck_assert_int_eq(py_interp__validate(&f.pi, &f.mem, &why), 0);
	ck_assert_int_eq(f.pi.micro, 2);
	ck_assert_uint_eq(f.pi.hexversion, 0x030000f0 | l->minor << 16 | 2 << 8);
	fake_free(&f);
}
END_TEST

/*
 * A walk through a page snapshot reads what a direct one does; frames that
 * lie together (3.11+'s datastack chunk) cost a read per page, not per frame.
 */
START_TEST(snapshot_walks_match_direct_ones)
{
	const struct py_layout *l = LAYOUT(_i);
	struct py_stack *a = malloc(sizeof(*a)), *b = malloc(sizeof(*b));
	struct py_snap *snap = malloc(sizeof(*snap));
	uint64_t interp, code, top, t;
	unsigned int pages;
	struct fake f;

	ck_assert(a && b && snap);
	fake_init(&f, l);
	interp = fake_interp(&f);
	code = fake_code(&f, "f", "f.py", 1, NULL, 0);
	top = chain(&f, code, 40, NULL);
	t = fake_thread(&f, interp, top, 9);
	fake_finish(&f);
	py_snap__init(snap, &f.mem);
	ck_assert_int_eq(py_walk(l, &f.mem, t, a), 0);
	ck_assert_int_eq(py_walk(l, &snap->mem, t, b), 0);
	ck_assert_uint_eq(a->nr_frames, 40);
	ck_assert_uint_eq(b->nr_frames, 40);
	ck_assert_uint_eq(a->status, b->status);
	ck_assert(!memcmp(a->frames, b->frames, a->nr_frames * sizeof(a->frames[0])));
	/* The frames' pages, the state's and its cframe's. */
	pages = 40 * ((l->frame_read + 15) & ~15) / PY_SNAP_PAGE_SIZE + 2;
	ck_assert_uint_le(snap->syscalls, pages + 3);
	ck_assert_uint_lt(snap->syscalls, 40);
	py_snap__reset(snap);
	ck_assert_int_eq(py_walk(l, &snap->mem, 0xdead0000ULL, b), -EFAULT);
	free(a);
	free(b);
	free(snap);
	fake_free(&f);
}
END_TEST

START_TEST(image_reader_bounds)
{
	struct py_image *img = py_image__new();
	uint8_t data[64] = { 1, 2, 3 }, out[128];
	struct py_mem mem;

	ck_assert_int_eq(py_image__add(img, 0x10000, data, sizeof(data)), 0);
	ck_assert_int_eq(py_image__add(img, 0x10020, data, sizeof(data)), -EEXIST);
	ck_assert_int_eq(py_image__add(img, 0xfff0, data, sizeof(data)), -EEXIST);
	ck_assert_int_eq(py_image__add(img, UINT64_MAX - 8, data, sizeof(data)), -EINVAL);
	ck_assert_int_eq(py_image__add(img, 0x10040, data, sizeof(data)), 0);
	py_image__mem(img, &mem);
	ck_assert_int_eq(py_mem__read(&mem, 0x10000, out, 3), 0);
	ck_assert_int_eq(out[2], 3);
	/* Adjacent ranges are still two: a read across them fails, as across two mappings may. */
	ck_assert_int_eq(py_mem__read(&mem, 0x10030, out, 32), -EFAULT);
	ck_assert_int_eq(py_mem__read(&mem, 0xffff, out, 2), -EFAULT);
	ck_assert_int_eq(py_mem__read(&mem, 0x10000, out, PY_MEM_MAX_READ + 1), -E2BIG);
	ck_assert_int_eq(py_mem__read(&mem, UINT64_MAX - 1, out, 4), -EFAULT);
	ck_assert_int_eq(py_mem__read(&mem, 8, out, 4), -EFAULT);
	py_image__free(img);
}
END_TEST

START_TEST(short_file_names)
{
	ck_assert_str_eq(py_short_filename("/usr/lib/python3/dist-packages/requests/api.py"),
			 "requests/api.py");
	ck_assert_str_eq(py_short_filename("/v/lib/site-packages/a/site-packages/b/c.py"),
			 "b/c.py");
	ck_assert_str_eq(py_short_filename("/home/u/app/serve.py"), "serve.py");
	ck_assert_str_eq(py_short_filename("<frozen importlib._bootstrap>"),
			 "<frozen importlib._bootstrap>");
	ck_assert_str_eq(py_short_filename("serve.py"), "serve.py");
	ck_assert_str_eq(py_short_filename("/x/site-packages/"), "/x/site-packages/");
}
END_TEST

Suite *py_image_suite(void)
{
	Suite *s = suite_create("py_image");
	TCase *tc = tcase_create("synthetic");

	tcase_add_test(tc, layouts_cover_every_version);
	tcase_add_loop_test(tc, threads_frames_and_names_of_every_layout, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, deep_looping_and_broken_stacks_end_marked, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, thread_lists_that_loop_or_break_end, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, threads_of_every_interpreter, 1, PY_NR_LAYOUTS);
	tcase_add_test(tc, old_versions_without_interp_head_use_the_gil_holder);
	tcase_add_loop_test(tc, a_code_object_reused_reads_again_and_a_gone_process_keeps_names, 1,
			    PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, frames_are_named_only_by_the_code_object_they_ran, 1,
			    PY_NR_LAYOUTS);
	tcase_add_test(tc, strings_are_bounded_valid_utf8);
	tcase_add_loop_test(tc, long_names_are_cut_at_a_character, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, not_code_objects_are_refused, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, frames_just_pushed_are_at_their_first_line, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, line_tables_are_held_once_and_within_the_budget, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, validation_refuses_what_memory_contradicts, 1, PY_NR_LAYOUTS);
	tcase_add_loop_test(tc, snapshot_walks_match_direct_ones, 1, PY_NR_LAYOUTS);
	tcase_add_test(tc, image_reader_bounds);
	tcase_add_test(tc, short_file_names);
	suite_add_tcase(s, tc);
	return s;
}
