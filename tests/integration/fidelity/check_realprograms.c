// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 15, "Measured": real programs from Debian packages (gzip, xz,
 * sqlite3, python3, find, a cat | gzip | xz pipeline), each profiled by
 * both backends at the same time, in fp and in dwarf mode (four profilers
 * at once on the same -p processes). Between backends, in each mode:
 * every stack above 1% within 2 points (python3 in fp mode: 5, below), the
 * share of samples with an [unknown] frame within 1 point, and no stack
 * with more than 4 identical
 * unresolved frames in a row (same address: a walk that does not move).
 *
 * "The same execution": the programs are stopped (SIGSTOP) until all four
 * profilers say "sampling started", then run for a fixed amount of their
 * own CPU time and are stopped again before the profilers are told to end.
 * What is left between backends is sampling noise: with N samples each, a
 * share p differs by sqrt(2p(1-p)/N); at N >= 12000 that is at most 0.65
 * points for a stack (p = 0.5; 2 points is 3 standard deviations) and 0.6
 * for the [unknown] share of python3 in fp mode (p = 0.4).
 *
 * One difference is by design today: with -p the perf backend samples on
 * per-task events (issue 15, case 2), the bpf backend on per-CPU events
 * filtered in the kernel. A per-CPU timer that expires while interrupts are
 * off around a context switch fires when the incoming task re-enables
 * them, so bpf charges more samples to finish_task_switch and interrupt
 * exits: on a busy host, 2.75% against 1.22% of the pipeline's samples,
 * 3 points on its largest stack. The programs and the profilers therefore
 * run at nice -20, so that the host's load preempts them less (the
 * profilers too: at nice 0 their rings overflowed under the programs).
 * Samples taken as a task is switched in (finish_task_switch on the
 * stack) are left out of the comparison: which profiler's timer fires
 * there depends on the order of the four profilers' events and timers, not
 * on the program. find waiting for its directory blocks (io_schedule) had
 * 10.9% of bpf's samples there and 14.0% of perf's in one CI run, the
 * opposite way round from the pipeline's.
 *
 * A program that is not installed is skipped with a message.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/tests.h"

#define FREQ "3999"
#define CPU_TARGET 4.0		/* seconds of the programs' own CPU time per window */
#define WALL_LIMIT 15.0		/* ... or this long, on a very busy host */
#define MIN_SAMPLES 12000	/* below this, 2 points is no longer well above noise */
#define MAX_STAGES 3
#define NR_PROFILERS 4

static char tmpdir[] = "/tmp/profile-realprog-XXXXXX";
static char data_file[PATH_MAX], sql_file[PATH_MAX];

/* 32 MiB of text that compresses like text: lines of words from a fixed vocabulary. */
static void write_data(const char *path)
{
	static char vocab[4096][10];
	uint32_t x = 12345;
	size_t written = 0;
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 4096; i++) {
		int len = 2 + (x = x * 1103515245 + 12345) % 8;

		for (int j = 0; j < len; j++)
			vocab[i][j] = 'a' + (x = x * 1103515245 + 12345) % 26;
		vocab[i][len] = '\0';
	}
	while (written < 32u << 20) {
		for (int w = 0; w < 12; w++) {
			x = x * 1103515245 + 12345;
			written += fprintf(f, "%s ", vocab[(x >> 8) % 4096]);
		}
		x = x * 1103515245 + 12345;
		written += fprintf(f, "%u\n", x >> 2);
	}
	ck_assert_int_eq(fclose(f), 0);
}

/* A table, an index and many joins, sorts and LIKEs: more work than any window needs. */
static void write_sql(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs("CREATE TABLE t(a INTEGER PRIMARY KEY, b TEXT, c INTEGER);\n"
	      "WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n LIMIT 200000)\n"
	      "INSERT INTO t SELECT x, hex(randomblob(8)), x % 1000 FROM n;\n"
	      "CREATE INDEX tc ON t(c);\n",
	      f);
	for (int i = 0; i < 3000; i++)
		fprintf(f, "SELECT count(*), sum(length(t2.b)) FROM t t1 JOIN t t2 ON t1.c = t2.c "
			   "AND t2.a < %d WHERE t1.b LIKE '%%A%d%%' GROUP BY t1.c %% 17 ORDER BY 2 "
			   "LIMIT 3;\n",
			300 + i % 7, i % 10);
	ck_assert_int_eq(fclose(f), 0);
}

static void setup_files(void)
{
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
	snprintf(data_file, sizeof(data_file), "%s/data.txt", tmpdir);
	snprintf(sql_file, sizeof(sql_file), "%s/load.sql", tmpdir);
	write_data(data_file);
	write_sql(sql_file);
}

static void remove_files(void)
{
	unlink(data_file);
	unlink(sql_file);
	rmdir(tmpdir);
}

struct stage {
	const char *argv[24];
	const char *stdin_path;		/* NULL: /dev/null, or the previous stage's output */
};

struct program {
	const char *name;
	struct stage stages[MAX_STAGES];
	int nr_stages;
};

static const char python_loop[] =
	"def fib(n):\n"
	"    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
	"def work():\n"
	"    d = {}\n"
	"    for i in range(2000):\n"
	"        d[str(i)] = sorted([i % 7, i % 5, i % 3])\n"
	"    return len(d)\n"
	"while True:\n"
	"    fib(18)\n"
	"    work()\n";

#define D data_file
#define STAGE(...) { .argv = { __VA_ARGS__ } }
#define U "/usr"
static struct program programs[] = {
	{ "gzip", { STAGE("/usr/bin/gzip", "-9", "-c", D, D, D, D, D, D, D, D) }, 1 },
	{ "xz", { STAGE("/usr/bin/xz", "-9", "-T1", "-c", D) }, 1 },
	{ "sqlite3", { { .argv = { "/usr/bin/sqlite3", ":memory:" }, .stdin_path = sql_file } }, 1 },
	{ "python3", { STAGE("/usr/bin/python3", "-c", python_loop) }, 1 },
	{ "find", { STAGE("/usr/bin/find", U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U,
			  U, "-xdev") }, 1 },
	{ "pipeline",
	  { STAGE("/bin/cat", D, D, D, D, D, D, D, D), STAGE("/usr/bin/gzip", "-1"),
	    STAGE("/usr/bin/xz", "-1", "-T1") },
	  3 },
};
#undef U
#undef STAGE
#undef D

/* ---- the processes ---- */

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Fork and exec argv with the given descriptors and nice value; it dies with this test. */
static pid_t spawn(const char *const argv[], int in, int out, int err, int nice)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (nice)
			setpriority(PRIO_PROCESS, 0, nice);
		dup2(in, 0);
		dup2(out, 1);
		dup2(err, 2);
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execv(argv[0], (char *const *)argv);
		_exit(126);
	}
	return pid;
}

/* The program's stages, chained by pipes, each stopped once it runs its own image. */
static int start_program(const struct program *p, pid_t *pids)
{
	int devnull = open("/dev/null", O_RDWR), in = devnull;
	char self[PATH_MAX] = "";

	ck_assert_int_ge(devnull, 0);
	ck_assert_int_gt(readlink("/proc/self/exe", self, sizeof(self) - 1), 0);
	for (int i = 0; i < p->nr_stages; i++) {
		const struct stage *s = &p->stages[i];
		int pfd[2] = { -1, -1 }, out = devnull;

		if (s->stdin_path) {
			in = open(s->stdin_path, O_RDONLY);
			ck_assert_int_ge(in, 0);
		}
		if (i + 1 < p->nr_stages) {
			ck_assert_int_eq(pipe(pfd), 0);
			out = pfd[1];
		}
		/* Preempted less: see the top of this file. */
		pids[i] = spawn(s->argv, in, out, devnull, -20);
		if (in != devnull)
			close(in);
		if (pfd[1] >= 0)
			close(pfd[1]);
		in = pfd[0] >= 0 ? pfd[0] : devnull;
	}
	close(devnull);
	for (int i = 0; i < p->nr_stages; i++) {
		char path[64], exe[PATH_MAX];
		double t0 = mono();
		ssize_t n;

		/* Past the exec: the profilers read its maps, not this test's. */
		snprintf(path, sizeof(path), "/proc/%d/exe", (int)pids[i]);
		do {
			n = readlink(path, exe, sizeof(exe) - 1);
			exe[n > 0 ? n : 0] = '\0';
		} while ((n <= 0 || !strcmp(exe, self)) && mono() - t0 < 5 && !usleep(1000));
		ck_assert_msg(n > 0 && strcmp(exe, self), "%s did not start", p->stages[i].argv[0]);
		kill(pids[i], SIGSTOP);
	}
	return p->nr_stages;
}

/* utime + stime of the processes, in seconds. */
static double cpu_seconds(const pid_t *pids, int n)
{
	double sum = 0;

	for (int i = 0; i < n; i++) {
		char path[64], buf[1024], *p;
		unsigned long long ut = 0, st = 0;
		FILE *f;
		size_t len;

		snprintf(path, sizeof(path), "/proc/%d/stat", (int)pids[i]);
		f = fopen(path, "r");
		if (!f)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		p = strrchr(buf, ')');
		/* After the comm: state ppid pgrp session tty tpgid flags minflt cminflt majflt
		 * cmajflt utime stime */
		if (p && sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
				&st) == 2)
			sum += (double)(ut + st) / sysconf(_SC_CLK_TCK);
	}
	return sum;
}

static void signal_all(const pid_t *pids, int n, int sig)
{
	for (int i = 0; i < n; i++)
		kill(pids[i], sig);
}

struct profiler {
	const char *backend, *unwind;
	char out[PATH_MAX], err[PATH_MAX];
	pid_t pid;
	int status;
	char *out_text, *err_text;
};

static char *slurp(const char *path)
{
	struct stat st;
	char *buf;
	FILE *f = fopen(path, "r");
	size_t len;

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fstat(fileno(f), &st), 0);
	buf = malloc(st.st_size + 1);
	ck_assert_ptr_nonnull(buf);
	len = fread(buf, 1, st.st_size, f);
	buf[len] = '\0';
	fclose(f);
	return buf;
}

static void start_profiler(struct profiler *pr, const char *name, int idx, const char *pidlist)
{
	const char *argv[24];
	int n = 0, out, err, devnull = open("/dev/null", O_RDONLY);

	snprintf(pr->out, sizeof(pr->out), "%s/%s.%d.folded", tmpdir, name, idx);
	snprintf(pr->err, sizeof(pr->err), "%s/%s.%d.err", tmpdir, name, idx);
	out = open(pr->out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	err = open(pr->err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ck_assert(out >= 0 && err >= 0 && devnull >= 0);
	argv[n++] = profile_bin();
	argv[n++] = "--backend";
	argv[n++] = pr->backend;
	argv[n++] = "--unwind";
	argv[n++] = pr->unwind;
	/*
	 * In dwarf mode the bpf backend reads Python frames at the drain, the
	 * perf backend right after the sample (README, Python): their Python
	 * shares differ by design there. The native stacks are compared;
	 * Python frames against the program's own record in tests/integration/python.
	 */
	if (!strcmp(pr->unwind, "dwarf")) {
		argv[n++] = "--python";
		argv[n++] = "off";
	}
	/* -A: addresses, to tell a repeated frame from distinct unnamed ones. */
	argv[n++] = "-v";
	argv[n++] = "-A";
	argv[n++] = "-f";
	argv[n++] = "-F";
	argv[n++] = FREQ;
	argv[n++] = "-p";
	argv[n++] = pidlist;
	argv[n++] = "60";	/* ends by itself should this test die */
	argv[n] = NULL;
	pr->pid = spawn(argv, devnull, out, err, -20);
	close(out);
	close(err);
	close(devnull);
}

static bool profiler_ready(struct profiler *pr)
{
	char *err = slurp(pr->err);
	bool ready = strstr(err, "sampling started") != NULL;

	if (!ready && waitpid(pr->pid, &pr->status, WNOHANG) == pr->pid)
		ck_abort_msg("profile --backend %s --unwind %s ended early: %.400s", pr->backend,
			     pr->unwind, err);
	free(err);
	return ready;
}

static void finish_profiler(struct profiler *pr)
{
	double t0 = mono();
	pid_t got;

	kill(pr->pid, SIGINT);
	while ((got = waitpid(pr->pid, &pr->status, WNOHANG)) == 0 && mono() - t0 < 60)
		usleep(20000);
	if (got != pr->pid) {
		kill(pr->pid, SIGKILL);
		waitpid(pr->pid, &pr->status, 0);
	}
	pr->out_text = slurp(pr->out);
	pr->err_text = slurp(pr->err);
	unlink(pr->out);
	unlink(pr->err);
}

/* A failed comparison keeps its four profiles: $PROFILE_ARTIFACTS/realprograms/. */
static void keep_profiles(const char *name, const struct profiler *prof)
{
	const char *art = getenv("PROFILE_ARTIFACTS");
	char path[PATH_MAX];

	if (!art)
		return;
	snprintf(path, sizeof(path), "%s/realprograms", art);
	mkdir(path, 0755);
	for (int i = 0; i < NR_PROFILERS; i++) {
		const char *texts[2] = { prof[i].out_text, prof[i].err_text };

		for (int t = 0; t < 2; t++) {
			FILE *f;

			snprintf(path, sizeof(path), "%s/realprograms/%s.%s.%s.%s", art, name,
				 prof[i].unwind, prof[i].backend, t ? "err" : "folded");
			f = fopen(path, "w");
			if (f) {
				fputs(texts[t], f);
				fclose(f);
			}
		}
	}
	fprintf(stderr, "realprograms: %s: profiles kept in %s/realprograms\n", name, art);
}

/* ---- the folded profiles ---- */

struct stack_count {
	char *stack;		/* frames by name, as without -A */
	uint64_t count;
};

struct profile_counts {
	struct stack_count *stacks;
	size_t n;
	uint64_t total, unknown;	/* samples; samples with an [unknown] frame */
	uint64_t switch_ins;		/* left out: taken as the task was switched in */
	unsigned int longest_run;	/* identical unresolved frames in a row */
	char run_line[512];
};

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct stack_count *)a)->stack, ((const struct stack_count *)b)->stack);
}

/*
 * One -A frame, "0xADDR NAME+0xOFF [MODULE]", to NAME as the report without
 * -A prints it; the address in *addr (0 for frames without one, such as
 * [Missed User Stack]).
 */
static size_t frame_name(const char *f, size_t len, char *out, uint64_t *addr)
{
	const char *sp1 = memchr(f, ' ', len), *sp2 = memrchr(f, ' ', len), *end;

	*addr = 0;
	if (len < 3 || f[0] != '0' || f[1] != 'x' || !sp1 || sp1 == sp2) {
		memcpy(out, f, len);
		return len;
	}
	*addr = strtoull(f, NULL, 16);
	end = sp2;
	for (const char *p = sp2 - 1; p > sp1 + 2; p--) {
		if (p[0] == '+' && p[1] == '0' && p[2] == 'x') {
			end = p;
			break;
		}
		if (!strchr("0123456789abcdefx", *p))
			break;
	}
	memcpy(out, sp1 + 1, end - sp1 - 1);
	return end - sp1 - 1;
}

static void parse_folded(const char *text, struct profile_counts *pc)
{
	size_t cap = 0;

	memset(pc, 0, sizeof(*pc));
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		const char *sp = memrchr(line, ' ', len), *p = line;
		uint64_t count, prev = 0;
		unsigned int run = 0;
		char *names, *o, *irq;
		bool unknown = false;

		ck_assert_msg(sp, "not a folded line: %.*s", (int)len, line);
		count = strtoull(sp + 1, NULL, 10);
		names = o = malloc(sp - line + 1);
		ck_assert_ptr_nonnull(names);
		while (p < sp) {
			const char *semi = memchr(p, ';', sp - p);
			size_t flen = (semi ? semi : sp) - p, n;
			uint64_t addr;

			if (o != names)
				*o++ = ';';
			n = frame_name(p, flen, o, &addr);
			if (n == 9 && !memcmp(o, "[unknown]", 9)) {
				unknown = true;
				run = addr && addr == prev ? run + 1 : 1;
				prev = addr;
				if (run > pc->longest_run) {
					pc->longest_run = run;
					snprintf(pc->run_line, sizeof(pc->run_line), "%.*s", (int)len,
						 line);
				}
			} else {
				run = 0;
				prev = 0;
			}
			o += n;
			p += flen + (semi ? 1 : 0);
		}
		*o = '\0';
		/*
		 * The four profilers here run at once, and a ring's wake-up is an
		 * irq_work interrupt: a sample that lands in one (on its way back
		 * to user mode) is of another profiler's making, and each backend
		 * meets them at its own phase. Counted with its user stack.
		 */
		if ((irq = strstr(names, ";asm_sysvec_irq_work")))
			*irq = '\0';
		if (strstr(names, "finish_task_switch")) {
			pc->switch_ins += count;
			free(names);
			line += len + (nl ? 1 : 0);
			continue;
		}
		if (pc->n == cap) {
			cap = cap ? 2 * cap : 256;
			pc->stacks = realloc(pc->stacks, cap * sizeof(*pc->stacks));
			ck_assert_ptr_nonnull(pc->stacks);
		}
		pc->stacks[pc->n++] = (struct stack_count){ names, count };
		pc->total += count;
		if (unknown)
			pc->unknown += count;
		line += len + (nl ? 1 : 0);
	}
	/* Stacks that differ only by address print the same without -A: merge them. */
	qsort(pc->stacks, pc->n, sizeof(*pc->stacks), by_stack);
	size_t w = 0;

	for (size_t i = 0; i < pc->n; i++) {
		if (w && !strcmp(pc->stacks[w - 1].stack, pc->stacks[i].stack)) {
			pc->stacks[w - 1].count += pc->stacks[i].count;
			free(pc->stacks[i].stack);
		} else {
			pc->stacks[w++] = pc->stacks[i];
		}
	}
	pc->n = w;
}

static void free_counts(struct profile_counts *pc)
{
	for (size_t i = 0; i < pc->n; i++)
		free(pc->stacks[i].stack);
	free(pc->stacks);
}

static double fabs_diff(double a, double b)
{
	return a > b ? a - b : b - a;
}

static double share(uint64_t count, uint64_t total)
{
	return total ? 100.0 * count / total : 0;
}

/* The stack above 1% in either profile whose shares differ most; that difference. */
static double worst_stack(const struct profile_counts *a, const struct profile_counts *b,
			  const char **stack, double *sa, double *sb)
{
	size_t i = 0, j = 0;
	double worst = 0;

	*stack = "";
	*sa = *sb = 0;
	while (i < a->n || j < b->n) {
		int c = i == a->n ? 1 : j == b->n ? -1 : strcmp(a->stacks[i].stack, b->stacks[j].stack);
		double pa = c <= 0 ? share(a->stacks[i].count, a->total) : 0;
		double pb = c >= 0 ? share(b->stacks[j].count, b->total) : 0;
		const char *s = c <= 0 ? a->stacks[i].stack : b->stacks[j].stack;

		if ((pa > 1 || pb > 1) && fabs_diff(pa, pb) > worst) {
			worst = fabs_diff(pa, pb);
			*stack = s;
			*sa = pa;
			*sb = pb;
		}
		i += c <= 0;
		j += c >= 0;
	}
	return worst;
}

/* ---- the test ---- */

static const char *const modes[2] = { "fp", "dwarf" };

static bool installed(const struct program *p)
{
	for (int i = 0; i < p->nr_stages; i++)
		if (access(p->stages[i].argv[0], X_OK)) {
			fprintf(stderr, "realprograms: skipping %s: %s is not installed "
					"(scripts/install-deps.sh installs it)\n",
				p->name, p->stages[i].argv[0]);
			return false;
		}
	return true;
}

/*
 * The difference two sampling runs may show, in points, for shares pa% of
 * na and pb% of nb samples: the target, or four standard errors of the
 * difference where sampling noise exceeds it (the [unknown] share near 40%
 * needs about 45 000 samples a side before 1 point is three standard
 * errors; a run gets 12 000 to 20 000). Four, not three: the two backends'
 * timers tick in a phase of their own against the program's loops, which
 * adds to the binomial noise (find's user-mode share 10.5% against 9.4% in
 * one run of 15 700 samples, 3.3 standard errors; 0.01 points in the next).
 */
/*
 * The points two backends' shares of a stack may differ by, before the
 * standard errors: 2, but 5 for python3's stacks in fp mode, whose Python
 * frames the perf backend reads from the process right after the sample
 * while it runs on, and the bpf backend in the sample (pyshares holds them
 * to 5 and 2 points of the program's own clock). Measured here on a quiet
 * host, work()'s stack: 0.82-2.83 points apart with the binary of 6de40d5,
 * 1.40-2.32 with this one, perf's share the larger; in dwarf mode the test
 * compares native frames only.
 */
static double target_points(const struct program *prog, int mode)
{
	return !strcmp(prog->name, "python3") && mode == 0 ? 5.0 : 2.0;
}

static double allowed(double target, double pa, uint64_t na, double pb, uint64_t nb)
{
	double a = pa / 100, b = pb / 100;
	double se = 100 * sqrt(a * (1 - a) / (double)na + b * (1 - b) / (double)nb);

	return 4 * se > target ? 4 * se : target;
}

START_TEST(backends_agree_on_a_real_program)
{
	const struct program *prog = &programs[_i];
	struct profiler prof[NR_PROFILERS];
	struct profile_counts counts[NR_PROFILERS];
	pid_t pids[MAX_STAGES];
	char pidlist[64] = "";
	struct {
		double worst, sa, sb, ub, up;
		double stack_limit, unknown_limit;
		const char *stack;
	} res[2];
	double t0, c0, cpu, wall;
	bool failed = false;
	int n;

	if (!installed(prog))
		return;
	n = start_program(prog, pids);
	for (int i = 0; i < n; i++)
		snprintf(pidlist + strlen(pidlist), sizeof(pidlist) - strlen(pidlist), "%s%d",
			 i ? "," : "", (int)pids[i]);
	/* bpf fp, perf fp, bpf dwarf, perf dwarf: all four over the same execution. */
	for (int i = 0; i < NR_PROFILERS; i++) {
		memset(&prof[i], 0, sizeof(prof[i]));
		prof[i].backend = test_backends[i % 2];
		prof[i].unwind = modes[i / 2];
		start_profiler(&prof[i], prog->name, i, pidlist);
	}
	t0 = mono();
	for (int i = 0; i < NR_PROFILERS; i++)
		while (!profiler_ready(&prof[i])) {
			ck_assert_msg(mono() - t0 < 30, "profile --backend %s --unwind %s not ready",
				      prof[i].backend, prof[i].unwind);
			usleep(20000);
		}
	c0 = cpu_seconds(pids, n);
	t0 = mono();
	signal_all(pids, n, SIGCONT);
	do
		usleep(20000);
	while (cpu_seconds(pids, n) - c0 < CPU_TARGET && mono() - t0 < WALL_LIMIT);
	signal_all(pids, n, SIGSTOP);
	wall = mono() - t0;
	cpu = cpu_seconds(pids, n) - c0;
	for (int i = 0; i < NR_PROFILERS; i++)
		finish_profiler(&prof[i]);
	signal_all(pids, n, SIGKILL);
	for (int i = 0; i < n; i++)
		waitpid(pids[i], NULL, 0);

	for (int i = 0; i < NR_PROFILERS; i++) {
		ck_assert_msg(WIFEXITED(prof[i].status) && WEXITSTATUS(prof[i].status) == 0,
			      "%s: profile --backend %s --unwind %s: status %d: %.400s", prog->name,
			      prof[i].backend, prof[i].unwind, prof[i].status, prof[i].err_text);
		parse_folded(prof[i].out_text, &counts[i]);
	}
	for (int m = 0; m < 2; m++) {
		struct profile_counts *b = &counts[2 * m], *p = &counts[2 * m + 1];

		res[m].ub = share(b->unknown, b->total);
		res[m].up = share(p->unknown, p->total);
		res[m].worst = worst_stack(b, p, &res[m].stack, &res[m].sa, &res[m].sb);
		res[m].stack_limit =
			allowed(target_points(prog, m), res[m].sa, b->total, res[m].sb, p->total);
		res[m].unknown_limit = allowed(1.0, res[m].ub, b->total, res[m].up, p->total);
		fprintf(stderr,
			"realprograms: %-8s %-5s %.1f s CPU in %.1f s: samples bpf %llu perf %llu; "
			"largest stack difference %.2f points (%.2f%% vs %.2f%%); [unknown] %.2f%% vs "
			"%.2f%%; longest run of one unresolved frame %u / %u; left out at switch-in "
			"%llu / %llu\n",
			prog->name, modes[m], cpu, wall, (unsigned long long)b->total,
			(unsigned long long)p->total, res[m].worst, res[m].sa, res[m].sb, res[m].ub,
			res[m].up, b->longest_run, p->longest_run, (unsigned long long)b->switch_ins,
			(unsigned long long)p->switch_ins);
		if (b->total + b->switch_ins < MIN_SAMPLES || p->total + p->switch_ins < MIN_SAMPLES ||
		    res[m].worst > res[m].stack_limit ||
		    fabs_diff(res[m].ub, res[m].up) > res[m].unknown_limit || b->longest_run > 4 ||
		    p->longest_run > 4)
			failed = true;
	}
	if (failed)
		keep_profiles(prog->name, prof);
	for (int m = 0; m < 2; m++) {
		struct profile_counts *b = &counts[2 * m], *p = &counts[2 * m + 1];

		ck_assert_msg(b->total + b->switch_ins >= MIN_SAMPLES &&
				  p->total + p->switch_ins >= MIN_SAMPLES,
			      "%s %s: %llu and %llu samples in %.1f s (%.1f s of CPU): too few for "
			      "2 points to be well above noise (host too busy?)",
			      prog->name, modes[m], (unsigned long long)b->total,
			      (unsigned long long)p->total, wall, cpu);
		ck_assert_msg(res[m].worst <= res[m].stack_limit,
			      "%s %s: a stack at %.2f%% (bpf) and %.2f%% (perf), more than %.2f "
			      "points apart: %.600s", prog->name, modes[m], res[m].sa, res[m].sb,
			      res[m].stack_limit, res[m].stack);
		ck_assert_msg(fabs_diff(res[m].ub, res[m].up) <= res[m].unknown_limit,
			      "%s %s: samples with an [unknown] frame: %.2f%% (bpf), %.2f%% (perf), "
			      "more than %.2f points apart", prog->name, modes[m], res[m].ub, res[m].up,
			      res[m].unknown_limit);
		ck_assert_msg(b->longest_run <= 4 && p->longest_run <= 4,
			      "%s %s: %u / %u identical unresolved frames in a row: %s", prog->name,
			      modes[m], b->longest_run, p->longest_run,
			      b->longest_run > 4 ? b->run_line : p->run_line);
	}
	for (int i = 0; i < NR_PROFILERS; i++) {
		free_counts(&counts[i]);
		free(prof[i].out_text);
		free(prof[i].err_text);
	}
}
END_TEST

Suite *realprograms_suite(void)
{
	Suite *s = suite_create("realprograms");
	TCase *tc = tcase_create("realprograms");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, setup_files, remove_files);
	tcase_add_loop_test(tc, backends_agree_on_a_real_program, 0,
			    sizeof(programs) / sizeof(programs[0]));
	suite_add_tcase(s, tc);
	return s;
}
