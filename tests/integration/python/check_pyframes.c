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
static const char *const specs[] = { "deep:0.3:50", "deep:0.3:200", "callback:0.3",
				     "exits:1.0:0.8", "app:0.4",   "threads:0.75",
				     "reuse:0.4",   "genasync:0.5", "ünïcödé:0.3" };
#define NR_SPECS_27 7

/*
 * The stacks the truth files must hold: file, label. brief: a stack of a
 * few milliseconds at a time between others (a request's parse, a
 * coroutine between generator runs) or of threads that live half a second:
 * the perf backend reads a thread's frames when it drains its rings (every
 * 100 ms), not at the sample, so it may miss such a stack altogether; its
 * shares are pyshares' to check.
 */
static const struct {
	const char *file, *label;
	bool py3, brief;
} stacks[] = {
	{ "deep50.truth", "leaf", false, false },
	{ "deep200.truth", "leaf", false, false },
	{ "callback.truth", "slow", false, false },
	{ "exits0.8.truth", "parent_work", false, false },
	{ "exits0.8.truth", "child_work", false, false },
	{ "app.truth", "parse", false, true },
	{ "app.truth", "compress_block", false, true },
	{ "threads.truth", "early_main", false, false },
	{ "threads.truth", "late_worker", false, true },
	{ "ünïcödé.truth", "méthode", true, false },
	{ "genasync.truth", "compute", true, true },
	{ "genasync.truth", "produce", true, true },
};

/* The workloads' files: inturn.py keeps their code the whole run, so their frames have lines. */
static const char *const own_files[] = { "inturn.py",   "truth.py",   "deep.py",    "callback.py",
					 "exits.py",    "app.py",     "threads.py", "reuse.py",
					 "genasync.py", "ünïcödé.py", NULL };

/*
 * One recorded stack against the profile: at least one exact sample, and
 * nine in ten of the candidates exact (the perf backend reads a frame chain
 * while the program runs on: a read can be torn), two misses allowed. A
 * brief stack the perf backend did not see at all is said, not failed, and
 * it needs none exact of it: two torn reads may be all it has.
 */
static void check_stack(const char *tag, const struct pyt_stack *t, bool brief, bool perf,
			char *fails, size_t len)
{
	struct pyt_match m;
	char what[160];

	pyt_match(pyt_r.out, t, &m);
	snprintf(what, sizeof(what), "%s: %s, %zu frames: %llu of %llu stacks exact", tag, t->label,
		 t->nr, (unsigned long long)m.exact, (unsigned long long)m.candidates);
	if (brief && perf && !m.candidates) {
		fprintf(stderr, "pyframes: %s: not seen (the perf backend reads Python frames at "
				"its drain, not at the sample: not checked)\n", what);
		return;
	}
	fprintf(stderr, "pyframes: %s\n", what);
	/* A few torn reads of a brief stack can be all perf has of it. */
	if ((!m.exact && !(brief && perf)) ||
	    (m.candidates - m.exact > 2 && m.exact * 10 < m.candidates * 9))
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

/*
 * zlib.compress, GIL released: compress_block at its line 27 with native
 * frames under it. (A brief stack: perf may not have read it at all.)
 */
static void check_zlib(bool perf, char *fails, size_t len)
{
	if (perf && !folded_count(pyt_r.out, ";compress_block (app.py:")) {
		fprintf(stderr, "pyframes: compress_block not seen on perf: not checked\n");
		return;
	}
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

static void check_reuse(bool perf, char *fails, size_t len)
{
	uint64_t callers[2] = { 0 }, own[2] = { 0 }, other[2] = { 0 };
	char examples[512] = "";
	const char *line = pyt_r.out;

	while (*line) {
		size_t n = strcspn(line, "\n");
		const char *sp = memrchr(line, ' ', n);
		uint64_t count = sp ? strtoull(sp + 1, NULL, 10) : 0;

		for (int i = 0; sp && i < 2; i++) {
			char caller[32], spin[32];
			const char *c, *end;
			size_t fn, k;

			snprintf(caller, sizeof(caller), ";run_%c (", 'a' + i);
			c = memmem(line, sp - line, caller, strlen(caller));
			if (!c)
				continue;
			callers[i] += count;
			/* run_a itself named with another file (a string's memory reused). */
			if (strncmp(c + strlen(caller), "reuse.py:", 9)) {
				end = memchr(c + 1, ';', sp - c - 1);
				fn = (end ? end : sp) - c - 1;
				c++;
				goto misnamed;
			}
			c = memchr(c + 1, ';', sp - c - 1);
			if (!c)
				continue;
			c++;
			end = memchr(c, ';', sp - c);
			fn = (end ? end : sp) - c;
			snprintf(spin, sizeof(spin), "spin_%c (made.py", 'a' + i);
			if (fn > strlen(spin) && !memcmp(c, spin, strlen(spin)))
				own[i] += count;
			if (reuse_callee_ok(c, fn, 'a' + i))
				continue;
misnamed:
			other[i] += count;
			k = strlen(examples);
			if (k + fn + 16 < sizeof(examples))
				snprintf(examples + k, sizeof(examples) - k, "%srun_%c: %.*s",
					 k ? "; " : "", 'a' + i, (int)fn, c);
		}
		line += n + (line[n] == '\n');
	}
	fprintf(stderr,
		"pyframes: reuse: run_a %llu (spin_a %llu, misnamed %llu), run_b %llu "
		"(spin_b %llu, misnamed %llu)\n",
		(unsigned long long)callers[0], (unsigned long long)own[0],
		(unsigned long long)other[0], (unsigned long long)callers[1],
		(unsigned long long)own[1], (unsigned long long)other[1]);
	/* 20 ms each in turn: perf, reading at its drain, may miss one. */
	if ((!perf && (!callers[0] || !callers[1])) || other[0] || other[1])
		pyt_fail(fails, len,
			 "reuse.py: run_a %llu samples, %llu misnamed under it; run_b "
			 "%llu, %llu (a freed code object's memory named another's "
			 "samples): %s\n",
			 (unsigned long long)callers[0], (unsigned long long)other[0],
			 (unsigned long long)callers[1], (unsigned long long)other[1], examples);
}

/*
 * Every frame of the workloads' own files has its line: their code objects
 * live the whole run. (Code run once and freed, a module's body at its
 * import, may be gone by the time the bpf backend names its samples: such
 * frames can lose their line, which is right, and are not counted.)
 */
static void check_lines(char *fails, size_t len)
{
	char examples[512];
	uint64_t n = pyt_lineless(pyt_r.out, own_files, examples, sizeof(examples));

	if (n)
		pyt_fail(fails, len, "%llu Python frames of the workloads without a line: %s\n",
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
			check_stack(tag, s, stacks[i].brief, !strcmp(be, "perf"), fails,
				    sizeof(fails));
		else
			pyt_fail(fails, sizeof(fails), "%s recorded no %s\n", stacks[i].file,
				 stacks[i].label);
		if (nr > 0)
			pyt_truth_free(t, nr);
	}
	check_lambda(minor, fails, sizeof(fails));
	check_zlib(!strcmp(be, "perf"), fails, sizeof(fails));
	check_reuse(!strcmp(be, "perf"), fails, sizeof(fails));
	check_lines(fails, sizeof(fails));
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
