// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend's --unwind dwarf copy: the chunk count user space gives
 * the stack-copy program makes it send the pieces that cover
 * --stack-dump-size and not one more, within what a join holds; and the
 * records it sends are joined into the samples they say, or dropped and
 * counted when they do not hold what they say.
 */
#include <stdint.h>
#include <string.h>

#include "backend-bpf/dwarf.h"
#include "backend-bpf/dwarf_join.h"
#include "bpf/profile_maps.h"
#include "tests/support/tests.h"

/* The pieces bpf/dwarf.bpf.h's copy_stack sends when every read succeeds. */
static unsigned int pieces_sent(unsigned int chunks, unsigned int piece)
{
	unsigned int max = (PROFILE_DUMP_MAX + piece - 1) / piece, n = 0;

	while (n < max && (uint64_t)n * piece < (uint64_t)chunks * PROFILE_DUMP_UNIT)
		n++;
	return n;
}

START_TEST(each_size_sends_the_pieces_that_cover_it)
{
	static const unsigned int pieces[] = { PROFILE_DUMP_PIECE_STACK, PROFILE_DUMP_PIECE_MAP };

	for (unsigned int k = 0; k < 2; k++) {
		unsigned int piece = pieces[k];

		/* --stack-dump-size: multiples of 8 up to 65528. */
		for (unsigned int size = 8; size <= 65528; size += 8) {
			unsigned int n = pieces_sent(bpf_dwarf__chunks(size, piece), piece);

			ck_assert_msg(n == (size + piece - 1) / piece,
				      "%u bytes in pieces of %u: %u pieces sent", size, piece, n);
			ck_assert_uint_le((uint64_t)n * piece, PROFILE_DUMP_MAX);
		}
	}
}
END_TEST

/* What the joiner handed on: the last sample, copied out. */
struct joined {
	unsigned int n;
	int cpu;
	__s32 kernel_stack_id;
	bool has_kstack, has_snap;
	uint64_t kstack[PROFILE_MAX_STACK_DEPTH];
	unsigned char stack[8192];
	size_t stack_size;
};

static void keep_sample(void *ctx, int cpu, uint64_t time, const struct dwarf_head *head,
			const uint64_t *kstack, const struct user_snapshot *snap)
{
	struct joined *j = ctx;

	(void)time;
	j->n++;
	j->cpu = cpu;
	j->kernel_stack_id = head->kernel_stack_id;
	j->has_kstack = kstack != NULL;
	if (kstack)
		memcpy(j->kstack, kstack, sizeof(j->kstack));
	j->has_snap = snap != NULL;
	j->stack_size = 0;
	if (!snap)
		return;
	ck_assert_uint_le(snap->stack_size, sizeof(j->stack));
	if (snap->stack) {
		memcpy(j->stack, snap->stack, snap->stack_size);
	} else {
		for (unsigned int p = 0, off = 0; p < snap->nr_pieces && off < snap->stack_size; p++) {
			size_t n = snap->piece_lens[p];

			if (n > snap->stack_size - off)
				n = snap->stack_size - off;
			memcpy(j->stack + off, snap->pieces[p], n);
			off += (unsigned int)n;
		}
	}
	j->stack_size = snap->stack_size;
}

/* A head of kind at buf; returns its size. */
static size_t put_head(unsigned char *buf, __u32 kind, __s32 kernel_stack_id, __u32 regs_valid)
{
	struct dwarf_head h;

	memset(&h, 0, sizeof(h));
	h.kind = kind;
	h.tgid = 7;
	h.tid = 8;
	h.kernel_stack_id = kernel_stack_id;
	h.user_stack_id = -1;
	h.regs_valid = regs_valid;
	h.sp = 0x7ffc0000;
	memcpy(buf, &h, sizeof(h));
	return sizeof(h);
}

/* A piece of len bytes counting up from fill at buf; returns its size. */
static size_t put_piece(unsigned char *buf, __u32 len, unsigned char fill)
{
	struct dwarf_piece pc = { .kind = DWARF_REC_PIECE, .len = len };

	memcpy(buf, &pc, sizeof(pc));
	for (__u32 i = 0; i < len; i++)
		buf[sizeof(pc) + i] = (unsigned char)(fill + i);
	return sizeof(pc) + len;
}

static unsigned char rec[2][16384];

/*
 * The 5.15 program's one record: the sample's copy and its kernel stack,
 * which ends where the record's frames end (a deeper stack's frames before
 * it are not taken for its own).
 */
START_TEST(a_record_with_head_piece_and_kernel_stack_is_one_sample)
{
	static const unsigned int depths[] = { 10, 3 };
	uint64_t frames[10];
	struct dwarf_joiner jn;
	struct joined got = { .n = 0 };

	for (unsigned int i = 0; i < 10; i++)
		frames[i] = 0xffffffff81000000 + 16 * (i + 1);
	ck_assert_int_eq(dwarf_joiner__init(&jn, 2, PROFILE_DUMP_PIECE_ONE, 16384, keep_sample,
					    &got), 0);
	for (unsigned int k = 0; k < 2; k++) {
		unsigned int depth = depths[k];
		size_t n = put_head(rec[0], DWARF_REC_HEAD_PIECE_KSTACK, (__s32)depth, 1);

		n += put_piece(rec[0] + n, 512, (unsigned char)(1 + k));
		memcpy(rec[0] + n, frames, depth * sizeof(frames[0]));
		n += depth * sizeof(frames[0]);
		dwarf_joiner__record(&jn, 1, 100, rec[0], (uint32_t)n);
		ck_assert_uint_eq(got.n, k + 1);
		ck_assert_int_eq(got.cpu, 1);
		ck_assert(got.has_kstack && got.has_snap);
		ck_assert(!memcmp(got.kstack, frames, depth * sizeof(frames[0])));
		ck_assert_uint_eq(got.kstack[depth], 0);
		ck_assert_uint_eq(got.stack_size, 512);
		for (unsigned int i = 0; i < 512; i++)
			ck_assert_uint_eq(got.stack[i], (unsigned char)(1 + k + i));
	}
	ck_assert_uint_eq(jn.records, 2);
	ck_assert_uint_eq(jn.heads, 2);
	ck_assert_uint_eq(jn.bad + jn.broken_heads, 0);
	dwarf_joiner__exit(&jn);
}
END_TEST

/*
 * The older programs' pieces, then the head: one copy, cut at
 * --stack-dump-size, joined across a drain's end; a lost record drops the
 * sample it fell in, and only that one.
 */
START_TEST(pieces_join_across_batches_until_a_record_is_lost)
{
	struct dwarf_joiner jn;
	struct joined got = { .n = 0 };
	size_t n;

	ck_assert_int_eq(dwarf_joiner__init(&jn, 1, PROFILE_DUMP_PIECE_MAP, 6000, keep_sample,
					    &got), 0);
	n = put_piece(rec[0], 4096, 3);
	dwarf_joiner__record(&jn, 0, 100, rec[0], (uint32_t)n);
	/* The drain ends: the batch holding that piece is reused. */
	dwarf_joiner__batch_done(&jn);
	memset(rec[0], 0xee, sizeof(rec[0]));
	n = put_piece(rec[1], 4096, 3 + 4096 % 256);
	dwarf_joiner__record(&jn, 0, 101, rec[1], (uint32_t)n);
	n = put_head(rec[0], DWARF_REC_HEAD, 5, 1);
	dwarf_joiner__record(&jn, 0, 102, rec[0], (uint32_t)n);
	ck_assert_uint_eq(got.n, 1);
	ck_assert(!got.has_kstack);
	ck_assert_int_eq(got.kernel_stack_id, 5);
	ck_assert_uint_eq(got.stack_size, 6000);
	for (unsigned int i = 0; i < 6000; i++)
		ck_assert_uint_eq(got.stack[i], (unsigned char)(3 + i));

	n = put_piece(rec[0], 4096, 0);
	dwarf_joiner__record(&jn, 0, 200, rec[0], (uint32_t)n);
	dwarf_joiner__lost(&jn, 0);
	n = put_head(rec[1], DWARF_REC_HEAD, 5, 1);
	dwarf_joiner__record(&jn, 0, 201, rec[1], (uint32_t)n);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_uint_eq(jn.broken_heads, 1);
	dwarf_joiner__record(&jn, 0, 202, rec[1], (uint32_t)n);
	ck_assert_uint_eq(got.n, 2);
	ck_assert_uint_eq(got.stack_size, 0);
	ck_assert_uint_eq(jn.heads, 3);
	dwarf_joiner__exit(&jn);
}
END_TEST

/*
 * Records that say more than they hold: more kernel frames than a stack
 * has or than the record carries, a piece longer than its record or than
 * the program sends, a CPU out of range. Each is counted, its sample
 * dropped, and the next sample is whole.
 */
START_TEST(records_that_say_more_than_they_hold_are_dropped_and_counted)
{
	struct dwarf_joiner jn;
	struct joined got = { .n = 0 };
	uint64_t bad = 0;
	size_t n;

	ck_assert_int_eq(dwarf_joiner__init(&jn, 1, PROFILE_DUMP_PIECE_MAP, 16384, keep_sample,
					    &got), 0);
	/* 128 frames: more than a stack has, though the record is long enough. */
	n = put_head(rec[0], DWARF_REC_HEAD_PIECE_KSTACK, PROFILE_MAX_STACK_DEPTH + 1, 0);
	n += put_piece(rec[0] + n, 0, 0);
	n += (PROFILE_MAX_STACK_DEPTH + 1) * 8;
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	ck_assert_uint_eq(jn.bad, ++bad);
	/* 3 frames said, 2 carried. */
	n = put_head(rec[0], DWARF_REC_HEAD_PIECE_KSTACK, 3, 0);
	n += put_piece(rec[0] + n, 0, 0);
	dwarf_joiner__record(&jn, 0, 2, rec[0], (uint32_t)(n + 16));
	ck_assert_uint_eq(jn.bad, ++bad);
	/* A piece longer than its record, then one longer than this program sends. */
	n = put_piece(rec[0], 100, 0);
	dwarf_joiner__record(&jn, 0, 3, rec[0], (uint32_t)(n - 1));
	ck_assert_uint_eq(jn.bad, ++bad);
	n = put_head(rec[1], DWARF_REC_HEAD, 1, 1);
	dwarf_joiner__record(&jn, 0, 4, rec[1], (uint32_t)n);
	n = put_piece(rec[0], PROFILE_DUMP_PIECE_MAP + 8, 0);
	dwarf_joiner__record(&jn, 0, 5, rec[0], (uint32_t)n);
	ck_assert_uint_eq(jn.bad, ++bad);
	n = put_head(rec[1], DWARF_REC_HEAD, 1, 1);
	dwarf_joiner__record(&jn, 0, 6, rec[1], (uint32_t)n);
	dwarf_joiner__record(&jn, 1, 7, rec[1], (uint32_t)n);
	ck_assert_uint_eq(jn.bad, ++bad);
	ck_assert_uint_eq(got.n, 0);
	ck_assert_uint_eq(jn.broken_heads + jn.bad, 4 + bad);

	n = put_piece(rec[0], 64, 9);
	dwarf_joiner__record(&jn, 0, 8, rec[0], (uint32_t)n);
	n = put_head(rec[1], DWARF_REC_HEAD, 1, 1);
	dwarf_joiner__record(&jn, 0, 9, rec[1], (uint32_t)n);
	ck_assert_uint_eq(got.n, 1);
	ck_assert_uint_eq(got.stack_size, 64);
	dwarf_joiner__exit(&jn);
}
END_TEST

/* What the joiner gave a head of the Python frames sent before it. */
struct py_joined {
	struct dwarf_joiner *jn;
	unsigned int heads, nr;
	bool some;
	uint64_t codes[PY_MAX_FRAMES];
};

static void keep_py(void *ctx, int cpu, uint64_t time, const struct dwarf_head *head,
		    const uint64_t *kstack, const struct user_snapshot *snap)
{
	struct py_joined *pj = ctx;
	const struct interp_frame *f = dwarf_joiner__py(pj->jn, cpu, head, &pj->nr);

	(void)time;
	(void)kstack;
	(void)snap;
	pj->heads++;
	pj->some = f != NULL;
	for (unsigned int i = 0; f && i < pj->nr; i++)
		pj->codes[i] = f[i].code;
}

/* A DWARF_REC_PY record of frames first.. of a walk of nr, of thread tid; returns its size. */
static size_t put_py(unsigned char *buf, __u32 first, __u32 nr, __u32 tid)
{
	struct dwarf_py py;

	memset(&py, 0, sizeof(py));
	py.kind = DWARF_REC_PY;
	py.first = first;
	py.nr = nr;
	py.tid = tid;
	for (__u32 i = 0; i < PY_FRAMES_PER_PIECE; i++)
		py.frames[i].code = 0x1000 + first + i;
	memcpy(buf, &py, sizeof(py));
	return sizeof(py);
}

/* A head of thread 8 that says (py) whether frames were sent before it. */
static void send_head(struct dwarf_joiner *jn, __u16 py)
{
	struct dwarf_head h;
	size_t n = put_head(rec[1], DWARF_REC_HEAD, -1000, 0);

	memcpy(&h, rec[1], sizeof(h));
	h.py = py;
	memcpy(rec[1], &h, sizeof(h));
	dwarf_joiner__record(jn, 0, 1, rec[1], (uint32_t)n);
}

/*
 * Python frames walked at the sample go to the head right after them, whole,
 * in order, of its thread; else to no head: a head never takes frames that
 * another sample's walk sent, or a part of its own.
 */
START_TEST(python_frames_join_the_head_after_them_whole_or_not_at_all)
{
	struct dwarf_joiner jn;
	struct py_joined pj = { .jn = &jn };
	size_t n;

	ck_assert_int_eq(dwarf_joiner__init(&jn, 1, PROFILE_DUMP_PIECE_STACK, 8192, keep_py, &pj),
			 0);
	/* 20 frames in two records. */
	n = put_py(rec[0], 0, 20, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	n = put_py(rec[0], 16, 20, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(pj.some);
	ck_assert_uint_eq(pj.nr, 20);
	for (unsigned int i = 0; i < 20; i++)
		ck_assert_uint_eq(pj.codes[i], 0x1000 + i);
	/* The first record of the walk missing: none. */
	n = put_py(rec[0], 16, 20, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(!pj.some);
	/* Frames before a head that says none are not kept for the next. */
	n = put_py(rec[0], 0, 3, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	send_head(&jn, PY_STACK_IDLE);
	ck_assert(!pj.some);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(!pj.some);
	/* Another thread's walk. */
	n = put_py(rec[0], 0, 3, 9);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(!pj.some);
	/* A walk of more frames than a stack holds, and a short record. */
	n = put_py(rec[0], 0, PY_MAX_FRAMES + 1, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(!pj.some);
	n = put_py(rec[0], 0, 3, 8);
	dwarf_joiner__record(&jn, 0, 1, rec[0], (uint32_t)n - 1);
	send_head(&jn, DWARF_PY_SENT);
	ck_assert(!pj.some);
	ck_assert_uint_eq(pj.heads, 6);
	dwarf_joiner__exit(&jn);
}
END_TEST

Suite *dwarfpieces_suite(void)
{
	Suite *s = suite_create("dwarfpieces");
	TCase *tc = tcase_create("chunks");

	tcase_add_test(tc, each_size_sends_the_pieces_that_cover_it);
	suite_add_tcase(s, tc);
	tc = tcase_create("join");
	tcase_add_test(tc, a_record_with_head_piece_and_kernel_stack_is_one_sample);
	tcase_add_test(tc, pieces_join_across_batches_until_a_record_is_lost);
	tcase_add_test(tc, records_that_say_more_than_they_hold_are_dropped_and_counted);
	tcase_add_test(tc, python_frames_join_the_head_after_them_whole_or_not_at_all);
	suite_add_tcase(s, tc);
	return s;
}
