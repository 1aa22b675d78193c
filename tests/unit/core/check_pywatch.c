// SPDX-License-Identifier: GPL-2.0
/*
 * The list of processes that mapped an interpreter's file
 * (app/run/python_watch.c): each looked at until found or its time is up,
 * a pid once however often it maps, and a full list counts what it drops.
 */
#include "app/run/python_watch.h"
#include "tests/support/tests.h"

/* found() of the sweeps below: pids in ctx's set are found; each call counted. */
struct looks {
	pid_t found[4];
	unsigned int calls;
};

static bool is_found(void *ctx, pid_t pid)
{
	struct looks *l = ctx;

	l->calls++;
	for (size_t i = 0; i < 4; i++)
		if (l->found[i] == pid)
			return true;
	return false;
}

START_TEST(a_watched_process_leaves_when_found_or_when_its_time_is_up)
{
	static struct python_watch w;
	struct looks l = { .calls = 0 };

	python_watch__add(&w, 100, 0);
	python_watch__add(&w, 200, 0);
	/* Mapped again (libpython after python3.12): one entry, its time starting over. */
	python_watch__add(&w, 200, 1000);
	ck_assert_uint_eq(w.nr, 2);
	ck_assert(python_watch__busy(&w));
	python_watch__sweep(&w, 10, is_found, &l);
	ck_assert_uint_eq(l.calls, 2);
	ck_assert_uint_eq(w.nr, 2);
	l.found[0] = 100;
	python_watch__sweep(&w, 20, is_found, &l);
	ck_assert_uint_eq(w.nr, 1);
	ck_assert_int_eq(w.items[0].pid, 200);
	/* 200's time runs from its second mapping. */
	python_watch__sweep(&w, PYTHON_WATCH_MS, is_found, &l);
	ck_assert_uint_eq(w.nr, 1);
	python_watch__sweep(&w, 1000 + PYTHON_WATCH_MS, is_found, &l);
	ck_assert_uint_eq(w.nr, 0);
	ck_assert(!python_watch__busy(&w));
	ck_assert_uint_eq(w.dropped, 0);
}
END_TEST

START_TEST(a_full_watch_list_counts_what_it_drops)
{
	static struct python_watch w;
	struct looks l = { .calls = 0 };

	for (pid_t pid = 1; pid <= PYTHON_WATCH_MAX + 3; pid++)
		python_watch__add(&w, pid, 0);
	ck_assert_uint_eq(w.nr, PYTHON_WATCH_MAX);
	ck_assert_uint_eq(w.dropped, 3);
	/* One found: room for one more, and the others kept in their order. */
	l.found[0] = 5;
	python_watch__sweep(&w, 1, is_found, &l);
	ck_assert_uint_eq(w.nr, PYTHON_WATCH_MAX - 1);
	ck_assert_int_eq(w.items[4].pid, 6);
	python_watch__add(&w, 1000, 1);
	ck_assert_uint_eq(w.nr, PYTHON_WATCH_MAX);
	ck_assert_uint_eq(w.dropped, 3);
}
END_TEST

Suite *pywatch_suite(void)
{
	Suite *s = suite_create("pywatch");
	TCase *tc = tcase_create("watch");

	tcase_add_test(tc, a_watched_process_leaves_when_found_or_when_its_time_is_up);
	tcase_add_test(tc, a_full_watch_list_counts_what_it_drops);
	suite_add_tcase(s, tc);
	return s;
}
