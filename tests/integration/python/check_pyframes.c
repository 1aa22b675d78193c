// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames against the truth, on every interpreter installed here
 * (pyenv's 2.7 and 3.6-3.13, Debian's static python3.11; the missing are
 * skipped) and both backends: one launch of tests/workloads/python/inturn.py
 * runs the workloads in turn, each recording the stacks it runs (truth.py),
 * and every recorded stack must come out of profile -f exactly: its frames,
 * "name (file:line)" with py-spy's short file, in order and consecutive,
 * the leaf's line free (it moves), native frames between them only where
 * C code calls a recorded function (asyncio's Task, with --unwind dwarf
 * or auto; frame-pointer walks lose them). The stacks: recursion 50 deep and 200
 * deep (cut to its innermost 128 frames under "[python: truncated]"), 40
 * distinct functions deep (each its own code object, read on its own),
 * Python -> C -> Python (sorted's key lambda: outer.<locals>.<lambda> from
 * 3.11, <lambda> before), unicode names, a generator and a coroutine, a
 * forked child that exits mid-run, a thread in zlib.compress with the GIL
 * released, threads started mid-run. And code objects freed and reused
 * (reuse.py) never name another's samples, the frames of the workloads'
 * files all have their lines, and -v names each process's version. About
 * 4 s of workloads a run: the suite takes about two minutes on 2 CPUs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/integration/python/pyrun.h"
#include "tests/unit/python/pyenv.h"

/* What inturn.py runs, in this order (NAME:SECONDS[:ARG...]); 2.7 has no async or unicode names. */
static const char *const specs[] = { "deep:0.3:50", "deep:0.3:200", "deep:0.3:40:chain",
				     "callback:0.3", "exits:1.0:0.8", "app:0.4",
				     "threads:0.75", "reuse:0.4", "genasync:0.5",
				     "ünïcödé:0.3" };
#define NR_SPECS_27 8

/*
 * worker, the coroutine that the event loop's Task runs: _asyncio's C code
 * (task_step, TaskStepMethWrapper_call) calls it, whose native frames a
 * complete native stack (--unwind dwarf, auto) keeps between it and
 * Handle._run.
 */
static const char *const task_coroutine[] = { "worker", NULL };

/*
 * The stacks the truth files must hold: file, label (py3: not on 2.7),
 * the recorded functions that C code calls (pyt_match_tolerant).
 * Both backends read a thread's frames right after the sample (the perf
 * backend since its reader thread does), so a stack of a few milliseconds
 * at a time (a request's parse, a coroutine between generator runs) must
 * come out as the others do.
 */
static const struct {
	const char *file, *label;
	bool py3;
	const char *const *c_called;
} stacks[] = {
	{ "deep50.truth", "leaf", false, NULL },
	{ "deep200.truth", "leaf", false, NULL },
	{ "deep40chain.truth", "chain_leaf", false, NULL },
	{ "callback.truth", "slow", false, NULL },
	{ "exits0.8.truth", "parent_work", false, NULL },
	{ "exits0.8.truth", "child_work", false, NULL },
	{ "app.truth", "parse", false, NULL },
	{ "app.truth", "compress_block", false, NULL },
	{ "threads.truth", "early_main", false, NULL },
	{ "threads.truth", "late_worker", false, NULL },
	{ "ünïcödé.truth", "méthode", true, NULL },
	{ "genasync.truth", "compute", true, task_coroutine },
	{ "genasync.truth", "produce", true, task_coroutine },
};

/* The workloads' files: inturn.py keeps their code the whole run, so their frames have lines. */
static const char *const own_files[] = { "inturn.py",   "truth.py",   "deep.py",    "callback.py",
					 "exits.py",    "app.py",     "threads.py", "reuse.py",
					 "genasync.py", "ünïcödé.py", NULL };

/*
 * At least one exact sample, and nine in ten of the candidates exact (the
 * perf backend reads a frame chain while the program runs on: a read can be
 * torn), two misses allowed.
 */
/* Samples under a caller below which one of its callees may have none (check_stack). */
#define FEW_CALLER_SAMPLES 50

static bool stack_bad(const struct pyt_match *m)
{
	return !m->exact || (m->candidates - m->exact > 2 && m->exact * 10 < m->candidates * 9);
}

/*
 * One recorded stack against the profile. On the bpf backend a stack that
 * passes only with the frames that bug 4 makes (pyrun.h) let by is KNOWN,
 * not failed.
 */
static void check_stack(const char *tag, const struct pyt_stack *t,
			const char *const *c_called, bool bpf, char *fails, size_t len)
{
	struct pyt_match m, k;
	uint64_t under;
	char what[192];

	pyt_match_tolerant(pyt_r.out, t, 0, c_called, &m);
	under = pyt_caller_samples(pyt_r.out, t);
	snprintf(what, sizeof(what),
		 "%s: %s, %zu frames: %llu of %llu stacks exact (%llu under its caller)", tag,
		 t->label, t->nr, (unsigned long long)m.exact,
		 (unsigned long long)m.candidates, (unsigned long long)under);
	fprintf(stderr, "pyframes: %s\n", what);
	if (!stack_bad(&m))
		return;
	/*
	 * No sample at all of a function whose caller, in its thread, was
	 * sampled only a few times: app.py's worker lives 0.4 s and waits for
	 * the GIL between its parses (CI, 3.6 on perf: 10 samples under its
	 * handle_request, all in compress_block). Where the caller had samples
	 * enough, none in the function is a failure.
	 */
	if (!m.candidates && under < FEW_CALLER_SAMPLES)
		return;
	if (bpf) {
		pyt_match_tolerant(pyt_r.out, t, PYT_BUG4, c_called, &k);
		if (!stack_bad(&k)) {
			pyt_known(fails, len, PYT_BUG4,
				  "%s (%llu of %llu with the bug's frames let by)", what,
				  (unsigned long long)k.exact, (unsigned long long)k.candidates);
			return;
		}
	}
	pyt_fail(fails, len, "%s\n", what);
}

/* sorted()'s key function: a lambda named by its qualname from 3.11. */
static void check_lambda(const char *minor, char *fails, size_t len)
{
	const char *want =
		pyt_at_least(minor, 3, 11)
			? ";outer (callback.py:19);outer.<locals>.<lambda> (callback.py:19);"
			: ";outer (callback.py:19);<lambda> (callback.py:19);";

	if (!folded_count(pyt_r.out, want))
		pyt_fail(fails, len, "no stack has %s\n", want);
}

/* zlib.compress, GIL released: compress_block at its line 27 with native frames under it. */
static void check_zlib(char *fails, size_t len)
{
	if (!folded_count(pyt_r.out, ";compress_block (app.py:27);"))
		pyt_fail(fails, len,
			 "no stack has native frames under compress_block (app.py:27)\n");
}

/*
 * reuse.py: the frame under run_a is what it called: make, the compiled
 * module's <module>, or spin_a; never spin_b, nor any other function (a
 * code object of an import since). A spin function lives 20 ms: where its
 * samples are named later (the bpf backend names them at a drain) its
 * memory may hold another's code by then, which must leave the frame
 * unnamed ("[python: ...]") or without its line, not misnamed.
 */
static bool reuse_callee_ok(const char *f, size_t n, char letter)
{
	char spin[32];

	snprintf(spin, sizeof(spin), "spin_%c (made.py", letter);
	return !pyt_is_python_frame(f, n) || f[0] == '[' ||
	       (n > strlen(spin) && !memcmp(f, spin, strlen(spin))) ||
	       (n > 16 && !memcmp(f, "<module> (made.py", 17)) ||
	       (n > 14 && !memcmp(f, "make (reuse.py:", 15));
}

/*
 * Misnamed samples under run_a and run_b, with examples: by what named
 * them, another function's code (issue 35's bug 2) or another file's name
 * (bug 3: a string's memory reused).
 */
struct reuse_count {
	uint64_t callers[2], own[2], bug[4][2];
	char examples[4][512];
};

static void reuse_misnamed(struct reuse_count *rc, int i, int bug, const char *f, size_t n,
			   uint64_t count)
{
	char *ex = rc->examples[bug];
	size_t k = strlen(ex);

	rc->bug[bug][i] += count;
	if (k + n + 16 < sizeof(rc->examples[0]))
		snprintf(ex + k, sizeof(rc->examples[0]) - k, "%srun_%c: %.*s", k ? "; " : "",
			 'a' + i, (int)n, f);
}

/* The folded line at line (its frames end at sp) under run_a or run_b (i). */
static void reuse_line(struct reuse_count *rc, int i, const char *line, const char *sp,
		       uint64_t count)
{
	char caller[32], spin[32];
	const char *c, *end;
	size_t fn;

	snprintf(caller, sizeof(caller), ";run_%c (", 'a' + i);
	c = memmem(line, sp - line, caller, strlen(caller));
	if (!c)
		return;
	rc->callers[i] += count;
	/* run_a itself named with another file (a string's memory reused). */
	if (strncmp(c + strlen(caller), "reuse.py:", 9)) {
		end = memchr(c + 1, ';', sp - c - 1);
		reuse_misnamed(rc, i, 3, c + 1, (end ? end : sp) - c - 1, count);
		return;
	}
	c = memchr(c + 1, ';', sp - c - 1);
	if (!c)
		return;
	c++;
	end = memchr(c, ';', sp - c);
	fn = (end ? end : sp) - c;
	snprintf(spin, sizeof(spin), "spin_%c (made.py", 'a' + i);
	if (fn > strlen(spin) && !memcmp(c, spin, strlen(spin)))
		rc->own[i] += count;
	if (reuse_callee_ok(c, fn, 'a' + i))
		return;
	/* Its own spin under another file: the file's string reused (3), else another's code. */
	spin[8] = '\0';
	reuse_misnamed(rc, i, fn > 8 && !memcmp(c, spin, 8) ? 3 : 2, c, fn, count);
}

static void check_reuse(char *fails, size_t len)
{
	struct reuse_count rc = { 0 };
	const char *line = pyt_r.out;

	while (*line) {
		size_t n = strcspn(line, "\n");
		const char *sp = memrchr(line, ' ', n);

		for (int i = 0; sp && i < 2; i++)
			reuse_line(&rc, i, line, sp, strtoull(sp + 1, NULL, 10));
		line += n + (line[n] == '\n');
	}
	fprintf(stderr,
		"pyframes: reuse: run_a %llu (spin_a %llu, misnamed %llu + %llu), run_b %llu "
		"(spin_b %llu, misnamed %llu + %llu)\n",
		(unsigned long long)rc.callers[0], (unsigned long long)rc.own[0],
		(unsigned long long)rc.bug[2][0], (unsigned long long)rc.bug[3][0],
		(unsigned long long)rc.callers[1], (unsigned long long)rc.own[1],
		(unsigned long long)rc.bug[2][1], (unsigned long long)rc.bug[3][1]);
	if (!rc.callers[0] || !rc.callers[1])
		pyt_fail(fails, len, "reuse.py: run_a %llu samples, run_b %llu\n",
			 (unsigned long long)rc.callers[0], (unsigned long long)rc.callers[1]);
	for (int bug = 2; bug <= 3; bug++) {
		const char *what = bug == 2 ? "another function's code" : "another file's name";

		if (!rc.bug[bug][0] && !rc.bug[bug][1])
			continue;
		pyt_fail(fails, len,
			 "reuse.py: run_a %llu samples, %llu named with %s; run_b %llu, %llu "
			 "(a freed code object's memory named another's samples): %s\n",
			 (unsigned long long)rc.callers[0], (unsigned long long)rc.bug[bug][0], what,
			 (unsigned long long)rc.callers[1], (unsigned long long)rc.bug[bug][1],
			 rc.examples[bug]);
	}
}

/*
 * Every frame of the workloads' own files has its line: their code objects
 * live the whole run. (Code run once and freed, a module's body at its
 * import, may be gone by the time the bpf backend names its samples: such
 * frames can lose their line, which is right, and are not counted.) On the
 * bpf backend, frames without it are bug 4's.
 */
static void check_lines(bool bpf, char *fails, size_t len)
{
	char examples[512];
	uint64_t n = pyt_lineless(pyt_r.out, own_files, examples, sizeof(examples));

	if (n)
		pyt_known(fails, len, bpf ? PYT_BUG4 : 0,
			  "%llu Python frames of the workloads without a line: %s",
			  (unsigned long long)n, examples);
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
	p = strstr(pyt_r.err, want);
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
	bool bpf = !strcmp(be, "bpf");
	size_t nr_specs = py3 ? sizeof(specs) / sizeof(specs[0]) : NR_SPECS_27;
	char py[512], tag[32], fails[4096] = "";
	char *argv[32] = { (char *)profile_bin(), "-v", "--backend", (char *)be, "-f", "-F", "499",
			   "--", py, (char *)pyt_workload("inturn.py"), pyt_dir };
	size_t argc = 11;

	if (!pyt_interpreter("pyframes", minor, py, sizeof(py)))
		return;
	for (size_t i = 0; i < nr_specs; i++)
		argv[argc++] = (char *)specs[i];
	run_ok(&pyt_r, argv, 60);
	snprintf(tag, sizeof(tag), "%s %s", minor, be);
	check_version(minor, fails, sizeof(fails));
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
		struct pyt_stack t[8];
		const struct pyt_stack *s;
		char path[128];
		int nr;

		if (stacks[i].py3 && !py3)
			continue;
		snprintf(path, sizeof(path), "%s/%s", pyt_dir, stacks[i].file);
		nr = pyt_read_truth(path, t, 8);
		s = nr > 0 ? pyt_find(t, nr, stacks[i].label) : NULL;
		if (s)
			check_stack(tag, s, stacks[i].c_called, bpf, fails, sizeof(fails));
		else
			pyt_fail(fails, sizeof(fails), "%s recorded no %s\n", stacks[i].file,
				 stacks[i].label);
		if (nr > 0)
			pyt_truth_free(t, nr);
	}
	check_lambda(minor, fails, sizeof(fails));
	check_zlib(fails, sizeof(fails));
	check_reuse(fails, sizeof(fails));
	check_lines(bpf, fails, sizeof(fails));
	pyt_done("pyframes", minor, be, tag, fails);
}
END_TEST

Suite *pyframes_suite(void)
{
	Suite *s = suite_create("pyframes");
	TCase *tc = tcase_create("truth");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_checked_fixture(tc, pyt_setup, pyt_teardown);
	tcase_add_loop_test(tc, frames_match_the_truth, 0, 2 * PY_TEST_NR_MINORS);
	suite_add_tcase(s, tc);
	return s;
}
