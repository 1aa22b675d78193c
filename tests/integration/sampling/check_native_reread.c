// SPDX-License-Identifier: GPL-2.0
/*
 * When the native store reads a process again (issue 45): a process the
 * program keeps noting (its walks end at code in no known mapping) is read
 * NATIVE_REREAD_EARLY_MS apart for its first NATIVE_REREAD_EARLY reads,
 * whatever a read costs: a process just started maps its libraries then,
 * and waiting NATIVE_REREAD_COST times a dear read (a second and more on a
 * loaded host, the kernel matrix's 6.1 row under TCG) or the 100 ms floor
 * left its first samples to frame pointers. After those, the floor and the
 * cost's wait hold. Root: bpf_map_create.
 */
#include <bpf/bpf.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/native_store.h"
#include "tests/support/native_read.h"
#include "tests/support/tests.h"

static double now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Note tgid as the program does and poll: 1 when the poll read it. */
static int note_and_poll(struct native_store *s, const struct native_maps_fds *fds, pid_t tgid)
{
	__u32 key = (__u32)tgid, one = 1;

	ck_assert_int_eq(bpf_map_update_elem(fds->unknown, &key, &one, BPF_ANY), 0);
	return native_store__poll_unknown(s);
}

START_TEST(early_reads_soon_then_the_cost)
{
	struct native_store_stats st;
	struct native_maps_fds fds;
	struct native_store *s;
	struct bg_proc many;
	double t0, first_ms;
	int reads;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, NULL, NULL);
	ck_assert_ptr_nonnull(s);
	/* Thousands of mappings, under the limit: tracked, and each read dear. */
	bg_start(&many, (char *[]){ (char *)workload("manymaps"), "12000", "30", NULL });
	ck_assert_str_eq(many.first_line, "ready");
	t0 = now_ms();
	ck_assert_int_eq(note_and_poll(s, &fds, many.pid), 1);
	first_ms = now_ms() - t0;
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 1);
	fprintf(stderr, "native_reread: manymaps 12000: first read in %.1f ms\n", first_ms);
	ck_assert_msg(first_ms * NATIVE_REREAD_COST > 2 * (NATIVE_REREAD_MS + 30),
		      "a read too cheap (%.1f ms) to tell the floor from the cost", first_ms);

	/* Its early reads: each noted again just past NATIVE_REREAD_EARLY_MS. */
	reads = 1;
	for (int i = 1; i < NATIVE_REREAD_EARLY; i++) {
		usleep((NATIVE_REREAD_EARLY_MS + 30) * 1000);
		reads += note_and_poll(s, &fds, many.pid);
	}
	fprintf(stderr, "native_reread: %d of %d early reads %d ms apart\n", reads,
		NATIVE_REREAD_EARLY, NATIVE_REREAD_EARLY_MS + 30);
	ck_assert_int_eq(reads, NATIVE_REREAD_EARLY);

	/* The next one waits for the cost: put off past the floor, counted. */
	native_store__stats(s, &st);
	usleep((NATIVE_REREAD_MS + 30) * 1000);
	ck_assert_int_eq(note_and_poll(s, &fds, many.pid), 0);
	{
		struct native_store_stats after;

		native_store__stats(s, &after);
		ck_assert_uint_eq(after.rate_limited, st.rate_limited + 1);
	}
	bg_stop(&many);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

static uint64_t window_of(int fd, __u32 tgid)
{
	struct native_proc val;

	ck_assert_int_eq(bpf_map_lookup_elem(fd, &tgid, &val), 0);
	return val.copies_until_ns;
}

static uint64_t mono_now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/*
 * A table's compile reads no process meanwhile: a process's window of
 * stack copies still open (a library mapped since its last read) comes
 * out of another binary's compile longer by the compile's time
 * (native_hold.c), not shortened by it as a clock that ran on.
 */
START_TEST(a_compile_holds_the_copies_windows)
{
	struct native_maps_fds fds;
	struct native_store_stats st;
	struct native_store *s;
	uint64_t before, after, t0, spent;
	unsigned int compiled;
	pid_t a, b;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, NULL, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ (char *)workload("nofp"), "chain", "30", NULL }, "/nofp");
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	/* Read for the first time: its window is open for NATIVE_LEAF_COPIES_NS. */
	before = window_of(fds.procs, (__u32)a);
	ck_assert_uint_gt(before, mono_now_ns());
	native_store__stats(s, &st);
	compiled = st.compiled;

	/* sleep's executable is a file nofp does not map: its table compiles now. */
	b = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	t0 = mono_now_ns();
	ck_assert_int_eq(native_store__add_process(s, b), 0);
	spent = mono_now_ns() - t0;
	native_store__stats(s, &st);
	ck_assert_uint_gt(st.compiled, compiled);
	after = window_of(fds.procs, (__u32)a);
	fprintf(stderr, "native_reread: %u compiles in a read of %.2f ms: the window %.2f ms longer\n",
		st.compiled - compiled, spent / 1e6, (after - before) / 1e6);
	/* Longer by the compiles' time: more than nothing, no more than the read took. */
	ck_assert_uint_gt(after, before);
	ck_assert_uint_le(after - before, spent);
	stop_child(b);
	stop_child(a);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

Suite *native_reread_suite(void)
{
	Suite *s = suite_create("native_reread");
	TCase *tc = tcase_create("reads");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, early_reads_soon_then_the_cost);
	tcase_add_test(tc, a_compile_holds_the_copies_windows);
	suite_add_tcase(s, tc);
	return s;
}
