// SPDX-License-Identifier: GPL-2.0
/*
 * interp/node's frame walker and namer on real Node processes: the
 * machine's node (PATH) and Node 18, 20, 22, 24 of $PROFILE_NODE_DIR
 * (scripts/fetch-node.sh) run tests/workloads/node/render.js (render ->
 * descend x11 -> scoreRow) under V8 flags that make its code interpreted
 * (--jitless), baseline (--always-sparkplug --no-opt) or optimized (its
 * own hot loops); the main thread is stopped a few times (PTRACE_SEIZE +
 * PTRACE_INTERRUPT), its registers and a copy of its stack from sp up
 * (as --unwind dwarf samples carry) walked, and each JavaScript frame
 * named from /proc/PID/mem. The names must come in the program's order,
 * from its file, with lines inside the functions.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "interp/node/node.h"
#include "interp/python/python.h"

#define STOPS 8
#define MAX_STOPS 48
#define STACK_COPY (64 * 1024)

enum fn { FN_SCORE, FN_DESCEND, FN_RENDER, NR_FN };
static const char *const fn_names[NR_FN] = { "scoreRow", "descend", "render" };
static const char *const fn_defs[NR_FN] = { "function scoreRow(", "function descend(",
					    "  render(" };

struct mode {
	const char *name;
	const char *flags[4];
	const char *maglev_flag;	/* added where V8 has Maglev (Node 20+) */
	int settle_ms;		/* after "ready", before the first stop */
	bool lines;		/* every interpreted frame must have its line */
	uint8_t want_kind;	/* a frame of the workload of this kind must be met */
	bool exact_depth;	/* no inlining: scoreRow under exactly 11 descend */
};

static const struct mode modes[] = {
	{ "jitless", { "--jitless", "--no-enable-lazy-source-positions" }, NULL, 200, true,
	  NODE_CODE_INTERPRETED, true },
	{ "jitless-lazy-positions", { "--jitless" }, NULL, 200, false, NODE_CODE_INTERPRETED, true },
	{ "sparkplug", { "--always-sparkplug", "--no-opt" }, "--no-maglev", 300, false,
	  NODE_CODE_BASELINE, true },
	/* Its hot loops tier up; without inlining, so that every call keeps its frame. */
	{ "optimized", { "--no-turbo-inlining" }, "--no-maglev-inlining", 2500, false,
	  NODE_CODE_OPTIMIZED, true },
};

struct tally {
	unsigned int stops, in_render, js, named, lines, kinds[NODE_CODE_OPTIMIZED + 1];
	uint64_t walk_ns, name_ns, walk_reads, name_reads;
};

/* A reader counting the reads of the one under it (the cost figures of the report). */
struct counted {
	struct node_mem under;
	uint64_t reads;
};

static int counted_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct counted *c = ctx;

	c->reads++;
	return c->under.read(c->under.ctx, addr, buf, len);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool kind_met(const struct tally *t, const struct mode *m)
{
	if (m->want_kind == NODE_CODE_OPTIMIZED)
		return t->kinds[NODE_CODE_MAGLEV] + t->kinds[NODE_CODE_TURBOFAN] +
			       t->kinds[NODE_CODE_OPTIMIZED] > 0;
	return t->kinds[m->want_kind] > 0;
}

static const char *src_path(const char *rel, char *buf, size_t len)
{
	const char *src = getenv("PROFILE_SRCDIR");

	snprintf(buf, len, "%s/%s", src ? src : ".", rel);
	return buf;
}

/* Each function's first line in the workload, by the text of its definition. */
static void def_lines(const char *js, int lines[NR_FN])
{
	char buf[512];
	FILE *f = fopen(js, "r");
	int n = 0;

	ck_assert_msg(f, "%s: %s", js, strerror(errno));
	memset(lines, 0, sizeof(int) * NR_FN);
	while (fgets(buf, sizeof(buf), f)) {
		n++;
		for (int i = 0; i < NR_FN; i++)
			if (!lines[i] && !strncmp(buf, fn_defs[i], strlen(fn_defs[i])))
				lines[i] = n;
	}
	fclose(f);
	for (int i = 0; i < NR_FN; i++)
		ck_assert_int_gt(lines[i], 0);
}

static pid_t launch(const char *node, const struct mode *m, bool maglev, const char *js,
		    int *out_fd)
{
	char *argv[10];
	int p[2], n = 0;
	pid_t pid;

	ck_assert_int_eq(pipe(p), 0);
	argv[n++] = (char *)node;
	for (int i = 0; i < 4 && m->flags[i]; i++)
		argv[n++] = (char *)m->flags[i];
	if (maglev && m->maglev_flag)
		argv[n++] = (char *)m->maglev_flag;
	argv[n++] = (char *)js;
	argv[n++] = "60";
	argv[n] = NULL;
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (!pid) {
		/* A failed check ends the test's process: the workload goes with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execv(node, argv);
		_exit(127);
	}
	close(p[1]);
	*out_fd = p[0];
	return pid;
}

static bool wait_ready(int fd)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	char buf[64];
	ssize_t n;

	if (poll(&pfd, 1, 30000) != 1)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, "ready") != NULL;
}

/* The stack from sp up, as far as it is mapped, STACK_COPY bytes at most. */
static size_t copy_stack(const struct py_mem *mem, uint64_t sp, uint8_t *buf)
{
	size_t got = 0;

	while (got < STACK_COPY) {
		uint64_t at = sp + got, end = (at | 4095) + 1;
		size_t n = end - at;

		if (n > STACK_COPY - got)
			n = STACK_COPY - got;
		if (mem->read(mem->ctx, at, buf + got, n))
			break;
		got += n;
	}
	return got;
}

static int which_fn(const char *name)
{
	for (int i = 0; i < NR_FN; i++)
		if (!strcmp(name, fn_names[i]))
			return i;
	return -1;
}

/* One stop: walk, name, check the order and the lines; count into t. */
static void check_stop(const struct node_v8_layout *l, const struct node_mem *proc,
		       const struct node_regs *r, const struct mode *m, const int def[NR_FN],
		       const char *label, struct tally *t)
{
	struct counted c = { .under = *proc };
	struct node_mem counted_mem = { counted_read, &c }, *heap = &counted_mem;
	uint64_t t0;
	static struct node_stack st;
	static struct node_fn_info info;
	int seq[NODE_MAX_FRAMES], nseq = 0;
	char trace[2048] = "";
	size_t tl = 0;

	t0 = now_ns();
	ck_assert_int_eq(node_walk(l, r, heap, &st), 0);
	t->walk_ns += now_ns() - t0;
	t->walk_reads += c.reads;
	c.reads = 0;
	t->stops++;
	for (unsigned int i = 0; i < st.nr_frames; i++) {
		const struct node_frame *f = &st.frames[i];
		int fn, err;

		if (f->kind == NODE_CODE_TYPED)
			continue;
		t->js++;
		t0 = now_ns();
		err = node_name_frame(l, heap, f, &info);
		t->name_ns += now_ns() - t0;
		if (err) {
			tl += (size_t)snprintf(trace + tl, sizeof(trace) - tl, " [%s]", strerror(-err));
			continue;
		}
		t->named++;
		if (info.line)
			t->lines++;
		if (tl < sizeof(trace) - 64)
			tl += (size_t)snprintf(trace + tl, sizeof(trace) - tl, " %s:%d/%d(k%u)",
					       info.name, info.line, info.first_line, f->kind);
		fn = which_fn(info.name);
		if (fn < 0)
			continue;
		seq[nseq++] = fn;
		t->kinds[f->kind]++;
		ck_assert_msg(strstr(info.file, "render.js"), "%s: %s in file %s", label, info.name,
			      info.file);
		if (info.first_line)
			ck_assert_msg(info.first_line == def[fn], "%s: %s starts at %d, not %d", label,
				      info.name, info.first_line, def[fn]);
		if (info.line)
			ck_assert_msg(info.line >= def[fn] && info.line <= def[fn] + 7,
				      "%s: %s at line %d, defined at %d", label, info.name, info.line,
				      def[fn]);
		else if (m->lines && f->kind == NODE_CODE_INTERPRETED)
			ck_abort_msg("%s: %s: no line (offset %d)", label, info.name, f->offset);
	}
	t->name_reads += c.reads;
	if (getenv("NODE_WALK_VERBOSE"))
		fprintf(stderr, "node_walk: %s: %u frames, %u native, status %u:%s\n", label,
			st.nr_frames, st.native_frames, st.status, trace);
	if (!nseq || seq[nseq - 1] != FN_RENDER) {
		fprintf(stderr, "node_walk: %s: stop outside render:%s\n", label, trace);
		return;
	}
	t->in_render++;
	/* Leaf first: scoreRow at most once, then descend, then render once. */
	int i = 0, descends = 0;

	if (seq[0] == FN_SCORE)
		i++;
	for (; i < nseq - 1; i++, descends++)
		ck_assert_msg(seq[i] == FN_DESCEND, "%s: out of order:%s", label, trace);
	if (m->exact_depth && seq[0] == FN_SCORE)
		ck_assert_msg(descends == 11, "%s: %d descend frames:%s", label, descends, trace);
	ck_assert_msg(descends > 0 || seq[0] != FN_SCORE || !m->exact_depth, "%s:%s", label, trace);
}

static void run_mode(const char *node, const struct mode *m, const char *label)
{
	char js[4096], tag[256];
	struct node_interp ni;
	struct errmsg why;
	struct py_proc_mem pm;
	static struct py_snap snap;
	struct node_mem heap;
	struct tally t = { 0 };
	static uint8_t stack[STACK_COPY];
	int def[NR_FN], fd, status, bin;
	pid_t pid;

	src_path("tests/workloads/node/render.js", js, sizeof(js));
	def_lines(js, def);
	bin = open(node, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(bin, 0);
	ck_assert_msg(node_detect(bin, 0, &ni, &why) == 1, "%s: %s", node, why.text);
	close(bin);
	pid = launch(node, m, ni.v8.ft_maglev > 0, js, &fd);
	if (!wait_ready(fd)) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		ck_abort_msg("%s: %s %s never said ready", label, node, m->name);
	}
	usleep((useconds_t)m->settle_ms * 1000);
	ck_assert_int_eq(py_proc_mem__open(&pm, pid), 0);
	/* Through a page snapshot per stop, as interp/python's walks read (getenv: direct). */
	py_snap__init(&snap, &pm.mem);
	if (getenv("NODE_WALK_NO_SNAP")) {
		heap.read = pm.mem.read;
		heap.ctx = pm.mem.ctx;
	} else {
		heap.read = snap.mem.read;
		heap.ctx = snap.mem.ctx;
	}
	ck_assert_msg(ptrace(PTRACE_SEIZE, pid, 0, 0) == 0, "seize: %s", strerror(errno));
	/* STOPS stops; more (up to MAX_STOPS) while the kind looked for is not met: a slow host tiers up late. */
	for (int s = 0; s < STOPS || (s < MAX_STOPS && !kind_met(&t, m)); s++) {
		struct user_regs_struct regs;
		struct node_regs r;

		ck_assert_int_eq(ptrace(PTRACE_INTERRUPT, pid, 0, 0), 0);
		ck_assert_int_eq(waitpid(pid, &status, __WALL), pid);
		ck_assert(WIFSTOPPED(status));
		ck_assert_int_eq(ptrace(PTRACE_GETREGS, pid, 0, &regs), 0);
		r.ip = regs.rip;
		r.sp = regs.rsp;
		r.bp = regs.rbp;
		r.stack = stack;
		r.stack_size = copy_stack(&pm.mem, regs.rsp, stack);
		snprintf(tag, sizeof(tag), "%s %s stop %d", label, m->name, s);
		py_snap__reset(&snap);
		check_stop(&ni.v8, &heap, &r, m, def, tag, &t);
		ck_assert_int_eq(ptrace(PTRACE_CONT, pid, 0, 0), 0);
		usleep(120 * 1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fd);
	py_proc_mem__close(&pm);
	fprintf(stderr,
		"node_walk: %s %s: %u stops, %u in render; JS frames %u, named %u, with line %u; "
		"workload frames: interpreted %u baseline %u maglev %u turbofan %u optimized %u; "
		"walk %.0f us/stop (%.0f reads), name %.0f us/frame (%.0f reads); %.0f system calls/stop\n",
		label, m->name, t.stops, t.in_render, t.js, t.named, t.lines,
		t.kinds[NODE_CODE_INTERPRETED], t.kinds[NODE_CODE_BASELINE], t.kinds[NODE_CODE_MAGLEV],
		t.kinds[NODE_CODE_TURBOFAN], t.kinds[NODE_CODE_OPTIMIZED],
		t.stops ? (double)t.walk_ns / 1000 / t.stops : 0,
		t.stops ? (double)t.walk_reads / t.stops : 0,
		t.js ? (double)t.name_ns / 1000 / t.js : 0, t.js ? (double)t.name_reads / t.js : 0,
		t.stops ? (double)snap.syscalls / t.stops : 0);
	ck_assert_msg(t.in_render >= t.stops / 2, "%s %s: %u of %u stops in render", label, m->name,
		      t.in_render, t.stops);
	ck_assert_uint_eq(t.named, t.js);
	ck_assert_msg(kind_met(&t, m), "%s %s: no frame of kind %u in %u stops", label, m->name,
		      m->want_kind, t.stops);
}

/* The node of PATH, as a shell finds it. */
static bool path_node(char *out, size_t len)
{
	const char *path = getenv("PATH");
	char dirs[4096];

	snprintf(dirs, sizeof(dirs), "%s", path ? path : "/usr/bin:/bin");
	for (char *save, *d = strtok_r(dirs, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
		snprintf(out, len, "%s/node", d);
		if (!access(out, X_OK))
			return true;
	}
	return false;
}

START_TEST(the_machines_node)
{
	char path[4096];

	if (!path_node(path, sizeof(path))) {
		fprintf(stderr, "node_walk: no node in PATH: skipped\n");
		return;
	}
	run_mode(path, &modes[_i], "PATH node");
}
END_TEST

static const int majors[] = { 18, 20, 22, 24 };
#define NR_MODES (sizeof(modes) / sizeof(modes[0]))

START_TEST(each_fetched_node)
{
	int major = majors[_i / NR_MODES];
	const char *dir = getenv("PROFILE_NODE_DIR");
	char path[4096], label[32];

	snprintf(path, sizeof(path), "%s/node-%d/bin/node", dir ? dir : "", major);
	if (!dir || access(path, X_OK)) {
		if (_i % NR_MODES == 0)
			fprintf(stderr, "node_walk: no Node %d (%s): skipped\n", major,
				dir ? path : "PROFILE_NODE_DIR unset");
		return;
	}
	snprintf(label, sizeof(label), "Node %d", major);
	run_mode(path, &modes[_i % NR_MODES], label);
}
END_TEST

Suite *node_walk_suite(void)
{
	Suite *s = suite_create("node_walk");
	TCase *tc = tcase_create("live");

	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, the_machines_node, 0, NR_MODES);
	tcase_add_loop_test(tc, each_fetched_node, 0, NR_MODES * 4);
	suite_add_tcase(s, tc);
	return s;
}
