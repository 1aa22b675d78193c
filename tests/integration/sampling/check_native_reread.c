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

/* What a compile's hold saw: tgid's window in native_procs when told of it, and after. */
struct hold_seen {
	int fd;
	__u32 tgid;
	unsigned int begins, ends;
	uint64_t until, held, after, begin_ns, total_ns;
};

static uint64_t window_of(int fd, __u32 tgid)
{
	struct native_proc val;

	ck_assert_int_eq(bpf_map_lookup_elem(fd, &tgid, &val), 0);
	return val.copies_until_ns;
}

static void seen_hold(void *ctx, uint64_t until_ns)
{
	struct hold_seen *h = ctx;
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	if (until_ns) {
		h->begins++;
		h->until = until_ns;
		h->held = window_of(h->fd, h->tgid);
		h->begin_ns = (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
	} else {
		h->ends++;
		h->after = window_of(h->fd, h->tgid);
		h->total_ns += (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec - h->begin_ns;
	}
}

/*
 * A table's compile drains nothing: a process's window of stack copies
 * still open (a library mapped since its last read) is held NATIVE_COMPILE_
 * HOLD_NS ahead while another binary's table compiles, and given back after
 * it longer by the compile's time; the caller is told before and after,
 * for the run's lease.
 */
START_TEST(a_compile_holds_the_copies_windows)
{
	struct native_maps_fds fds;
	struct native_store *s;
	struct hold_seen h = { 0 };
	uint64_t before;
	pid_t a, b;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, NULL, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ (char *)workload("nofp"), "chain", "30", NULL }, "/nofp");
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	/* Read for the first time: its window is open for NATIVE_LEAF_COPIES_NS. */
	before = window_of(fds.procs, (__u32)a);
	ck_assert_uint_gt(before, 0);

	h.fd = fds.procs;
	h.tgid = (__u32)a;
	native_store__on_compile(s, seen_hold, &h);
	/* sleep's executable is a file nofp does not map: its table compiles now. */
	b = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	ck_assert_int_eq(native_store__add_process(s, b), 0);
	fprintf(stderr, "native_reread: %u compiles held, %.2f ms in all\n", h.begins,
		h.total_ns / 1e6);
	ck_assert_uint_ge(h.begins, 1);
	ck_assert_uint_eq(h.ends, h.begins);
	/* Held over the compile: as far ahead as the caller's lease. */
	ck_assert_uint_eq(h.held, h.until);
	ck_assert_uint_ge(h.until, h.begin_ns + NATIVE_COMPILE_HOLD_NS - 1000000000ull);
	/* After: as long as it had, plus the compiles' time (a's window still open then). */
	ck_assert_uint_gt(h.after, before);
	ck_assert_uint_le(h.after - before, h.total_ns + h.begins * 1000000ull);
	ck_assert_uint_eq(window_of(fds.procs, (__u32)a), h.after);
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
