// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames against the truth, on every interpreter installed here
 * (pyenv's 2.7 and 3.6-3.13, Debian's static python3.11; the missing are
 * skipped) and both backends: one launch of tests/workloads/python/inturn.py
 * runs the workloads in turn, each recording the stacks it runs (truth.py),
 * and every recorded stack must come out of profile -f exactly: its frames,
 * "name (file:line)" with py-spy's short file, in order and consecutive,
 * the leaf's line free (it moves). The stacks: recursion 50 deep and 200
 * deep (cut to its innermost 128 frames under "[python: truncated]"),
 * Python -> C -> Python (sorted's key lambda: outer.<locals>.<lambda> from
 * 3.11, <lambda> before), unicode names, a generator and a coroutine, a
 * forked child that exits mid-run, a thread in zlib.compress with the GIL
 * released, threads started mid-run. And code objects freed and reused
 * (reuse.py) never name another's samples.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/python/pyrun.h"
#include "tests/unit/python/pyenv.h"

static struct run_result r;
static char dir[64];

/* What inturn.py runs, in this order (NAME:SECONDS[:ARG...]); 2.7 has no async or unicode names. */
static const char *const specs[] = { "deep:0.3:50", "deep:0.3:200", "callback:0.3",
				     "exits:1.0:0.8", "app:0.4",   "threads:0.75",
				     "reuse:0.4",   "genasync:0.5", "ünïcödé:0.3" };
#define NR_SPECS_27 7

/* The stacks each truth file must hold: file, labels. */
static const struct {
	const char *file, *labels[2];
	bool py3;
} stacks[] = {
	{ "deep50.truth", { "leaf", NULL }, false },
	{ "deep200.truth", { "leaf", NULL }, false },
	{ "callback.truth", { "slow", NULL }, false },
	{ "exits0.8.truth", { "parent_work", "child_work" }, false },
	{ "app.truth", { "parse", "compress_block" }, false },
	{ "threads.truth", { "early_main", "late_worker" }, false },
	{ "ünïcödé.truth", { "méthode", NULL }, true },
	{ "genasync.truth", { "compute", "produce" }, true },
};

static void setup(void)
{
	pyt_mkdir(dir);
}

static void teardown(void)
{
	run_result_free(&r);
	pyt_rmdir(dir);
}

/*
 * One recorded stack against the profile: at least one exact sample, and
 * nine in ten of the candidates exact (the perf backend reads a frame chain
 * while the program runs on: a read can be torn), two misses allowed.
 */
static void check_stack(const char *tag, const struct pyt_stack *t, char *fails, size_t len)
{
	struct pyt_match m;
	char what[160];

	pyt_match(r.out, t, &m);
	snprintf(what, sizeof(what), "%s: %s, %zu frames: %llu of %llu stacks exact", tag, t->label,
		 t->nr, (unsigned long long)m.exact, (unsigned long long)m.candidates);
	fprintf(stderr, "pyframes: %s\n", what);
	if (!m.exact || (m.candidates - m.exact > 2 && m.exact * 10 < m.candidates * 9))
		pyt_fail(fails, len, "%s\n", what);
}

/* sorted()'s key function: a lambda named by its qualname from 3.11. */
static void check_lambda(const char *minor, char *fails, size_t len)
{
	const char *want = pyt_at_least(minor, 3, 11)
				   ? ";outer (callback.py:19);outer.<locals>.<lambda> (callback.py:19);"
				   : ";outer (callback.py:19);<lambda> (callback.py:19);";

	if (!folded_count(r.out, want))
		pyt_fail(fails, len, "no stack has %s\n", want);
}

/* zlib.compress, GIL released: compress_block at its line 27 with native frames under it. */
static void check_zlib(char *fails, size_t len)
{
	if (!folded_count(r.out, ";compress_block (app.py:27);"))
		pyt_fail(fails, len, "no stack has native frames under compress_block (app.py:27)\n");
}

/*
 * reuse.py: run_a's frames never have spin_b under them, nor run_b's
 * spin_a. A spin function lives 20 ms: where its samples are named later
 * (the bpf backend names them at a drain) its memory may hold the other's
 * code by then, which must leave the frame unnamed, not misnamed.
 */
static void check_reuse(char *fails, size_t len)
{
	static const char *const mine[] = { "spin_a (made.py:", "spin_b (made.py:" };
	uint64_t callers[2] = { 0 }, own[2] = { 0 }, other[2] = { 0 };
	const char *line = r.out;

	while (*line) {
		size_t n = strcspn(line, "\n");
		const char *sp = memrchr(line, ' ', n);
		uint64_t count = sp ? strtoull(sp + 1, NULL, 10) : 0;

		for (int i = 0; i < 2; i++) {
			char caller[32];
			const char *c;

			snprintf(caller, sizeof(caller), ";run_%c (reuse.py:", 'a' + i);
			c = memmem(line, n, caller, strlen(caller));
			if (!c)
				continue;
			callers[i] += count;
			c = memchr(c + 1, ';', line + n - c - 1);
			if (c && !strncmp(c + 1, mine[i], strlen(mine[i])))
				own[i] += count;
			else if (c && !strncmp(c + 1, mine[!i], strlen(mine[!i])))
				other[i] += count;
		}
		line += n + (line[n] == '\n');
	}
	fprintf(stderr, "pyframes: reuse: run_a %llu (spin_a %llu, spin_b %llu), run_b %llu "
			"(spin_b %llu, spin_a %llu)\n",
		(unsigned long long)callers[0], (unsigned long long)own[0],
		(unsigned long long)other[0], (unsigned long long)callers[1],
		(unsigned long long)own[1], (unsigned long long)other[1]);
	if (!callers[0] || !callers[1] || other[0] || other[1])
		pyt_fail(fails, len, "reuse.py: run_a %llu samples, %llu with spin_b; run_b %llu, "
				     "%llu with spin_a (a freed code object's memory named "
				     "another's samples)\n",
			 (unsigned long long)callers[0], (unsigned long long)other[0],
			 (unsigned long long)callers[1], (unsigned long long)other[1]);
}

/* Every Python frame has its line: a frame without one was named by a code object it did not run. */
static void check_lines(char *fails, size_t len)
{
	char examples[512];
	uint64_t n = pyt_lineless(r.out, examples, sizeof(examples));

	if (n)
		pyt_fail(fails, len, "%llu Python frames without a line: %s\n", (unsigned long long)n,
			 examples);
}

/*
 * -v names the version of each process: "runs CPython X.Y (" where only the
 * file's name tells it (before 3.11), "X.Y.Z (" where its data does.
 */
static void check_version(const char *minor, char *fails, size_t len)
{
	char want[64];
	const char *p, *v;
	bool micro;

	snprintf(want, sizeof(want), " runs CPython %s", pyt_version(minor));
	p = strstr(r.err, want);
	if (!p) {
		pyt_fail(fails, len, "-v does not say%s\n", want);
		return;
	}
	v = p + strlen(want);
	micro = v[0] == '.' && v[1] >= '0' && v[1] <= '9';
	for (v += micro; micro && *v >= '0' && *v <= '9'; v++)
		;
	if (strncmp(v, " (", 2) || (pyt_at_least(minor, 3, 11) && !micro))
		pyt_fail(fails, len, "-v says \"%.*s\"\n", (int)strcspn(p, "\n"), p);
}

START_TEST(frames_match_the_truth)
{
	const char *minor = py_test_minors[_i / 2], *be = test_backends[_i % 2];
	bool py3 = strcmp(minor, "2.7") != 0;
	size_t nr_specs = py3 ? sizeof(specs) / sizeof(specs[0]) : NR_SPECS_27;
	char py[512], tag[32], fails[4096] = "";
	char *argv[32] = { (char *)profile_bin(), "-v", "--backend", (char *)be, "-f", "-F", "499",
			   "--", py, (char *)pyt_workload("inturn.py"), dir };
	size_t argc = 11;

	if (!pyt_interpreter("pyframes", minor, py, sizeof(py)))
		return;
	for (size_t i = 0; i < nr_specs; i++)
		argv[argc++] = (char *)specs[i];
	run_ok(&r, argv, 60);
	snprintf(tag, sizeof(tag), "%s %s", minor, be);
	check_version(minor, fails, sizeof(fails));
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct pyt_stack t[8];
		char path[128];
		int nr;

		if (stacks[i].py3 && !py3)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, stacks[i].file);
		nr = pyt_read_truth(path, t, 8);
		for (size_t j = 0; j < 2 && stacks[i].labels[j]; j++) {
			const struct pyt_stack *s = nr > 0 ? pyt_find(t, nr, stacks[i].labels[j])
							   : NULL;

			if (s)
				check_stack(tag, s, fails, sizeof(fails));
			else
				pyt_fail(fails, sizeof(fails), "%s recorded no %s\n",
					 stacks[i].file, stacks[i].labels[j]);
		}
		if (nr > 0)
			pyt_truth_free(t, nr);
	}
	check_lambda(minor, fails, sizeof(fails));
	check_zlib(fails, sizeof(fails));
	check_reuse(fails, sizeof(fails));
	check_lines(fails, sizeof(fails));
	if (fails[0]) {
		char name[64];

		snprintf(name, sizeof(name), "pyframes-%s-%s", minor, be);
		pyt_keep(name, &r, dir);
	}
	ck_assert_msg(!fails[0], "%s:\n%s-v: %.2000s", tag, fails, r.err);
}
END_TEST

Suite *pyframes_suite(void)
{
	Suite *s = suite_create("pyframes");
	TCase *tc = tcase_create("truth");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, frames_match_the_truth, 0, 2 * PY_TEST_NR_MINORS);
	suite_add_tcase(s, tc);
	return s;
}
