// SPDX-License-Identifier: GPL-2.0
/*
 * Python functions' shares of the samples against the CPU time the program
 * measured itself spending in them (truth.py's "time" lines, each thread's
 * own CPU clock): within 2 points on the bpf backend, which reads the frames
 * at the sample, and 5 on the perf backend, which reads them from user
 * space right after the sample, while the program runs on (issue 35). shares.py: three functions at 5:3:2 in one thread,
 * 5 s at 1999 Hz (about 10,000 samples on a CPU of its own, a few thousand on a
 * busy host: at 499 Hz a third of a CPU gave 900 and two points were one
 * standard error); app.py: two threads, each parsing
 * in Python and compressing in zlib with the GIL released (parse against
 * compress_block), 4 s. A share is of the samples whose innermost Python
 * frame is one of the functions. On the default interpreter (3.12, else the
 * newest installed).
 *
 * Under load (issue 47): measured 2026-11-27 on machine c (2 CPUs, 6.18),
 * 8 runs of the suite each, worst points off, app.py / shares.py:
 *                                              bpf                 perf
 *   alone (other sessions' builds at times)    0.0-0.4 / 0.0-0.4   0.1-1.7 / 0.0-0.1
 *   beside the compare and offcpu_load suites  0.0-0.6 / 0.0-0.2   0.2-0.7 / 0.0-1.3
 *   same, and two CPU hogs (load 9-14)         0.1-0.7 / 0.0-0.4   0.0-0.8 / 0.0-0.2
 *   two hogs and a system-wide profile, perf
 *   backend, 4999 Hz, dwarf (load 13-68)       0.2-0.9 / 0.1-0.2   0.0-0.6 / 0.0-0.2
 * so the limits stand. What a load could do to the perf backend's shares
 * is delay its reads of the frames, and it did not here: 90% of the
 * samples read within 100 us, 99% within 200 us, all but at most 1% of
 * them by the reader thread (SCHED_FIFO as root), where a parse call of
 * app.py lasts about 0.8 ms. Reads made late on purpose (a scratch build
 * whose reader waited before each read): 0.7 ms, 90% of reads within 2 ms,
 * app.py 2.1 points off; 3 ms, the reader behind by seconds, 11.8. The one
 * failure seen (5.4 points, app.py, perf, 9,109 samples where a quiet run
 * took 13,500: stop 42) did not come back in these 32 perf runs; whether
 * its reads were late is not known. Each run's line (and a failure's -v)
 * now says how soon the frames were read.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/python/pyrun.h"

/* The seconds the truth file says fn took ("time<TAB>fn<TAB>seconds"); -1 if it does not. */
static double truth_seconds(const char *path, const char *fn)
{
	char line[256], name[64];
	FILE *f = fopen(path, "re");
	double s = -1, v;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "time\t%63s\t%lf", name, &v) == 2 && !strcmp(name, fn))
			s = v;
	if (f)
		fclose(f);
	return s;
}

/* The number that stands just before phrase in err (0 if none). */
static unsigned long long number_before(const char *err, const char *phrase)
{
	const char *p = strstr(err, phrase);

	if (!p)
		return 0;
	while (p > err && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return strtoull(p, NULL, 10);
}

/*
 * From -v of the perf backend, into why: how many samples' frames its
 * reader thread read (the others at the drain, later) and how soon after
 * their sample 90% of those reads came.
 */
static void frames_read(const char *err, char *why, size_t len)
{
	unsigned long long with = number_before(err, " samples with Python frames");
	unsigned long long early = number_before(err, " samples read right after they were taken");
	const char *p = strstr(err, "read by the reader thread: ");
	unsigned int p90;

	if (!p || !(p = strstr(p, "90% within ")))
		snprintf(why, len, "frames of %llu of %llu samples read by the reader thread", early,
			 with);
	else if (sscanf(p, "90%% within %u us", &p90) == 1)
		snprintf(why, len, "frames of %llu of %llu samples read by the reader thread, 90%% "
				   "of them within %u us", early, with, p90);
	else
		snprintf(why, len, "frames of %llu of %llu samples read by the reader thread, 90%% "
				   "of them within more than 100 ms", early, with);
}

/*
 * Profile workload (seconds s) with backend be and compare the shares of
 * fns (file their file) with the truth's; the numbers go to stderr.
 */
static void compare_shares(const char *be, const char *workload, const char *s,
			   const char *const *fns, size_t nr, const char *file)
{
	double limit = !strcmp(be, "bpf") ? 2.0 : 5.0, want_total = 0, worst = 0;
	uint64_t got[4] = { 0 }, got_total = 0;
	char py[512], truth[128], report[512] = "", fails[1024] = "", tag[840], reads[160] = "";
	const char *minor;
	double want[4];

	ck_assert_uint_le(nr, 4);
	if (!pyt_default(py, sizeof(py), &minor))
		return;
	snprintf(truth, sizeof(truth), "%s/shares.truth", pyt_dir);
	setenv("PROFILE_TRUTH", truth, 1);
	run_ok(&pyt_r, PYT_PROFILE("--backend", (char *)be, "-v", "-f", "-F", "1999", "--", py,
			       (char *)pyt_workload(workload), (char *)s),
	       60);
	for (size_t i = 0; i < nr; i++) {
		char prefix[64];

		want[i] = truth_seconds(truth, fns[i]);
		ck_assert_msg(want[i] > 0, "%s recorded no time for %s", workload, fns[i]);
		want_total += want[i];
		snprintf(prefix, sizeof(prefix), "%s (%s:", fns[i], file);
		got[i] = pyt_innermost(pyt_r.out, prefix);
		got_total += got[i];
	}
	ck_assert_msg(got_total >= 500, "%s %s: %llu samples in the functions: %.2000s", minor, be,
		      (unsigned long long)got_total, pyt_r.err);
	for (size_t i = 0; i < nr; i++) {
		double w = 100 * want[i] / want_total, g = 100.0 * got[i] / got_total;
		size_t n = strlen(report);

		snprintf(report + n, sizeof(report) - n, "%s%s %.1f%% (truth %.1f%%)",
			 i ? ", " : "", fns[i], g, w);
		if (g - w > worst || w - g > worst)
			worst = g > w ? g - w : w - g;
		if (g - w > limit || w - g > limit)
			pyt_fail(fails, sizeof(fails), "%s off by %.1f points; ", fns[i],
				 g > w ? g - w : w - g);
	}
	if (!strcmp(be, "perf"))
		frames_read(pyt_r.err, reads, sizeof(reads));
	fprintf(stderr,
		"pyshares: %s on %s, %s: %s; %llu samples, worst %.1f points (at most %.0f)%s%s\n",
		workload, minor, be, report, (unsigned long long)got_total, worst, limit,
		reads[0] ? "; " : "", reads);
	snprintf(tag, sizeof(tag), "%s on %s, %s: %s%s%s", workload, minor, be, report,
		 reads[0] ? "; " : "", reads);
	pyt_done("pyshares", workload, be, tag, fails);
}

START_TEST(shares_match_the_truth)
{
	static const char *const fns[] = { "share_a", "share_b", "share_c" };

	compare_shares(test_backends[_i], "shares.py", "5", fns, 3, "shares.py");
}
END_TEST

/* Two threads, one in zlib (GIL released) while the other parses. */
START_TEST(threads_shares_match_the_truth)
{
	static const char *const fns[] = { "parse", "compress_block" };

	compare_shares(test_backends[_i], "app.py", "4", fns, 2, "app.py");
}
END_TEST

/*
 * --unwind dwarf (issue 46 row 8): encode.py's score_leaf, a Python loop,
 * in turn with Indexer.build, whose json.dumps runs the C encoder, 4:1 by
 * the thread's clock, 5 s at 1999 Hz. The bpf backend walks the frames in
 * the sample's own program run: shares within 2 points, and no sample has
 * score_leaf above the encoder's native frames (encoder_*). Read from user
 * space when the record was drained, 16-19% did and the shares were 9-12
 * points off. The perf backend reads them right after the sample: 5
 * points, and at most 2% so placed. A share is of the samples with the
 * function's frame anywhere in the stack (Indexer.build's are mostly in
 * json's Python and C below it).
 */
START_TEST(dwarf_shares_match_the_truth)
{
	static const char *const fns[] = { "score_leaf", "Indexer.build" };
	const char *be = test_backends[_i], *minor;
	bool bpf = !strcmp(be, "bpf");
	double limit = bpf ? 2.0 : 5.0, want[2], want_total = 0, worst = 0;
	uint64_t got[2], got_total = 0, misplaced, encoded;
	char py[512], truth[128], report[512] = "", fails[1024] = "", tag[640], prefix[64];

	if (!pyt_default(py, sizeof(py), &minor))
		return;
	snprintf(truth, sizeof(truth), "%s/encode.truth", pyt_dir);
	setenv("PROFILE_TRUTH", truth, 1);
	run_ok(&pyt_r, PYT_PROFILE("--backend", (char *)be, "--unwind", "dwarf", "-f", "-F", "1999",
			       "--", py, (char *)pyt_workload("encode.py"), "5"),
	       60);
	for (size_t i = 0; i < 2; i++) {
		/* co_qualname from 3.11, co_name before. */
		const char *name = pyt_at_least(minor, 3, 11) || i == 0 ? fns[i] : "build";

		want[i] = truth_seconds(truth, fns[i]);
		ck_assert_msg(want[i] > 0, "encode.py recorded no time for %s", fns[i]);
		want_total += want[i];
		snprintf(prefix, sizeof(prefix), "%s (encode.py:", name);
		got[i] = pyt_with_frame(pyt_r.out, prefix, NULL);
		got_total += got[i];
	}
	ck_assert_msg(got_total >= 500, "%s %s: %llu samples in the functions: %.2000s", minor, be,
		      (unsigned long long)got_total, pyt_r.err);
	for (size_t i = 0; i < 2; i++) {
		double w = 100 * want[i] / want_total, g = 100.0 * got[i] / got_total;
		double off = g > w ? g - w : w - g;
		size_t n = strlen(report);

		snprintf(report + n, sizeof(report) - n, "%s%s %.1f%% (truth %.1f%%)", i ? ", " : "",
			 fns[i], g, w);
		worst = off > worst ? off : worst;
		if (off > limit)
			pyt_fail(fails, sizeof(fails), "%s off by %.1f points; ", fns[i], off);
	}
	misplaced = pyt_with_frame(pyt_r.out, "score_leaf (encode.py:", "encoder_");
	snprintf(prefix, sizeof(prefix), "%s (encode.py:",
		 pyt_at_least(minor, 3, 11) ? "Indexer.build" : "build");
	encoded = pyt_with_frame(pyt_r.out, prefix, "encoder_");
	if (!encoded)
		/* Without the encoder's names there is nothing to find it under. */
		fprintf(stderr, "pyshares: %s: no sample named json's encoder_* functions: the "
			"check of what is above them is skipped\n", minor);
	else if (bpf ? misplaced > 0 : misplaced * 50 > got_total)
		pyt_fail(fails, sizeof(fails),
			 "%llu samples with score_leaf above json's encoder (of %llu under "
			 "Indexer.build); ",
			 (unsigned long long)misplaced, (unsigned long long)encoded);
	fprintf(stderr,
		"pyshares: encode.py on %s, %s, --unwind dwarf: %s; %llu samples, worst %.1f points "
		"(at most %.0f); score_leaf above the encoder: %llu (under Indexer.build: %llu)\n",
		minor, be, report, (unsigned long long)got_total, worst, limit,
		(unsigned long long)misplaced, (unsigned long long)encoded);
	snprintf(tag, sizeof(tag), "encode.py on %s, %s, dwarf: %s", minor, be, report);
	pyt_done("pyshares", "encode.py-dwarf", be, tag, fails);
}
END_TEST

Suite *pyshares_suite(void)
{
	Suite *s = suite_create("pyshares");
	TCase *tc = tcase_create("shares");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, pyt_setup, pyt_teardown);
	tcase_add_loop_test(tc, shares_match_the_truth, 0, 2);
	tcase_add_loop_test(tc, threads_shares_match_the_truth, 0, 2);
	tcase_add_loop_test(tc, dwarf_shares_match_the_truth, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
