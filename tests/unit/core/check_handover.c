// SPDX-License-Identifier: GPL-2.0
/*
 * proctrack__held_by: a handle opened under /proc/PID at a time is the
 * image's process only if neither the records applied nor the watcher's
 * say the pid changed hands between the image's start and then (issue 46).
 */
#include <stdlib.h>

#include "core/proc/proctrack.h"
#include "tests/support/tests.h"

/* A watcher that knows one event: task `tid` exited at `time`. */
struct fake_watch {
	pid_t tid;
	uint64_t time;
	unsigned int asked;
	uint64_t after, until;
};

static bool fake_handover(void *ctx, pid_t tid, uint64_t after, uint64_t until)
{
	struct fake_watch *w = ctx;

	w->asked++;
	w->after = after;
	w->until = until;
	return tid == w->tid && w->time > after && w->time <= until;
}

START_TEST(a_handle_opened_after_the_main_thread_exited_is_refused)
{
	struct proctrack *pt = proctrack__new();
	struct fake_watch w = { .tid = 4242, .time = 5000 };
	struct proctrack_counts c;
	struct addr_space *as;

	ck_assert_ptr_nonnull(pt);
	proctrack__set_handover(pt, fake_handover, &w);
	/* The image began (fork record) at 1000; the watcher saw its pid's exit at 5000. */
	ck_assert_int_eq(proctrack__fork(pt, 4242, 1, 1000), 0);
	as = proctrack__addr_space(pt, 4242);
	ck_assert_ptr_nonnull(as);
	ck_assert(proctrack__held_by(pt, as, 4000));	/* opened before the exit */
	ck_assert_uint_eq(w.after, 1000);
	ck_assert_uint_eq(w.until, 4000);
	ck_assert(!proctrack__held_by(pt, as, 6000));	/* after it: another's, maybe */
	/* Unknown time (records not on CLOCK_MONOTONIC): the watcher cannot be asked. */
	w.asked = 0;
	ck_assert(proctrack__held_by(pt, as, 0));
	ck_assert_uint_eq(w.asked, 0);
	proctrack__counts(pt, &c);
	ck_assert_uint_eq(c.handovers_refused, 1);
	proctrack__free(pt);
}
END_TEST

START_TEST(an_image_known_to_have_ended_is_refused_without_asking)
{
	struct proctrack *pt = proctrack__new();
	struct fake_watch w = { .tid = 0 };
	struct addr_space *as;

	ck_assert_ptr_nonnull(pt);
	proctrack__set_handover(pt, fake_handover, &w);
	ck_assert_int_eq(proctrack__fork(pt, 777, 1, 1000), 0);
	as = proctrack__addr_space(pt, 777);
	ck_assert_int_eq(proctrack__exit(pt, 777, 777, 3000), 0);
	/* Its main thread exited: nothing opened under /proc/777 is its own any more. */
	ck_assert(!proctrack__held_by(pt, as, 2000));
	ck_assert(!proctrack__held_by(pt, as, 0));
	ck_assert_uint_eq(w.asked, 0);
	/* An exec ends the image too: the handle would read the new program. */
	ck_assert_int_eq(proctrack__fork(pt, 778, 1, 1000), 0);
	as = proctrack__addr_space(pt, 778);
	ck_assert_int_eq(proctrack__exec(pt, 778, "next", 2000), 0);
	ck_assert(!proctrack__held_by(pt, as, 2500));
	ck_assert(proctrack__held_by(pt, as, 1500));
	ck_assert(proctrack__addr_space(pt, 778)->by_exec);
	ck_assert(!as->by_exec);
	proctrack__free(pt);
}
END_TEST

Suite *handover_suite(void)
{
	Suite *s = suite_create("handover");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, a_handle_opened_after_the_main_thread_exited_is_refused);
	tcase_add_test(tc, an_image_known_to_have_ended_is_refused_without_asking);
	suite_add_tcase(s, tc);
	return s;
}
