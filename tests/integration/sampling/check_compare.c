// SPDX-License-Identifier: GPL-2.0
/*
 * The two backends at the same time on the same running workload (two
 * profile processes at once): the same stacks above 1% of samples, each
 * stack's share within 2 percentage points. Then backend choice: auto picks
 * bpf here and perf where a seccomp filter refuses bpf(); a forced backend
 * that cannot run exits 1 with the reason. Then the in-kernel map limits.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "backend-bpf/stacks.h"
#include "bpf/profile_maps.h"
#include "tests/support/tests.h"

struct folded {
	char **stacks;
	uint64_t *counts;
	size_t n;
	uint64_t total;
};

/*
 * Two profilers at once see each other: a sample that lands while the other
 * profiler's timer interrupt is being handled is the other's overhead, not
 * the workload's, and the two handlers differ in cost (the perf backend
 * copies a callchain, the bpf program counts). So do system-wide samples of
 * the profilers' own processes: each sees the other's start, never its own,
 * and the bpf backend's start (preallocating its stack and count maps, about
 * 100 ms of system time) falls in the perf backend's run, which starts
 * sampling sooner. Those samples are left out of the comparison.
 */
static bool observer_effect(const char *stack)
{
	return strstr(stack, "apic_timer_interrupt") != NULL || !strcmp(stack, "profile") ||
	       !strncmp(stack, "profile;", 8);
}

static void parse_folded(const char *out, struct folded *f)
{
	char *copy = strdup(out), *line, *save = NULL;

	memset(f, 0, sizeof(*f));
	f->stacks = calloc(strlen(out) / 2 + 1, sizeof(*f->stacks));
	f->counts = calloc(strlen(out) / 2 + 1, sizeof(*f->counts));
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' ');

		if (!sp)
			continue;
		*sp = '\0';
		if (observer_effect(line))
			continue;
		f->stacks[f->n] = strdup(line);
		f->counts[f->n] = strtoull(sp + 1, NULL, 10);
		f->total += f->counts[f->n++];
	}
	free(copy);
}

static void free_folded(struct folded *f)
{
	for (size_t i = 0; i < f->n; i++)
		free(f->stacks[i]);
	free(f->stacks);
	free(f->counts);
}

static double share_of(const struct folded *f, const char *stack)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->stacks[i], stack))
			return 100.0 * f->counts[i] / f->total;
	return -1;
}

/* Appends f's four biggest stacks with their shares to why (for a failure). */
static void append_top(const struct folded *f, const char *name, char *why, size_t len)
{
	bool shown[4096] = { false };
	size_t used = strlen(why);

	used += snprintf(why + used, used < len ? len - used : 0, "; %s's top (of %lu):", name,
			 (unsigned long)f->total);
	for (int k = 0; k < 4 && used < len; k++) {
		size_t best = f->n;

		for (size_t i = 0; i < f->n && i < 4096; i++)
			if (!shown[i] && (best == f->n || f->counts[i] > f->counts[best]))
				best = i;
		if (best == f->n)
			break;
		shown[best] = true;
		used += snprintf(why + used, len - used, " '%.120s' %.1f%%", f->stacks[best],
				 100.0 * f->counts[best] / f->total);
	}
}

/*
 * Every stack above 1% in a is in b, with a share within 2 points. Returns
 * false with the first disagreement in why, and both sides' biggest stacks.
 */
static bool agree(const struct folded *a, const struct folded *b, const char *an,
		  const char *bn, char *why, size_t len)
{
	size_t checked = 0;

	for (size_t i = 0; i < a->n; i++) {
		double sa = 100.0 * a->counts[i] / a->total, sb;

		if (sa <= 1.0)
			continue;
		sb = share_of(b, a->stacks[i]);
		if (sb < 0 || fabs(sa - sb) > 2.0) {
			snprintf(why, len, "'%.200s': %s %.1f%%, %s %.1f%%", a->stacks[i], an, sa,
				 bn, sb < 0 ? 0 : sb);
			append_top(a, an, why, len);
			append_top(b, bn, why, len);
			return false;
		}
		checked++;
	}
	if (!checked)
		snprintf(why, len, "no stack above 1%% in %s", an);
	return checked > 0;
}

/*
 * Both backends at once with the same options; compares their folded
 * outputs. Shares are estimates from a few thousand samples, and the two
 * profilers disturb each other (each one's interrupt work lands in the
 * workload the other samples), so one run in several differs by a little
 * over 2 points: a case passes when one of five runs agrees. A real
 * difference fails all five.
 */
static bool run_both_once(const char *opts, char *why, size_t len);

static void run_both(const char *opts)
{
	char why[2048] = "";

	for (int attempt = 0; attempt < 5; attempt++)
		if (run_both_once(opts, why, sizeof(why)))
			return;
	ck_abort_msg("backends disagree 5 times; last: %s", why);
}

static bool run_both_once(const char *opts, char *why, size_t len)
{
	bool ok;
	char cmd[2048], bpf_out[] = "/tmp/profile-cmp-bpf-XXXXXX", perf_out[] = "/tmp/profile-cmp-perf-XXXXXX";
	struct run_result r, rb, rp;
	struct folded fb, fp;

	close(mkstemp(bpf_out));
	close(mkstemp(perf_out));
	snprintf(cmd, sizeof(cmd),
		 "%s --backend bpf -f %s > %s & %s --backend perf -f %s > %s; wait $! ; wait",
		 profile_bin(), opts, bpf_out, profile_bin(), opts, perf_out);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	run_cmd((char *[]){ "/bin/cat", bpf_out, NULL }, 10, 0, &rb);
	run_cmd((char *[]){ "/bin/cat", perf_out, NULL }, 10, 0, &rp);
	unlink(bpf_out);
	unlink(perf_out);
	parse_folded(rb.out, &fb);
	parse_folded(rp.out, &fp);
	ck_assert_msg(fb.total > 500 && fp.total > 500, "few samples: bpf %lu, perf %lu",
		      (unsigned long)fb.total, (unsigned long)fp.total);
	ok = agree(&fb, &fp, "bpf", "perf", why, len) && agree(&fp, &fb, "perf", "bpf", why, len);
	free_folded(&fb);
	free_folded(&fp);
	run_result_free(&r);
	run_result_free(&rb);
	run_result_free(&rp);
	return ok;
}

static struct bg_proc bg;
static char bg_pid[32], bg_tid[32];

static void start_ratio(void)
{
	bg_start(&bg, (char *[]){ (char *)workload("ratio31"), "40", NULL });
	ck_assert_int_eq(sscanf(bg.first_line, "pid=%31[0-9] hot_tid=%31[0-9]", bg_pid, bg_tid), 2);
}

/* dd, as in the issue: almost all of its time is in read and write system calls. */
static void start_dd(void)
{
	bg_start(&bg, (char *[]){ "/bin/sh", "-c",
				  "echo pid=$$; exec dd if=/dev/zero of=/dev/null bs=64k", NULL });
	ck_assert_int_eq(sscanf(bg.first_line, "pid=%31[0-9]", bg_pid), 1);
	usleep(100000);
}

/* nofp, built without frame pointers, for --unwind dwarf. */
static void start_nofp(void)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "echo pid=$$; exec %s chain 40", workload("nofp"));
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", cmd, NULL });
	ck_assert_int_eq(sscanf(bg.first_line, "pid=%31[0-9]", bg_pid), 1);
	usleep(100000);
}

/*
 * The suites before this one write files (perf.data, debug files): let their
 * writeback finish first, or it takes CPU from the workload unevenly.
 */
static void settle(void)
{
	ck_assert_int_eq(system("sync"), 0);
	sleep(2);
}

static void stop_bg(void)
{
	bg_stop(&bg);
}

START_TEST(same_stacks_for_a_process)
{
	char opts[128];

	start_ratio();
	snprintf(opts, sizeof(opts), "-F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

START_TEST(same_stacks_for_a_thread)
{
	char opts[128];

	start_ratio();
	snprintf(opts, sizeof(opts), "-F 2999 -L %s 3", bg_tid);
	run_both(opts);
}
END_TEST

START_TEST(same_kernel_stacks_for_dd)
{
	char opts[128];

	start_dd();
	snprintf(opts, sizeof(opts), "-F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

START_TEST(same_user_only_stacks)
{
	char opts[128];

	start_ratio();
	snprintf(opts, sizeof(opts), "-U -F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

START_TEST(same_kernel_only_stacks_for_dd)
{
	char opts[128];

	start_dd();
	snprintf(opts, sizeof(opts), "-K -F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

START_TEST(same_stacks_with_idle)
{
	start_ratio();
	run_both("-I -K -F 2999 3");
}
END_TEST

START_TEST(same_dwarf_stacks_for_code_without_frame_pointers)
{
	char opts[128];

	start_nofp();
	snprintf(opts, sizeof(opts), "--unwind dwarf -F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

/* dd's samples are mostly in system calls: user registers come from the task, not the sample. */
START_TEST(same_dwarf_stacks_for_dd)
{
	char opts[128];

	start_dd();
	snprintf(opts, sizeof(opts), "--unwind dwarf -F 2999 -p %s 3", bg_pid);
	run_both(opts);
}
END_TEST

START_TEST(auto_picks_bpf_here)
{
	struct run_result r;

	run_cmd((char *[]){ (char *)profile_bin(), "-v", "-f", "--", "/bin/true", NULL }, 20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "backend bpf: usable; chosen"));
	run_result_free(&r);
}
END_TEST

START_TEST(auto_picks_perf_when_bpf_is_refused)
{
	struct run_result r;

	run_cmd((char *[]){ (char *)workload("deny_syscall"), "bpf", (char *)profile_bin(), "-v",
			    "-f", "--", (char *)workload("ratio31"), "1", NULL },
		20, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "backend bpf: not used: bpf() refused"));
	ck_assert_ptr_nonnull(strstr(r.err, "backend perf: usable; chosen"));
	ck_assert_uint_gt(folded_count(r.out, "hot_loop"), 20);
	run_result_free(&r);
}
END_TEST

/*
 * Ctrl-C during a BPF load that takes many seconds in the verifier (a seam):
 * the verifier gives up with EAGAIN when a signal is pending, and libbpf
 * used to start the load again until it ran to its end. It ends at once.
 */
START_TEST(sigint_cuts_a_slow_bpf_load_short)
{
	struct timespec t0, t1;
	struct run_result r;
	double s;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_cmd((char *[]){ "/usr/bin/env", "PROFILE_TEST_SLOW_BPF_LOAD=1", (char *)seams_bin(),
			    "--backend", "bpf", "-F", "99", "-f", "5", NULL },
		60, 0.5, &r);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
	ck_assert_msg(s < 3, "ended %.1f s after the start, SIGINT at 0.5 s: %.300s", s, r.err);
	ck_assert_msg(strstr(r.err, "interrupted") != NULL, "stderr: %.300s", r.err);
	run_result_free(&r);
}
END_TEST

START_TEST(forced_backend_that_cannot_run_exits_1)
{
	struct run_result r;

	run_cmd((char *[]){ (char *)workload("deny_syscall"), "bpf", (char *)profile_bin(),
			    "--backend", "bpf", "-f", "1", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "profile: backend bpf cannot run here: bpf() refused"));
	run_result_free(&r);

	run_cmd((char *[]){ (char *)workload("deny_syscall"), "perf_event_open",
			    (char *)profile_bin(), "--backend", "perf", "-f", "1", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_str_eq(r.out, "");
	ck_assert_ptr_nonnull(strstr(r.err, "backend perf cannot run here: perf_event_open"));
	run_result_free(&r);
}
END_TEST

START_TEST(tiny_stack_map_reports_missed_stacks)
{
	struct run_result r;

	run_cmd((char *[]){ (char *)profile_bin(), "--backend", "bpf", "--stack-storage-size",
			    "1", "-F", "999", "-f", "--", (char *)workload("ratio31"), "1", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.out, "[Missed "));
	ck_assert_ptr_nonnull(strstr(r.err, "stack traces could not be displayed. Consider "
					    "increasing --stack-storage-size."));
	run_result_free(&r);
}
END_TEST

START_TEST(full_count_map_warns_and_half_full_map_drains)
{
	struct run_result r;
	unsigned long drains = 0, taken_ul = 0;
	const char *p;
	uint64_t hot, warm, taken;

	/* One key fits: every new stack in between drains is dropped, and said so. */
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", "bpf", "--hash-storage-size",
			    "1", "-F", "999", "-f", "--", (char *)workload("ratio31"), "1", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_ptr_nonnull(strstr(r.err, "WARNING: hash table full. Consider increasing "
					    "--hash-storage-size."));
	ck_assert_ptr_nonnull(strstr(r.err, "samples lost"));
	run_result_free(&r);

	/* Room for the stacks, but small: drained mid-run (every second), and nothing is lost. */
	run_cmd((char *[]){ (char *)profile_bin(), "-v", "--backend", "bpf",
			    "--hash-storage-size", "256", "-F", "999", "-f", "--",
			    (char *)workload("ratio31"), "2", NULL },
		20, 0, &r);
	ck_assert_int_eq(r.exit_code, 0);
	/* "profile: bpf: N samples, M mid-run drains" */
	p = strstr(r.err, " mid-run drains");
	ck_assert_ptr_nonnull(p);
	while (p > r.err && p[-1] != '\n')
		p--;
	ck_assert(sscanf(p, "profile: bpf: %lu samples, %lu mid-run drains", &taken_ul, &drains) == 2);
	taken = taken_ul;
	ck_assert_msg(drains > 0, "no mid-run drain: %.300s", r.err);
	ck_assert_ptr_null(strstr(r.err, "hash table full"));
	/* Every sample the program took is in the report: the drains lost none. */
	ck_assert_uint_gt(taken, 1000);
	ck_assert_uint_eq(folded_total(r.out, NULL), taken);
	hot = folded_count(r.out, "hot_loop");
	warm = folded_count(r.out, "warm_loop");
	ck_assert_msg(hot > warm && warm > 0, "hot %lu warm %lu", (unsigned long)hot,
		      (unsigned long)warm);
	run_result_free(&r);
}
END_TEST

/*
 * The counting program's own user walk (issue 36): chosen here (6.18), and
 * the report is the perf backend's (the tests above compare them).
 */
START_TEST(bpf_walks_user_stacks_itself)
{
	struct run_result r;
	char pid[32];

	start_ratio();
	snprintf(pid, sizeof(pid), "%s", bg_pid);
	/* The frame-pointer walk: the default may be auto, which unwinds by tables. */
	run_cmd(((char *[]){(char *)profile_bin(), "--backend", "bpf", "--unwind", "fp", "-v", "-f",
			    "-F", "999", "-p", pid, "1", NULL}),
		30, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %.300s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "user stacks walked by the program (frame pointers"),
		      "%.600s", r.err);
	ck_assert_msg(folded_count(r.out, "hot_loop") > 100, "%.300s", r.out);
	run_result_free(&r);
}
END_TEST

/* A walked stack as the table holds it, and as the drain reads it back. */
static void put_walked(int fd, __u32 key, __u32 depth)
{
	struct profile_ustack v = { .depth = depth };

	for (unsigned int i = 0; i < PROFILE_MAX_STACK_DEPTH; i++)
		v.ips[i] = 0x1000 + i;
	ck_assert_int_eq(bpf_map_update_elem(fd, &key, &v, BPF_ANY), 0);
}

/*
 * The drain takes a walked stack at the depth the program wrote, never past
 * the map's 127 frames whatever depth says, and empties the table with the
 * generation.
 */
START_TEST(walked_stacks_are_read_at_their_depth_and_cleared)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "ustacks", sizeof(__u32),
				sizeof(struct profile_ustack), 8, NULL);
	int stacks = bpf_map_create(BPF_MAP_TYPE_STACK_TRACE, "stacks", sizeof(__u32),
				    PROFILE_MAX_STACK_DEPTH * sizeof(__u64), 8, NULL);
	struct stack_cache sc;
	const uint64_t *ips;
	__u32 key = 0, next;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(stacks, 0);
	stack_cache__init(&sc, stacks);
	stack_cache__set_walked(&sc, fd);
	put_walked(fd, 3, 2);
	put_walked(fd, 4, 1000);	/* a depth no walk writes: held to the map's */
	put_walked(fd, 5, 7);		/* never read: the clear finds it */
	ips = stack_cache__get(&sc, 3 | PROFILE_STACK_WALKED);
	ck_assert_ptr_nonnull(ips);
	ck_assert_uint_eq(ips[0], 0x1000);
	ck_assert_uint_eq(ips[1], 0x1001);
	ck_assert_uint_eq(ips[2], 0);
	ips = stack_cache__get(&sc, 4 | PROFILE_STACK_WALKED);
	ck_assert_ptr_nonnull(ips);
	ck_assert_uint_eq(ips[PROFILE_MAX_STACK_DEPTH - 1], 0x1000 + PROFILE_MAX_STACK_DEPTH - 1);
	/* Not in the table: counted stale, as for the stack maps. */
	ck_assert_ptr_null(stack_cache__get(&sc, 6 | PROFILE_STACK_WALKED));
	ck_assert_uint_eq(sc.stale, 1);
	ck_assert_uint_eq(sc.walked, 2);
	ck_assert_int_eq(stack_cache__clear(&sc), 1);
	ck_assert_int_ne(bpf_map_get_next_key(fd, &key, &next), 0);
	stack_cache__fini(&sc);
	close(fd);
	close(stacks);
}
END_TEST

Suite *compare_suite(void)
{
	Suite *s = suite_create("compare");
	TCase *tc = tcase_create("both-backends");
	TCase *tch = tcase_create("choice");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, settle, NULL);
	tcase_add_checked_fixture(tc, NULL, stop_bg);
	tcase_add_test(tc, same_stacks_for_a_process);
	tcase_add_test(tc, same_stacks_for_a_thread);
	tcase_add_test(tc, same_kernel_stacks_for_dd);
	tcase_add_test(tc, same_user_only_stacks);
	tcase_add_test(tc, same_kernel_only_stacks_for_dd);
	tcase_add_test(tc, same_stacks_with_idle);
	tcase_add_test(tc, same_dwarf_stacks_for_code_without_frame_pointers);
	tcase_add_test(tc, same_dwarf_stacks_for_dd);
	tcase_add_test(tc, bpf_walks_user_stacks_itself);
	tcase_add_test(tc, walked_stacks_are_read_at_their_depth_and_cleared);
	suite_add_tcase(s, tc);

	tcase_set_tags(tch, TAG_ROOT);
	tcase_set_timeout(tch, 60);
	tcase_add_test(tch, auto_picks_bpf_here);
	tcase_add_test(tch, auto_picks_perf_when_bpf_is_refused);
	tcase_add_test(tch, forced_backend_that_cannot_run_exits_1);
	tcase_add_test(tch, sigint_cuts_a_slow_bpf_load_short);
	tcase_add_test(tch, tiny_stack_map_reports_missed_stacks);
	tcase_add_test(tch, full_count_map_warns_and_half_full_map_drains);
	suite_add_tcase(s, tch);
	return s;
}
