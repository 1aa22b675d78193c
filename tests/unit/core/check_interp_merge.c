// SPDX-License-Identifier: GPL-2.0
/*
 * Mixed stacks (core/model/interp_merge.c): where Python frames stand among
 * the native ones. Frames are numbers here: natives 100+, Python 1+.
 */
#include <string.h>

#include "core/model/interp_merge.h"
#include "tests/support/tests.h"

#define O NATIVE_OTHER
#define E NATIVE_EVAL
#define I NATIVE_INTERP
#define K NATIVE_INTERP_KEEP

static unsigned int merge_cut(const uint32_t *native, const uint8_t *role, unsigned int nn,
			      const uint32_t *py, const bool *run_end, unsigned int np, bool keep,
			      bool cut, uint32_t *out, struct merge_stats *st)
{
	struct merge_input in = { native, role, nn, py, run_end, np, keep, cut };

	return interp_merge(&in, out, st);
}

static unsigned int merge(const uint32_t *native, const uint8_t *role, unsigned int nn,
			  const uint32_t *py, const bool *run_end, unsigned int np, bool keep,
			  uint32_t *out, struct merge_stats *st)
{
	return merge_cut(native, role, nn, py, run_end, np, keep, false, out, st);
}

static void assert_frames(const uint32_t *got, unsigned int n, const uint32_t *want,
			  unsigned int nw)
{
	ck_assert_uint_eq(n, nw);
	for (unsigned int i = 0; i < nw; i++)
		ck_assert_msg(got[i] == want[i], "frame %u: %u, want %u", i, got[i], want[i]);
}

/*
 * 3.11+ (leaf first): deflate <- zlib_compress <- cfunction_call <- eval
 * [compress_block, handle_request, serve: one run] <- PyObject_Call <-
 * eval [Thread.run ...] <- thread_run <- start_thread.
 */
START_TEST(eval_calls_give_way_to_their_runs_and_interpreter_frames_between_go)
{
	uint32_t native[] = { 100, 101, 102, 103, 104, 105, 106, 107 };
	uint8_t role[] = { O, O, I, E, I, E, I, O };
	uint32_t py[] = { 1, 2, 3, 4, 5 };
	bool end[] = { false, false, true, false, true };
	uint32_t want[] = { 100, 101, 1, 2, 3, 4, 5, 106, 107 };
	uint32_t out[16];
	struct merge_stats st;
	unsigned int n = merge(native, role, 8, py, end, 5, false, out, &st);

	assert_frames(out, n, want, 9);
	ck_assert(!st.no_eval && !st.extra_eval && !st.extra_interp);
}
END_TEST

/* Before 3.11 every eval call ran one frame. */
START_TEST(one_frame_per_eval_call_before_3_11)
{
	uint32_t native[] = { 103, 104, 103, 104, 103, 110 };
	uint8_t role[] = { E, I, E, I, E, K };
	uint32_t py[] = { 1, 2, 3 };
	bool end[] = { true, true, true };
	uint32_t want[] = { 1, 2, 3, 110 };
	uint32_t out[16];
	struct merge_stats st;

	assert_frames(out, merge(native, role, 6, py, end, 3, false, out, &st), want, 4);
}
END_TEST

/* A frame-pointer walk that stopped in the interpreter: Python frames under the leaf. */
START_TEST(without_an_eval_call_the_python_frames_call_the_native_leaf)
{
	uint32_t native[] = { 100, 101, 102, 150 };
	uint8_t role[] = { O, O, I, O };
	uint32_t py[] = { 1, 2 };
	bool end[] = { false, true };
	uint32_t want[] = { 100, 101, 1, 2 };
	uint32_t out[16];
	struct merge_stats st;

	assert_frames(out, merge(native, role, 4, py, end, 2, false, out, &st), want, 4);
	ck_assert(st.no_eval);
}
END_TEST

/* The interpreter's frames stay where --python raw asks, and rootward of all Python code. */
START_TEST(raw_keeps_every_native_frame)
{
	uint32_t native[] = { 102, 103, 108, 109 };
	uint8_t role[] = { I, E, I, O };
	uint32_t py[] = { 1 };
	bool end[] = { true };
	uint32_t raw[] = { 102, 1, 103, 108, 109 };
	uint32_t mixed[] = { 1, 108, 109 };
	uint32_t out[16];
	struct merge_stats st;

	assert_frames(out, merge(native, role, 4, py, end, 1, true, out, &st), raw, 5);
	assert_frames(out, merge(native, role, 4, py, end, 1, false, out, &st), mixed, 3);
}
END_TEST

/* Mismatches are counted, and no frame is lost or made up. */
START_TEST(more_runs_than_eval_calls_or_fewer)
{
	uint32_t native[] = { 103, 109 };
	uint8_t role[] = { E, O };
	uint32_t py[] = { 1, 2, 3 };
	bool end[] = { true, true, true };
	uint32_t want[] = { 1, 2, 3, 109 };
	uint32_t native2[] = { 103, 103, 109 };
	uint8_t role2[] = { E, E, O };
	uint32_t want2[] = { 1, 109 };
	uint32_t out[16];
	struct merge_stats st;

	assert_frames(out, merge(native, role, 2, py, end, 3, false, out, &st), want, 4);
	ck_assert(st.extra_interp && !st.extra_eval);
	assert_frames(out, merge(native2, role2, 3, py, end, 1, false, out, &st), want2, 2);
	ck_assert(st.extra_eval);
}
END_TEST

/*
 * Python frames read after the native stack (perf's reader thread): the
 * leaf Python function called another meanwhile, or returned. Lined up
 * from the root, the C function between two eval calls (asyncio's
 * task_step, 120) stays under the Python frame that called it (3); from
 * the leaf it went above it (3.6 perf: `_run_once;task_step;..;_run`).
 * A walk cut before its root lines up from the leaf.
 */
START_TEST(mismatches_line_up_from_the_root_unless_a_walk_was_cut)
{
	uint32_t native[] = { 103, 120, 103, 200 };
	uint8_t role[] = { E, O, E, O };
	uint32_t py[] = { 1, 2, 3 };
	bool end[] = { true, true, true };
	uint32_t called[] = { 1, 2, 120, 3, 200 }, cut[] = { 1, 120, 2, 3, 200 };
	uint32_t native3[] = { 103, 120, 103, 121, 103, 200 };
	uint8_t role3[] = { E, O, E, O, E, O };
	uint32_t returned[] = { 120, 2, 121, 3, 200 };
	uint32_t out[16];
	struct merge_stats st;

	/* One run more than eval calls: the newest with the leafmost call. */
	assert_frames(out, merge(native, role, 4, py, end, 3, false, out, &st), called, 5);
	ck_assert(st.extra_interp && !st.extra_eval);
	assert_frames(out, merge_cut(native, role, 4, py, end, 3, false, true, out, &st), cut, 5);
	/* One eval call more: the leafmost's frame returned before the read. */
	assert_frames(out, merge(native3, role3, 6, py + 1, end, 2, false, out, &st), returned, 5);
	ck_assert(st.extra_eval && !st.extra_interp);
}
END_TEST

START_TEST(no_python_frames_leave_the_native_stack_alone)
{
	uint32_t native[] = { 100, 102, 103, 109 };
	uint8_t role[] = { O, I, E, O };
	uint32_t want[] = { 100, 109 };
	uint32_t want_no_eval[] = { 100, 102 };
	uint8_t role_no_eval[] = { O, I };
	uint32_t out[16];
	struct merge_stats st;

	/* An eval call with nothing to give (a sample between frames) leaves no trace. */
	assert_frames(out, merge(native, role, 4, NULL, NULL, 0, false, out, &st), want, 2);
	assert_frames(out, merge(native, role_no_eval, 2, NULL, NULL, 0, false, out, &st),
		      want_no_eval, 2);
	ck_assert(!st.no_eval);
}
END_TEST

Suite *interp_merge_suite(void)
{
	Suite *s = suite_create("interp_merge");
	TCase *tc = tcase_create("merge");

	tcase_add_test(tc, eval_calls_give_way_to_their_runs_and_interpreter_frames_between_go);
	tcase_add_test(tc, one_frame_per_eval_call_before_3_11);
	tcase_add_test(tc, without_an_eval_call_the_python_frames_call_the_native_leaf);
	tcase_add_test(tc, raw_keeps_every_native_frame);
	tcase_add_test(tc, more_runs_than_eval_calls_or_fewer);
	tcase_add_test(tc, mismatches_line_up_from_the_root_unless_a_walk_was_cut);
	tcase_add_test(tc, no_python_frames_leave_the_native_stack_alone);
	suite_add_tcase(s, tc);
	return s;
}
