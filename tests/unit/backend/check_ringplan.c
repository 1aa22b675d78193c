// SPDX-License-Identifier: GPL-2.0
/* Ring sizes planned within the locked memory perf_mmap() allows. */
#include <errno.h>
#include <string.h>

#include "backend-perfring/ringplan.h"
#include "tests/support/tests.h"

#define PAGE 4096

static uint64_t cost(const struct ring_need *n, int nr)
{
	uint64_t c = 0;

	for (int i = 0; i < nr; i++)
		c += (uint64_t)n[i].nr_rings * (n[i].pages + 1);
	return c;
}

/* --wall on 2 CPUs: cpu-clock samples and switch records, frame pointers. */
static void wall_needs(struct ring_need n[2], uint64_t stack_bytes)
{
	memset(n, 0, 2 * sizeof(*n));
	n[0] = (struct ring_need){ .what = "perf", .nr_rings = 2, .records_per_s = 99,
				   .record_bytes = 600 + stack_bytes,
				   .max_record_bytes = 2100 + stack_bytes };
	n[1] = (struct ring_need){ .what = "off-CPU", .nr_rings = 2, .records_per_s = 2000,
				   .record_bytes = 800 + stack_bytes,
				   .max_record_bytes = 2300 + stack_bytes };
}

START_TEST(rhel7_defaults_hold_both_sets)
{
	struct ring_budget b;
	struct ring_need n[2];
	char why[512] = "";

	/* perf_event_mlock_kb 516 per CPU and a 64 KiB ulimit -l: 274 pages. */
	ring_budget__set(&b, 516, 2, 64 << 10, PAGE);
	ck_assert_uint_eq(b.pages, 274);
	for (int dwarf = 0; dwarf < 2; dwarf++) {
		wall_needs(n, dwarf ? 16384 : 0);
		ck_assert_int_eq(ring_plan(n, 2, &b, PAGE, why, sizeof(why)), 0);
		ck_assert_uint_le(cost(n, 2), b.pages);
		for (int i = 0; i < 2; i++) {
			ck_assert_uint_ge(n[i].pages, n[i].min_pages);
			ck_assert_uint_le(n[i].pages, n[i].want_pages);
			/* Powers of two, as perf_mmap() wants. */
			ck_assert_uint_eq(n[i].pages & (n[i].pages - 1), 0);
			/* Four of the largest records fit. */
			ck_assert_uint_ge((uint64_t)n[i].pages * PAGE, 4 * n[i].max_record_bytes);
		}
	}
	/* Shared evenly: 2 x 129 + 2 x 65 would not fit. */
	wall_needs(n, 0);
	ring_plan(n, 2, &b, PAGE, why, sizeof(why));
	ck_assert_uint_eq(n[0].pages, 64);
	ck_assert_uint_eq(n[1].pages, 64);
}
END_TEST

START_TEST(what_cannot_fit_is_refused_with_the_numbers)
{
	struct ring_budget b;
	struct ring_need n[2];
	char why[512] = "";

	ring_budget__set(&b, 8, 2, 0, PAGE);
	wall_needs(n, 0);
	ck_assert_int_eq(ring_plan(n, 2, &b, PAGE, why, sizeof(why)), -ENOMEM);
	ck_assert_msg(strstr(why, "the smallest rings need 144 KiB (perf: 2 x 36 KiB, off-CPU: "
				  "2 x 36 KiB), more than 16 KiB"), "%s", why);
	ck_assert_ptr_nonnull(strstr(why, "kernel.perf_event_mlock_kb 8 per CPU + ulimit -l 0 KiB"));
}
END_TEST

START_TEST(without_limits_the_rate_decides_up_to_a_cap)
{
	struct ring_budget b;
	struct ring_need n = { .what = "perf", .nr_rings = 2, .records_per_s = 999,
			       .record_bytes = 17000, .max_record_bytes = 19000 };
	char why[512] = "";

	ring_budget__set(&b, 516, 2, 8 << 20, PAGE);
	b.unlimited = true;
	b.unlimited_why = "root";
	ck_assert_int_eq(ring_plan(&n, 1, &b, PAGE, why, sizeof(why)), 0);
	/* 999 Hz x 17 KB x 250 ms is 4.2 MB: more than the cap of one ring. */
	ck_assert_uint_eq(n.pages, RING_PLAN_ROOT_MAX_PAGES);
	/* 99 Hz of frame-pointer samples: 15 KB in 250 ms, but never less than perf record's. */
	n = (struct ring_need){ .what = "perf", .nr_rings = 2, .records_per_s = 99,
				.record_bytes = 600, .max_record_bytes = 2100 };
	ck_assert_int_eq(ring_plan(&n, 1, &b, PAGE, why, sizeof(why)), 0);
	ck_assert_uint_eq(n.pages, RING_PLAN_WANT_PAGES);
}
END_TEST

START_TEST(many_cpus_share_the_root_total)
{
	struct ring_budget b;
	struct ring_need n = { .what = "perf", .nr_rings = 256, .records_per_s = 999,
			       .record_bytes = 17000, .max_record_bytes = 19000 };
	char why[512] = "";

	ring_budget__set(&b, 516, 256, 8 << 20, PAGE);
	b.unlimited = true;
	b.unlimited_why = "root";
	ck_assert_int_eq(ring_plan(&n, 1, &b, PAGE, why, sizeof(why)), 0);
	ck_assert_uint_le(cost(&n, 1), RING_PLAN_ROOT_TOTAL_PAGES);
	ck_assert_uint_eq(n.pages, 64);
}
END_TEST

START_TEST(reads_this_process_budget)
{
	struct ring_budget b;
	char line[512];

	ring_budget__read(&b, PAGE);
	ck_assert_uint_ge(b.online_cpus, 1);
	ring_budget__describe(&b, PAGE, line, sizeof(line));
	ck_assert(b.unlimited ? strstr(line, "no locked-memory limit") != NULL
			      : strstr(line, "kernel.perf_event_mlock_kb") != NULL);
}
END_TEST

Suite *ringplan_suite(void)
{
	Suite *s = suite_create("ringplan");
	TCase *tc = tcase_create("plan");

	tcase_add_test(tc, rhel7_defaults_hold_both_sets);
	tcase_add_test(tc, what_cannot_fit_is_refused_with_the_numbers);
	tcase_add_test(tc, without_limits_the_rate_decides_up_to_a_cap);
	tcase_add_test(tc, many_cpus_share_the_root_total);
	tcase_add_test(tc, reads_this_process_budget);
	suite_add_tcase(s, tc);
	return s;
}
