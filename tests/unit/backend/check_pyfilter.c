// SPDX-License-Identifier: GPL-2.0
/* The choice of the Python threads the perf backend's sched_switch filter holds (pyfilter.h). */
#include <stdlib.h>

#include "backend-perfring/pyfilter.h"
#include "tests/support/tests.h"

#define NOW 10000000000ULL
#define BUSY 2000000000ULL

static bool has(const pid_t *tids, size_t nr, pid_t tid)
{
	for (size_t i = 0; i < nr; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Fewer than fit: all of them, by tid, nothing said left out. */
START_TEST(all_fit)
{
	struct pyfilter_thread t[] = { { .pid = 9, .tid = 30 }, { .pid = 9, .tid = 10 },
				       { .pid = 4, .tid = 20, .last = NOW } };
	struct pyfilter_left left;
	pid_t out[8];

	ck_assert_uint_eq(pyfilter__choose(t, 3, NOW, BUSY, out, 8, &left), 3);
	ck_assert_int_eq(out[0], 10);
	ck_assert_int_eq(out[1], 20);
	ck_assert_int_eq(out[2], 30);
	ck_assert_uint_eq(left.threads, 0);
	ck_assert_int_eq(left.pid, 0);
}
END_TEST

/*
 * Issue 46 row 5: one process's 200 idle threads with the lowest tids, a
 * service's thread that naps with the highest. The service is in; the
 * left-out threads are all the idle process's, and none of them busy.
 */
START_TEST(a_busy_thread_beats_a_crowd_of_idle_ones_with_lower_tids)
{
	struct pyfilter_thread t[202];
	struct pyfilter_left left;
	pid_t out[128];
	size_t nr;

	for (int i = 0; i < 201; i++)
		t[i] = (struct pyfilter_thread){ .pid = 100, .tid = 100 + i };
	t[0].last = NOW - 50000000;	/* its main thread wakes now and then */
	t[201] = (struct pyfilter_thread){ .pid = 5000, .tid = 5000, .last = NOW - 1000000 };
	nr = pyfilter__choose(t, 202, NOW, BUSY, out, 128, &left);
	ck_assert_uint_eq(nr, 128);
	ck_assert(has(out, nr, 5000));
	ck_assert(has(out, nr, 100));
	for (size_t i = 1; i < nr; i++)
		ck_assert_int_lt(out[i - 1], out[i]);
	ck_assert_uint_eq(left.threads, 74);
	ck_assert_uint_eq(left.busy, 0);
	ck_assert_int_eq(left.pid, 100);
	ck_assert_uint_eq(left.pid_threads, 74);
}
END_TEST

/*
 * Nobody busy: a thread of each process before a second of any, so a
 * service that has not waited yet is in beside a crowd of another's.
 */
START_TEST(idle_threads_take_turns_by_process)
{
	struct pyfilter_thread t[300];
	struct pyfilter_left left;
	pid_t out[128];
	size_t nr;

	for (int i = 0; i < 297; i++)
		t[i] = (struct pyfilter_thread){ .pid = 100, .tid = 100 + i };
	t[297] = (struct pyfilter_thread){ .pid = 7000, .tid = 7000 };
	t[298] = (struct pyfilter_thread){ .pid = 8000, .tid = 8000 };
	t[299] = (struct pyfilter_thread){ .pid = 8000, .tid = 8001 };
	nr = pyfilter__choose(t, 300, NOW, BUSY, out, 128, &left);
	ck_assert_uint_eq(nr, 128);
	ck_assert(has(out, nr, 7000));
	ck_assert(has(out, nr, 8000));
	ck_assert(has(out, nr, 8001));
	ck_assert_int_eq(left.pid, 100);
	ck_assert_uint_eq(left.pid_threads, 172);
}
END_TEST

/*
 * A switch-out older than busy_ns is idle again: the threads that waited
 * lately win over one that waited long ago, whatever the tids.
 */
START_TEST(busy_means_lately)
{
	struct pyfilter_thread t[4] = {
		{ .pid = 1, .tid = 1, .last = NOW - BUSY - 1 },
		{ .pid = 1, .tid = 2, .last = NOW - BUSY },
		{ .pid = 1, .tid = 3 },
		{ .pid = 1, .tid = 4, .last = NOW },
	};
	struct pyfilter_left left;
	pid_t out[2];

	ck_assert_uint_eq(pyfilter__choose(t, 4, NOW, BUSY, out, 2, &left), 2);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[1], 4);
	ck_assert_uint_eq(left.threads, 2);
	ck_assert_uint_eq(left.busy, 0);
}
END_TEST

Suite *pyfilter_suite(void)
{
	Suite *s = suite_create("pyfilter");
	TCase *tc = tcase_create("choose");

	tcase_add_test(tc, all_fit);
	tcase_add_test(tc, a_busy_thread_beats_a_crowd_of_idle_ones_with_lower_tids);
	tcase_add_test(tc, idle_threads_take_turns_by_process);
	tcase_add_test(tc, busy_means_lately);
	suite_add_tcase(s, tc);
	return s;
}
