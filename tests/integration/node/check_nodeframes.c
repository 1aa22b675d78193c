// SPDX-License-Identifier: GPL-2.0
/*
 * JavaScript frames of a real Node process (issue 48), on the perf backend
 * and (the default, --unwind auto) on the bpf backend, a launched node and
 * (bpf) one beside a system-wide run:
 * the machine's node (PATH) runs tests/workloads/node/render.js with its
 * zlib part (render -> descend x10 -> scoreRow, and compressBatch ->
 * zlib.deflateSync), profiled by the real binary with --unwind auto and
 * --unwind dwarf. Checked in the folded output:
 *
 *  - of the samples whose leaf is code V8 ran (a JavaScript frame, or a
 *    JIT [unknown] or a Builtins_ frame left unnamed), at least 80% hold
 *    the chain render;descend x10 (11 where V8 did not inline one
 *    level);scoreRow, in that order, one frame after the other;
 *  - at least 80% of zlib's samples (deflate) stand under compressBatch;
 *  - no V8 trampoline is left between the JavaScript frames;
 *  - off-CPU (--off-cpu, wait.js): the time a thread waits for a child in
 *    execSync stands under waitChild and serve (with --stack-dump-size
 *    65528: libuv's poll keeps its epoll events, 12 KB, on the stack, and
 *    the default 16 KB copy ends before V8's frames);
 *  - --node raw keeps V8's frames: the JIT frame stays beside scoreRow, the
 *    interpreter's trampolines beside the module loader's frames (that run
 *    with --python-full-paths: the workload's file named in full).
 *
 * Those runs turn TurboFan's inlining off (--no-turbo-inlining): functions
 * inlined into optimized code are not frames of their own yet (the
 * walker's limit, interp/node/README.md), and V8 inlines render and
 * compressBatch into the script's optimized top level in about half the
 * samples. With inlining on (inlined_callers_fold) the chain descend x10;
 * scoreRow stands under some frame of render.js in 80% of them at least,
 * and deflate too.
 *
 * Measured 2026-11-27 (machine c, 2 CPUs, Node 20.20.2, 4 s at 499 Hz, quiet
 * host): without inlining, the chain in 90-98% of those samples under either
 * mode, deflate under compressBatch in 90-99%; with inlining, render missing
 * in 45-55% of them, the looser chain in 95%.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support/tests.h"

#define MIN_CHAIN_SHARE 80.0

/* How frames of the workload begin, by the file as the run names it (shortened, or in full). */
static char js_open[1100], render_open[1100], batch_open[1100], raw_leaf[1100];

static void frames_of(const char *file)
{
	snprintf(js_open, sizeof(js_open), " (%s", file);
	snprintf(render_open, sizeof(render_open), "render (%s", file);
	snprintf(batch_open, sizeof(batch_open), "compressBatch (%s", file);
	snprintf(raw_leaf, sizeof(raw_leaf), "[unknown];scoreRow (%s", file);
}

static const char *src_file(const char *rel, char *buf, size_t len)
{
	const char *src = getenv("PROFILE_SRCDIR");

	snprintf(buf, len, "%s/%s", src ? src : ".", rel);
	return buf;
}

/* The node on PATH, or NULL. */
static const char *node_on_path(char *buf, size_t len)
{
	const char *path = getenv("PATH");
	char dir[1024];

	while (path && *path) {
		size_t n = strcspn(path, ":");

		snprintf(dir, sizeof(dir), "%.*s", (int)n, path);
		snprintf(buf, len, "%s/node", dir[0] ? dir : ".");
		if (!access(buf, X_OK))
			return buf;
		path += n + (path[n] == ':');
	}
	return NULL;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = NULL;
	size_t len = 0;

	if (!f)
		return NULL;
	if (getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

/* Whether frame (len bytes) is name's JavaScript frame in render.js: "name (render.js" ... ")". */
static bool js_frame(const char *frame, size_t len, const char *name)
{
	size_t n = strlen(name);

	size_t o = strlen(js_open);

	return len > n + o && !strncmp(frame, name, n) && !strncmp(frame + n, js_open, o) &&
	       frame[len - 1] == ')';
}

/* Whether a frame is code V8 ran: a JavaScript frame "f (file...)", or one left unnamed. */
static bool v8_leaf(const char *frame, size_t len)
{
	return (len > 3 && frame[len - 1] == ')' && memchr(frame, '(', len) &&
		strncmp(frame, "[node:", 6)) ||
	       (len == 9 && !strncmp(frame, "[unknown]", 9)) || !strncmp(frame, "Builtins_", 9);
}

/*
 * Whether the stack (frames root first, ';' between) ends in
 * render;descend{10,11};scoreRow, or, not strict, descend{10,11};scoreRow
 * under any frame of render.js.
 */
static bool chain(const char *stack, size_t len, bool strict)
{
	const char *p = stack, *end = stack + len, *f[160];
	size_t fl[160], nr = 0, d = 0;

	while (p < end && nr < 160) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		size_t l = semi ? (size_t)(semi - p) : (size_t)(end - p);

		f[nr] = p;
		fl[nr++] = l;
		p += l + 1;
	}
	if (!nr || !js_frame(f[nr - 1], fl[nr - 1], "scoreRow"))
		return false;
	while (d + 2 <= nr && js_frame(f[nr - 2 - d], fl[nr - 2 - d], "descend"))
		d++;
	if ((d != 10 && d != 11) || nr < d + 2)
		return false;
	if (strict)
		return js_frame(f[nr - 2 - d], fl[nr - 2 - d], "render");
	return memmem(f[nr - 2 - d], fl[nr - 2 - d], js_open, strlen(js_open)) != NULL;
}

struct counts {
	unsigned long long total, v8_leaf, chain, trampoline_between;
	unsigned long long deflate, deflate_under_js;
	unsigned long long raw_jit_beside_leaf, trampoline_with_js;
};

static void count(const char *folded, bool strict, struct counts *c)
{
	const char *line = folded;

	memset(c, 0, sizeof(*c));
	while (*line) {
		const char *nl = strchr(line, '\n'), *sp, *leaf;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		unsigned long long n;
		const char *js;

		sp = len ? memrchr(line, ' ', len) : NULL;
		if (sp && sp > line) {
			size_t slen = (size_t)(sp - line);
			char *stack = strndup(line, slen);

			n = strtoull(sp + 1, NULL, 10);
			c->total += n;
			leaf = memrchr(line, ';', slen);
			leaf = leaf ? leaf + 1 : line;
			if (v8_leaf(leaf, (size_t)(sp - leaf))) {
				c->v8_leaf += n;
				c->chain += chain(line, slen, strict) ? n : 0;
			}
			js = stack ? strstr(stack, render_open) : NULL;
			if (js && strstr(js, "Builtins_InterpreterEntryTrampoline"))
				c->trampoline_between += n;
			if (js && strstr(stack, "Builtins_InterpreterEntryTrampoline"))
				c->trampoline_with_js += n;
			if (stack && strstr(stack, ";deflate")) {
				c->deflate += n;
				js = strstr(stack, strict ? batch_open : js_open);
				c->deflate_under_js += js && strstr(js, ";deflate") ? n : 0;
			}
			if (stack && strstr(stack, raw_leaf))
				c->raw_jit_beside_leaf += n;
			free(stack);
		}
		line += len + (nl != NULL);
	}
}

/* folded's lines of processes named comm (comm;...), the rest left out; NULL-safe. */
static char *lines_of(const char *folded, const char *comm)
{
	size_t n = strlen(comm), len = strlen(folded), o = 0;
	char *keep = malloc(len + 1);
	const char *line = folded;

	if (!keep)
		return NULL;
	while (*line) {
		const char *nl = strchr(line, '\n');
		size_t l = nl ? (size_t)(nl - line) + 1 : strlen(line);

		if (!strncmp(line, comm, n) && line[n] == ';') {
			memcpy(keep + o, line, l);
			o += l;
		}
		line += l;
	}
	keep[o] = '\0';
	return keep;
}

/*
 * 4 s of render.js's zlib run by node, inlining off where strict, into c;
 * system_wide: 3 s of a system-wide run beside node, its lines only.
 */
static void profile_node(const char *node, const char *backend, const char *unwind,
			 const char *mode, bool strict, bool full_paths, bool system_wide,
			 struct counts *c, char *err, size_t err_len)
{
	char js[1024], out[] = "/tmp/nodeframes.XXXXXX";
	char *inline_opt = strict ? "--no-turbo-inlining" : "--turbo-inlining";
	struct run_result r;
	struct bg_proc bg;
	int fd = mkstemp(out);
	char *folded, *mine;

	ck_assert_int_ge(fd, 0);
	close(fd);
	src_file("tests/workloads/node/render.js", js, sizeof(js));
	frames_of(full_paths ? js : "render.js");
	if (system_wide) {
		bg_start(&bg, (char *[]){ (char *)node, inline_opt, js, "6", "zlib", NULL });
		run_ok(&r, (char *[]){ (char *)profile_bin(), "-v", "--backend", (char *)backend,
				       "--unwind", (char *)unwind, "--node", (char *)mode, "-F",
				       "499", "-U", "-f", "--output", out, "3", NULL },
		       60);
		bg_stop(&bg);
	} else {
		run_ok(&r, (char *[]){ (char *)profile_bin(), "-v", "--backend", (char *)backend,
				       "--unwind", (char *)unwind, "--node", (char *)mode,
				       full_paths ? "--python-full-paths" : "--quiet", "-F", "499",
				       "-U", "-f", "--output", out, "--", (char *)node, inline_opt,
				       js, "4", "zlib", NULL },
		       60);
	}
	folded = slurp(out);
	unlink(out);
	ck_assert_msg(folded, "no output from the run");
	mine = system_wide ? lines_of(folded, "node") : folded;
	ck_assert_ptr_nonnull(mine);
	count(mine, strict, c);
	snprintf(err, err_len, "%s", r.err);
	ck_assert_msg(strstr(r.err, "runs Node.js"), "-v named no Node process: %.2000s", r.err);
	if (mine != folded)
		free(mine);
	free(folded);
	run_result_free(&r);
}

/*
 * The bpf backend's default (auto) takes a Node process's samples as stack
 * copies, its tables never loaded (first_copies.c): its in-kernel walk of
 * native frames would leave the JavaScript ones unread (0.31 of the samples
 * held scoreRow there, the first copies' only, against 0.95 now). So does
 * a system-wide run, for Node's processes only (other new processes' first
 * samples stay frame-pointer walks there).
 */
static const struct {
	const char *backend, *unwind;
	bool system_wide;
} modes[] = { { "perf", "auto", false },
	      { "perf", "dwarf", false },
	      { "bpf", "auto", false },
	      { "bpf", "auto", true } };

START_TEST(javascript_chain_in_order)
{
	char nodebuf[1100], err[16384];
	const char *node = node_on_path(nodebuf, sizeof(nodebuf));
	struct counts c;
	double share;

	if (!node) {
		fprintf(stderr, "nodeframes: no node on PATH: skipped\n");
		return;
	}
	profile_node(node, modes[_i].backend, modes[_i].unwind, "mixed", true, false,
		     modes[_i].system_wide, &c, err, sizeof(err));
	share = c.v8_leaf ? 100.0 * (double)c.chain / (double)c.v8_leaf : 0;
	fprintf(stderr,
		"nodeframes: %s --unwind %s%s: %llu samples, %llu with V8's code as leaf, %.1f%% "
		"of them with render;descend x10;scoreRow; deflate %llu, %llu under "
		"compressBatch\n",
		modes[_i].backend, modes[_i].unwind, modes[_i].system_wide ? " system-wide" : "",
		c.total, c.v8_leaf, share, c.deflate, c.deflate_under_js);
	ck_assert_msg(c.v8_leaf >= 200, "%s --unwind %s: %llu samples of V8's code: %.3000s",
		      modes[_i].backend, modes[_i].unwind, c.v8_leaf, err);
	ck_assert_msg(share >= MIN_CHAIN_SHARE,
		      "%s --unwind %s: the chain in %.1f%% of %llu samples (at least %.0f%%): %.3000s",
		      modes[_i].backend, modes[_i].unwind, share, c.v8_leaf, MIN_CHAIN_SHARE, err);
	ck_assert_msg(c.trampoline_between * 20 <= c.v8_leaf,
		      "%s --unwind %s: %llu samples keep V8's trampoline between JavaScript frames",
		      modes[_i].backend, modes[_i].unwind, c.trampoline_between);
	ck_assert_msg(c.deflate >= 20 && c.deflate_under_js * 10 >= c.deflate * 8,
		      "%s --unwind %s: %llu of %llu deflate samples under compressBatch",
		      modes[_i].backend, modes[_i].unwind, c.deflate_under_js, c.deflate);
}
END_TEST

START_TEST(inlined_callers_fold)
{
	char nodebuf[1100], err[16384];
	const char *node = node_on_path(nodebuf, sizeof(nodebuf));
	struct counts c;
	double share;

	if (!node) {
		fprintf(stderr, "nodeframes: no node on PATH: skipped\n");
		return;
	}
	profile_node(node, "perf", "dwarf", "mixed", false, false, false, &c, err, sizeof(err));
	share = c.v8_leaf ? 100.0 * (double)c.chain / (double)c.v8_leaf : 0;
	fprintf(stderr,
		"nodeframes: inlining on: %llu samples, %.1f%% of %llu with descend x10;scoreRow "
		"under render.js; deflate %llu, %llu under render.js\n",
		c.total, share, c.v8_leaf, c.deflate, c.deflate_under_js);
	ck_assert_msg(c.v8_leaf >= 200 && share >= MIN_CHAIN_SHARE,
		      "inlining on: the chain in %.1f%% of %llu samples: %.3000s", share, c.v8_leaf,
		      err);
	ck_assert_msg(c.deflate >= 20 && c.deflate_under_js * 10 >= c.deflate * 8,
		      "inlining on: %llu of %llu deflate samples under render.js",
		      c.deflate_under_js, c.deflate);
}
END_TEST

START_TEST(raw_keeps_v8_frames)
{
	char nodebuf[1100], err[16384];
	const char *node = node_on_path(nodebuf, sizeof(nodebuf));
	struct counts c;

	if (!node) {
		fprintf(stderr, "nodeframes: no node on PATH: skipped\n");
		return;
	}
	profile_node(node, "perf", "dwarf", "raw", true, true, false, &c, err, sizeof(err));
	fprintf(stderr, "nodeframes: --node raw: %llu samples, %llu with the JIT frame beside "
			"scoreRow\n", c.total, c.raw_jit_beside_leaf);
	ck_assert_msg(c.raw_jit_beside_leaf * 2 >= c.v8_leaf,
		      "--node raw: %llu of %llu samples keep the JIT frame beside scoreRow",
		      c.raw_jit_beside_leaf, c.v8_leaf);
	ck_assert_msg(c.trampoline_with_js * 2 >= c.v8_leaf,
		      "--node raw: V8's trampolines in %llu of %llu samples", c.trampoline_with_js,
		      c.v8_leaf);
}
END_TEST

/* The sum of the folded counts of lines whose stack holds every one of needles (NULL-ended). */
static unsigned long long sum_with(const char *folded, const char *const *needles)
{
	unsigned long long sum = 0;
	const char *line = folded;

	while (*line) {
		const char *nl = strchr(line, '\n'), *sp;
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		char *l = strndup(line, len);
		bool all = l != NULL;

		for (size_t i = 0; all && needles[i]; i++)
			all = strstr(l, needles[i]) != NULL;
		sp = l ? strrchr(l, ' ') : NULL;
		if (all && sp)
			sum += strtoull(sp + 1, NULL, 10);
		free(l);
		line += len + (nl != NULL);
	}
	return sum;
}

/*
 * The machine's node (NULL, said skipped, where PATH has none), the output
 * file made from its template out, and tests/workloads/node/WORKLOAD's path.
 */
static const char *node_and_files(char *nodebuf, size_t len, char *out, const char *workload,
				  char *js, size_t js_len)
{
	const char *node = node_on_path(nodebuf, len);
	char rel[256];
	int fd;

	if (!node) {
		fprintf(stderr, "nodeframes: no node on PATH: skipped\n");
		return NULL;
	}
	fd = mkstemp(out);
	ck_assert_int_ge(fd, 0);
	close(fd);
	snprintf(rel, sizeof(rel), "tests/workloads/node/%s", workload);
	src_file(rel, js, js_len);
	return node;
}

/*
 * A main thread busy for 700 ms at each drain (profile-seams: a large
 * binary's symbols read, say) keeps a Node process's copies coming: their
 * reader thread renews the lease (first_copies.c). Without it, 104 of a -p
 * run's 157 samples went by frame pointers (no JavaScript frame), the chain
 * in 52 of 154.
 */
START_TEST(busy_main_thread_keeps_the_copies)
{
	char nodebuf[1100], js[1024], out[] = "/tmp/nodebusy.XXXXXX", pid[16];
	const char *node = node_and_files(nodebuf, sizeof(nodebuf), out, "render.js", js, sizeof(js));
	struct run_result r;
	struct bg_proc bg;
	struct counts c;
	char *folded;
	double share;

	if (!node)
		return;
	frames_of("render.js");
	bg_start(&bg, (char *[]){ (char *)node, "--no-turbo-inlining", js, "8", NULL });
	ck_assert_str_eq(bg.first_line, "ready");
	snprintf(pid, sizeof(pid), "%d", (int)bg.pid);
	run_ok(&r, (char *[]){ "/usr/bin/env", "PROFILE_TEST_SLOW_DRAIN_MS=700", (char *)seams_bin(),
			       "-v", "--backend", "bpf", "-F", "499", "-f", "--output", out, "-p",
			       pid, "3", NULL },
	       60);
	bg_stop(&bg);
	folded = slurp(out);
	unlink(out);
	ck_assert_msg(folded, "no output from the run");
	count(folded, true, &c);
	share = c.v8_leaf ? 100.0 * (double)c.chain / (double)c.v8_leaf : 0;
	fprintf(stderr, "nodeframes: drains 700 ms late: the chain in %.1f%% of %llu samples\n",
		share, c.v8_leaf);
	ck_assert_msg(strstr(r.err, " 0 by frame pointers (the copies' lease out"),
		      "samples by frame pointers, the lease out: %.3000s", r.err);
	ck_assert_msg(c.v8_leaf >= 200 && share >= MIN_CHAIN_SHARE,
		      "the chain in %.1f%% of %llu samples: %.3000s", share, c.v8_leaf, r.err);
	free(folded);
	run_result_free(&r);
}
END_TEST

START_TEST(offcpu_waits_under_javascript)
{
	char nodebuf[1100], js[1024], out[] = "/tmp/nodeoffcpu.XXXXXX";
	const char *node = node_and_files(nodebuf, sizeof(nodebuf), out, "wait.js", js, sizeof(js));
	unsigned long long waits, under_js;
	struct run_result r;
	char *folded;

	if (!node)
		return;
	run_ok(&r, (char *[]){ (char *)profile_bin(), "-v", "--off-cpu", "--backend", "perf",
			       "--unwind", "dwarf", "--stack-dump-size", "65528", "-U", "-f",
			       "--output", out, "--", (char *)node, js, "3", NULL },
	       60);
	folded = slurp(out);
	unlink(out);
	ck_assert_msg(folded, "no output from the run");
	waits = sum_with(folded, (const char *const[]){ "node::SyncProcessRunner::Spawn", NULL });
	under_js = sum_with(folded, (const char *const[]){ "serve (wait.js", "waitChild (wait.js",
							    "node::SyncProcessRunner::Spawn", NULL });
	fprintf(stderr, "nodeframes: off-CPU: %llu us waiting in execSync, %llu under "
			"serve;waitChild\n", waits, under_js);
	ck_assert_msg(waits >= 1000000 && under_js * 10 >= waits * 8,
		      "off-CPU: %llu of %llu us under serve;waitChild: %.3000s", under_js, waits,
		      r.err);
	free(folded);
	run_result_free(&r);
}
END_TEST

Suite *nodeframes_suite(void)
{
	Suite *s = suite_create("nodeframes");
	TCase *tc = tcase_create("perf");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, javascript_chain_in_order, 0, 4);
	tcase_add_test(tc, inlined_callers_fold);
	tcase_add_test(tc, raw_keeps_v8_frames);
	tcase_add_test(tc, offcpu_waits_under_javascript);
	tcase_add_test(tc, busy_main_thread_keeps_the_copies);
	suite_add_tcase(s, tc);
	return s;
}
