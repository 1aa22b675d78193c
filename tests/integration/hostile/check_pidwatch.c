// SPDX-License-Identifier: GPL-2.0
/*
 * The pid watch (backend-perfring/pidwatch.h) against the real kernel: a
 * child's exit is known the moment after it, dated on CLOCK_MONOTONIC,
 * and nothing is said of a task that did not exit.
 */
#include <sys/wait.h>
#include <unistd.h>

#include "backend-perfring/pidwatch.h"
#include "core/lib/clock.h"
#include "tests/support/tests.h"

START_TEST(a_childs_exit_is_known_at_once)
{
	struct pid_watch *w = NULL;
	struct pid_watch_stats st;
	struct errmsg why = { 0 };
	uint64_t before, forked, after;
	int err = pid_watch__open(&w, &why);
	pid_t child;

	ck_assert_msg(err == 0, "%s", errmsg__reason(&why, err));
	before = (uint64_t)mono_ns();
	child = fork();
	if (child == 0) {
		usleep(20000);
		_exit(0);
	}
	ck_assert_int_gt(child, 0);
	forked = (uint64_t)mono_ns();
	/* Alive (its fork is not an exit). */
	ck_assert(!pid_watch__handover(w, child, before, forked));
	ck_assert_int_eq(waitpid(child, NULL, 0), child);
	after = (uint64_t)mono_ns();
	/* Exited in (forked, after]: known without any drain, before waitpid returned. */
	ck_assert(pid_watch__handover(w, child, forked, after));
	/* Nothing of it before its fork, nor of ourselves meanwhile. */
	ck_assert(!pid_watch__handover(w, child, 0, before));
	ck_assert(!pid_watch__handover(w, getpid(), before, after));
	pid_watch__stats(w, &st);
	ck_assert_uint_ge(st.records, 1);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_ge(st.answers, 4);
	ck_assert_uint_eq(st.taken, 1);
	pid_watch__close(w);
}
END_TEST

Suite *pidwatch_suite(void)
{
	Suite *s = suite_create("pidwatch");
	TCase *tc = tcase_create("kernel");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_add_test(tc, a_childs_exit_is_known_at_once);
	suite_add_tcase(s, tc);
	return s;
}
