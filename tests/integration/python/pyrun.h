/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the Python integration suites share: the workloads of
 * tests/workloads/python, the interpreters they run on (pyenv's and
 * Debian's, tests/unit/python/pyenv.h), a scratch directory per test, and
 * the check of a profile's Python frames against what a workload recorded
 * of itself (truth.py: "label<TAB>name|file|line;..." root first).
 */
#ifndef TESTS_INTEGRATION_PYTHON_PYRUN_H
#define TESTS_INTEGRATION_PYTHON_PYRUN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/support/tests.h"

/* $PROFILE_SRCDIR/tests/workloads/python/name (a few in turn, as workload()). */
const char *pyt_workload(const char *name);

/*
 * The interpreter of minor (py_test_minors: "2.7" ... "3.13", "debian") into
 * path, or NULL with a line on stderr saying that tests of it are skipped.
 */
const char *pyt_interpreter(const char *suite, const char *minor, char *path, size_t len);
/*
 * The interpreter of the tests that need one version: pyenv's 3.12, else the
 * newest installed (minor set to its name); NULL when there is none.
 */
const char *pyt_default(char *path, size_t len, const char **minor);
/* The "X.Y" that -v prints for minor ("debian": 3.11). */
const char *pyt_version(const char *minor);
/* Whether minor names a version at least major.minor. */
bool pyt_at_least(const char *minor, int major, int min);
/* The comm of an interpreter: its base name, as the kernel keeps it (15 bytes). */
void pyt_comm(const char *interpreter, char *comm, size_t len);

/*
 * The current test's run and scratch directory: the suites' checked
 * fixture (pyt_setup makes the directory, pyt_teardown frees both).
 */
extern struct run_result pyt_r;
extern char pyt_dir[64];
void pyt_setup(void);
void pyt_teardown(void);
/*
 * A test's end: with failures, pyt_r and the truth files kept (pyt_keep,
 * as "suite-what-backend") and the test failed with tag, the failures and
 * -v's lines.
 */
void pyt_done(const char *suite, const char *what, const char *be, const char *tag,
	      const char *fails);

/* A fresh directory under /tmp (name NUL-terminated in dir[64]); pyt_rmdir removes it. */
void pyt_mkdir(char dir[64]);
void pyt_rmdir(const char *dir);

/*
 * A file's name as py-spy shortens it: after the last site-packages/ or
 * dist-packages/, else its base name.
 */
const char *pyt_short_file(const char *path);

/* One stack a workload recorded: its frames root first. */
struct pyt_frame {
	char *name, *file;
	int line;
};

struct pyt_stack {
	char label[64];
	struct pyt_frame *frames;
	size_t nr;
};

/* The stacks of a truth file (at most max); the count, -errno without the file. */
int pyt_read_truth(const char *path, struct pyt_stack *out, size_t max);
void pyt_truth_free(struct pyt_stack *s, size_t nr);
/* The stack labelled label among s, or NULL. */
const struct pyt_stack *pyt_find(const struct pyt_stack *s, size_t nr, const char *label);

/*
 * A profile's samples against one recorded stack. A candidate is a folded
 * line whose innermost Python frame is the recorded leaf (its name and
 * file: the line moves) and that holds the recorded root (or, above 128
 * frames, the "[python: truncated]" mark); it is exact when the frames
 * before that leaf are the recorded ones, each "name (file:line)", in
 * order and consecutive (the innermost 128 after the mark when cut; native
 * frames between them only where pyt_match_tolerant's c_called says).
 */
struct pyt_match {
	uint64_t exact, candidates;
};

void pyt_match(const char *folded, const struct pyt_stack *t, struct pyt_match *m);

/*
 * Known bugs of the product (issue 35) that the suites see on the bpf
 * backend, one flag each: a check that fails only because of one of them
 * says "KNOWN (issue 35 bug N): ..." on stderr instead of failing, while
 * its flag is true and PYTEST_STRICT=1 is not in the environment. Set a
 * flag to false when its bug is fixed (2 and 3, code objects and strings
 * freed and reused before the drain naming other functions' frames, are,
 * by the identity the walk reads: their checks fail plainly). The bpf
 * backend names code objects at its drain, up to 250 ms after the sample:
 * 4: frames of live code left unnamed ("[python: unreadable]") or without
 *    their line (fixed: stacks named while their processes live, bugs 5
 *    and 8; a stack whose native user stack was lost to a collision kept
 *    no image to name its frames by; 4 strict runs of pyframes passed, one
 *    beside a CPU hog: its checks fail plainly);
 * 5: offcputime: a thread blocked since before its process was found
 *    waits under "[python: unreadable]" (blocked.py's main in
 *    Thread.join), and the first second of the other waits has no Python
 *    frames (fixed on bpf: new threads and off-CPU stacks are noted by the
 *    programs and read within milliseconds; its checks, the perf backend's
 *    too, failed plainly). Back on machine c (2026-11-26, 6.18): in 5 of
 *    8 runs of pyoffcpu, bpf, a wait begun before the process was found
 *    had no Python frames for the whole of it: blocked.py's main in
 *    Thread.join (2.0 s of a 2 s run without them), a child of timeout's
 *    first wait: the walk reads a thread at its switch-out only (fixed:
 *    a thread found switched out, its start entry without frames, in its
 *    first 2 s known, is read from user space while it waits,
 *    backend-bpf/found_waits.c; its checks fail plainly again);
 * Two more, known as a whole run's failures (pyt_done), on either backend:
 * 6: pyframes on the perf backend (fixed: a thread started mid-run known to
 *    the reader thread at its first samples, not a second later; a walk
 *    that raced its thread read again; its failures are plain now);
 * 7: pyshares' app.py: parse over the truth. On bpf it was this VM's
 *    sampler, not the profiler: compress_block's 12 KiB took less time in
 *    deflate than in zlib's state (page faults, brk, TLB shootdowns), where
 *    the timer sampled 7% less of its CPU time; perf record -F 1999 (dwarf,
 *    -X perf) lost the same and put compress_block 1.8 points under (ours
 *    2.5). With 64 KiB of random symbols that deflate works on, bpf is
 *    0.8-0.9 points off (3 strict runs: fixed there, its failures plain).
 *    The perf backend was 2.3-2.7 points over (limit 5; 12.6 once): a
 *    compress sample read after its thread had left zlib for the next
 *    parse. Since its reader reads each sample as it is copied (woken at
 *    the sample while a Python thread runs, at real-time priority), 12
 *    strict runs on another VM, idle, beside one hog and beside two, were
 *    0.0-0.3 points off (fixed: its failures plain).
 * 8: pyframes: a thread that lives under half a second (app.py's worker)
 *    may never be known to the walk: its stacks never seen, -v saying
 *    "their thread was not known yet" (fixed: the walk notes the thread,
 *    the run reads it within 5 ms).
 * 9: offcputime on the perf backend: blocked.py's main, in Thread.join from
 *    its threads' start, waited the whole run under main;"[python:
 *    unreadable]": a wait is counted at its end, and its frames were named
 *    at the tick after, when the process had often ended with the wait
 *    (fixed: named at the switch-out, while the thread waits; a script's
 *    last wait, unreadable 3 runs of 3 before, is a check of its own).
 */
#define PYT_KNOWN_BUG8_BRIEF_THREAD false
#define PYT_KNOWN_BUG6_PERF_FRAMES false
#define PYT_KNOWN_BUG7_APP_SHARES false
#define PYT_KNOWN_BUG4_UNNAMED false
#define PYT_KNOWN_BUG5_OFFCPU_EARLY false
#define PYT_KNOWN_BUG9_PERF_JOIN_UNREADABLE false
/* What pyt_match_tolerant lets by: the marks of bug 4 (as bit 1u << 4). */
#define PYT_BUG4 (1u << 4)

/*
 * pyt_match letting by, in place of a recorded frame (its leaf and root
 * too), what the bugs in tolerate (PYT_BUG4) make of it: "[python:
 * unreadable]", or the frame without its line (the leaf unreadable where
 * the stack has the recorded depth from the root's frame). c_called
 * (NULL-terminated, or NULL) names recorded functions that C code calls:
 * native frames, none or any number, may stand between such a function and
 * its recorded caller, nowhere else. A complete native stack (--unwind
 * dwarf or auto) has there the C code of an extension module (_asyncio's
 * task_step); a frame-pointer walk cut in the interpreter has nothing.
 */
void pyt_match_tolerant(const char *folded, const struct pyt_stack *t, unsigned int tolerate,
			const char *const *c_called, struct pyt_match *m);
/*
 * A failure of the known bugs (bits 1u << N) alone: said on stderr as
 * "KNOWN (issue 35 bug N): ..." where each bug's flag is true and
 * PYTEST_STRICT=1 is not set, else failed (pyt_fail) with the same words;
 * with no bugs (0: a backend they are not known on) a plain failure.
 */
void pyt_known(char *fails, size_t len, unsigned int bugs, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/*
 * Whether the frame f (len bytes) is a Python frame: "name (file:line)",
 * "name (file)", or a "[python: ...]" mark.
 */
bool pyt_is_python_frame(const char *f, size_t len);
/* Whether a Python frame ends with ":LINE)". */
bool pyt_has_line(const char *f, size_t len);
/*
 * Python frames of files (NULL-terminated base names) without a line, each
 * counted with its line's count; a few distinct ones into examples.
 */
uint64_t pyt_lineless(const char *folded, const char *const *files, char *examples, size_t len);
/* Sum of the counts of folded lines with at least one Python frame. */
uint64_t pyt_python_samples(const char *folded);
/*
 * Sum of the counts of folded lines with Python frames from t's root frame
 * through the caller of its leaf (any leaf under that caller, in that thread).
 */
uint64_t pyt_caller_samples(const char *folded, const struct pyt_stack *t);
/*
 * Sum of the counts of folded lines with a Python frame that starts with
 * prefix (the first such, from the root), and with below not NULL, a frame
 * after it (nearer the leaf) that starts with below.
 */
uint64_t pyt_with_frame(const char *folded, const char *prefix, const char *below);
/* Sum of the counts of folded lines whose innermost Python frame starts with prefix. */
uint64_t pyt_innermost(const char *folded, const char *prefix);
/*
 * Sum of the counts of folded lines that start with prefix ("" for all)
 * where the Python frame py ("nap (naps.py:15)") has the native frame
 * native ("clock_nanosleep") below it, with only native frames between:
 * none where the interpreter's native frames are lost (--unwind fp on an
 * interpreter without frame pointers), the C functions it called (time.sleep's
 * time_sleep) in a complete native stack (--unwind dwarf, auto).
 */
uint64_t pyt_native_under(const char *folded, const char *prefix, const char *py,
			  const char *native);

/*
 * Appends a line to fails: a test that checks many things tells every
 * failure at its end, not the first alone.
 */
void pyt_fail(char *fails, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/*
 * A failed test keeps what it saw: r's output and stderr, and the truth
 * files of dir (if given), in $PROFILE_ARTIFACTS/python/NAME.{out,err,truth}.
 */
void pyt_keep(const char *name, const struct run_result *r, const char *dir);

/* PROFILE(...): profile_bin() and its arguments, NULL-terminated. */
#define PYT_PROFILE(...) ((char *[]){ (char *)profile_bin(), __VA_ARGS__, NULL })

#endif
