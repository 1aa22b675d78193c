// SPDX-License-Identifier: GPL-2.0
/*
 * Python frames in a run: the registry of Python processes (interp/python)
 * fed with every sample's image, its threads read again every second and
 * given to a backend that walks them in the kernel, the pipeline's reads of
 * frames for one that cannot, and the names and places the model gives
 * them (struct interp_ops).
 */
#include "app/run/python.h"

#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "app/run/python_early.h"
#include "app/run/python_watch.h"
#include "app/run/signals.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"
#include "core/model/interp_merge.h"
#include "core/model/resolve.h"
#include "interp/python/registry.h"

/* Threads come and go: each process's list is read again this often. */
#define THREAD_SCAN_MS 1000
/*
 * What any process can make the run read (its interpreter found, its
 * thread states, thousands of them forged) is read in the main loop, which
 * also drains the samples and answers signals: at most this long a tick,
 * the rest at the next ones, and before sampling starts at most
 * SCAN_BUDGET_MS (the processes not looked at by then are looked at in the
 * first ticks).
 */
#define TICK_BUDGET_MS 20
#define SCAN_BUDGET_MS 250
/*
 * A process's thread list costs it this many times its reading's time
 * before it is read again (at least THREAD_SCAN_MS): one whose list took
 * 20 ms to read is read every 4 s, one of a few threads every second.
 */
#define SCAN_COST_SHARE 200

struct run_python {
	struct py_registry *reg;
	struct python_early *early;	/* what the perf backend's reader thread walks */
	struct backend *backend;
	const struct backend_ops *ops;
	bool raw;			/* --python raw */
	bool full_paths;		/* file names in full */
	bool changed;			/* a process found or gone since the backend was told */
	struct pipeline *pl;
	pid_t child;			/* a launched command, or -1 */
	struct python_watch watch;	/* processes that mapped an interpreter's file */
	pid_t *pending;			/* processes running at the start, not looked at yet */
	size_t nr_pending, next_pending;
	size_t scan_cursor;		/* where the last tick's thread reads stopped */
	/* -v: the ticks that ran out of time, and the costliest thread list read. */
	uint64_t ticks_over;
	int64_t slowest_us;
	pid_t slowest_pid;
	uid_t slowest_uid;
	struct interp_proc *procs;	/* what the backend was told */
	struct interp_thread *threads;
	struct told *order;		/* the order it was told them in */
	size_t cap_procs, cap_threads, cap_order;
	/* The most processes a backend's table left out at once, and whose most of them were. */
	size_t left_out, left_out_of;
	uid_t left_out_uid;
	size_t left_out_uid_procs;
};

/* A process to tell a backend of, and its place in the order. */
struct told {
	struct py_process *p;
	size_t found;			/* its place in the registry: the order it was found in */
	size_t rank;			/* how many of its owner's processes were found before it */
};

/* Reads p's threads now, and when to read them again: later the more it cost. */
static void scan_threads(struct run_python *rp, struct py_process *p, int64_t now)
{
	int64_t t0 = mono_ns(), cost_us, wait_ms;

	py_process__scan_threads(p);
	cost_us = (mono_ns() - t0) / 1000;
	wait_ms = cost_us * SCAN_COST_SHARE / 1000;
	p->next_scan_ms = now + (wait_ms > THREAD_SCAN_MS ? wait_ms : THREAD_SCAN_MS);
	p->rescan = false;
	if (cost_us > rp->slowest_us) {
		rp->slowest_us = cost_us;
		rp->slowest_pid = p->pid;
		rp->slowest_uid = p->uid;
	}
}

/*
 * Whether p's threads may be read again now, before their time, because a
 * sample met a thread the list lacked: 100 ms after the last read of a
 * cheap list, as late as the cost share allows for a costly one.
 */
static bool may_scan_early(const struct py_process *p, int64_t now)
{
	return now >= p->next_scan_ms - THREAD_SCAN_MS + 100;
}

/*
 * Whether the user chose pid's process (-p, -L, the launched command's
 * tree): a Python process as soon as it maps an interpreter, before it runs
 * one, as a command stopped before Py_Initialize (realprograms' SIGSTOP) or
 * just exec'd is. Others count once they run one: anyone can map libpython.
 */
static bool chosen(const struct run_python *rp, pid_t pid)
{
	const struct pipeline *pl = rp->pl;

	if (rp->child > 0 && pid == rp->child)
		return true;
	return pl && (pl->tree_root || pl->cfg.nr_pids || pl->cfg.nr_tids) &&
	       pipeline__wants_pid(pl, pid);
}

static void saw_image(void *ctx, const struct addr_space *as, uint32_t status)
{
	struct run_python *rp = ctx;
	struct py_process *p;
	bool fresh;

	/* A process found already costs one lookup a sample: nothing to ask of the run. */
	p = py_registry__find(rp->reg, as);
	fresh = false;
	if (!p)
		p = py_registry__look(rp->reg, as, chosen(rp, as->pid), &fresh);
	if (!p || p->gone)
		return;
	/* A thread the kernel's walk did not know (started since): its list is read at the tick. */
	if ((status & 0xff) == INTERP_NO_THREAD || (status & 0xff) == INTERP_BAD_THREAD) {
		p->rescan = true;
	}
	if (!fresh)
		return;
	rp->changed = true;
	/* Its threads at once: the first samples of the process get their frames. */
	scan_threads(rp, p, mono_ms());
	if (p->interp.micro >= 0)
		pr_info("python: pid %d runs CPython %d.%d.%d (%s)\n", (int)p->pid,
			p->interp.major, p->interp.minor, p->interp.micro, p->interp_path);
	else
		pr_info("python: pid %d runs CPython %d.%d (%s)\n", (int)p->pid, p->interp.major,
			p->interp.minor, p->interp_path);
}

static unsigned int walk(void *ctx, const struct addr_space *as, pid_t tid,
			 struct interp_frame *out, unsigned int max, uint32_t *status)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	*status = INTERP_NONE;
	if (!p || p->gone)
		return 0;
	/* A thread started since the last read: the reader thread's table gets it at the tick. */
	if (!py_process__thread(p, tid) && may_scan_early(p, mono_ms())) {
		scan_threads(rp, p, mono_ms());
		rp->changed |= py_process__thread(p, tid) != NULL;
	}
	return py_process__walk(p, tid, out, max, status);
}

/*
 * A stack's frames are named through its process's page snapshot: fresh
 * pages for each stack. Pages kept from earlier stacks would show code
 * objects and strings as they were then (a string freed since and its
 * memory another's: a live function named under an exception's message).
 */
static void begin(void *ctx, const struct addr_space *as)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	if (p && p->snap)
		py_snap__reset(p->snap);
}

static int name(void *ctx, const struct addr_space *as, const struct interp_frame *f,
		struct interp_name *out)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);
	struct py_code_info ci;
	int err;

	/*
	 * Never read: its process ended, or had its pid taken, before it was
	 * found (the registry does not read a process through a pid another
	 * held by then, issue 46).
	 */
	if (!p)
		return as->end_time || as->leader_exited ? -ESRCH : -ENOENT;
	err = py_process__name(p, f, &ci);
	/* Not named while it lived: its memory is not another's to read for it. */
	if (err && err != -ESTALE && (p->gone || as->end_time || as->leader_exited))
		err = -ESRCH;
	if (err)
		return err;
	out->name = ci.name;
	out->file = ci.file;
	out->short_file = rp->full_paths ? ci.file : py_short_filename(ci.file);
	out->line = ci.line > 0 ? (uint32_t)ci.line : 0;
	out->first_line = ci.firstline > 0 ? (uint32_t)ci.firstline : 0;
	return 0;
}

/* Frames whose samples may come after their process ended: their code objects cached now. */
static void name_now(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		     unsigned int nr)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);
	struct py_code_info ci;
	bool begun = false;

	if (!p || p->gone)
		return;
	/* Those named already cost no read: the perf backend asks at every switch-out. */
	for (unsigned int i = 0; i < nr; i++) {
		if (py_process__is_shim(p, &frames[i]) || py_process__named(p, &frames[i]))
			continue;
		if (!begun)
			begin(rp, as);
		begun = true;
		py_process__name(p, &frames[i], &ci);
	}
}

static void mapped(void *ctx, pid_t pid, const char *path)
{
	struct run_python *rp = ctx;

	if (py_registry__interpreter_name(path))
		python_watch__add(&rp->watch, pid, mono_ms());
}

static bool is_marker(void *ctx, const struct addr_space *as, const struct interp_frame *f)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	return p && py_process__is_shim(p, f);
}

static bool run_end(void *ctx, const struct addr_space *as, const struct interp_frame *frames,
		    unsigned int i, unsigned int n)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	return !p || py_process__run_end(p, frames, i, n);
}

/*
 * The interpreter's own C functions worth keeping between Python frames:
 * where a thread waits or works for the program (py-spy keeps the same).
 */
static bool worth_keeping(const char *name)
{
	static const char *const prefixes[] = { "time_", "sys_", "gc_", "os_", "unicode_",
						"thread_", "stringio_", "sre_", "PyGILState_",
						"PyThread_", "lock_", "_thread" };

	for (size_t i = 0; name && i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(name, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static uint8_t role(void *ctx, const struct addr_space *as, uint64_t ip, const char *fn)
{
	struct run_python *rp = ctx;
	struct py_process *p = py_registry__find(rp->reg, as);

	if (!p)
		return NATIVE_OTHER;
	if (py_process__in_eval(p, ip))
		return NATIVE_EVAL;
	if (!py_process__in_interpreter(p, as, ip))
		return NATIVE_OTHER;
	return worth_keeping(fn) ? NATIVE_INTERP_KEEP : NATIVE_INTERP;
}

struct run_python *run_python__new(struct pipeline *pl, struct resolver *res, bool raw,
				   bool full_paths)
{
	struct run_python *rp = calloc(1, sizeof(*rp));

	if (!rp)
		return NULL;
	rp->reg = py_registry__new();
	rp->early = python_early__new();
	if (!rp->reg || !rp->early) {
		py_registry__free(rp->reg);
		python_early__free(rp->early);
		free(rp);
		return NULL;
	}
	py_registry__set_tracker(rp->reg, pl->procs);
	rp->raw = raw;
	rp->full_paths = full_paths;
	pipeline__set_interp(pl, &(struct pipeline_interp){ rp, saw_image, walk, name_now, mapped });
	resolver__set_interp(res, &(struct interp_ops){ .ctx = rp,
							.begin = begin,
							.name = name,
							.is_marker = is_marker,
							.run_end = run_end,
							.role = role,
							.keep_native = raw });
	return rp;
}

void run_python__free(struct run_python *rp)
{
	if (!rp)
		return;
	py_registry__free(rp->reg);
	python_early__free(rp->early);
	free(rp->procs);
	free(rp->threads);
	free(rp->order);
	free(rp->pending);
	free(rp);
}

void run_python__set_backend(struct run_python *rp, struct backend *b,
			     const struct backend_ops *ops)
{
	rp->backend = b;
	rp->ops = ops;
	rp->changed = true;
}

/* Room for n entries of size each in *buf (capacity *cap). */
static int reserve(void **buf, size_t *cap, size_t n, size_t size)
{
	void *p;

	if (n <= *cap)
		return 0;
	p = realloc(*buf, n * size);
	if (!p)
		return -ENOMEM;
	*buf = p;
	*cap = n;
	return 0;
}

static int by_owner(const void *a, const void *b)
{
	const struct told *x = a, *y = b;

	if (x->p->uid != y->p->uid)
		return x->p->uid < y->p->uid ? -1 : 1;
	return (x->found > y->found) - (x->found < y->found);
}

static int by_rank(const void *a, const void *b)
{
	const struct told *x = a, *y = b;

	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return (x->found > y->found) - (x->found < y->found);
}

/*
 * The live processes in the order a backend's bounded table keeps them:
 * each owner's first, then each owner's second, and so on, by the order
 * they were found. One user's crowd of Python processes then takes its
 * share of the table, not the slots of every process found after it.
 */
static size_t order_fairly(struct run_python *rp, struct told *out)
{
	size_t n = 0;

	for (size_t i = 0; i < py_registry__count(rp->reg); i++) {
		struct py_process *p = py_registry__get(rp->reg, i);

		if (!p->gone)
			out[n++] = (struct told){ p, i, 0 };
	}
	qsort(out, n, sizeof(*out), by_owner);
	for (size_t i = 1; i < n; i++)
		if (out[i].p->uid == out[i - 1].p->uid)
			out[i].rank = out[i - 1].rank + 1;
	qsort(out, n, sizeof(*out), by_rank);
	return n;
}

/* A table left out: how many, and the owner with the most processes, for -v. */
static void note_left_out(struct run_python *rp, const struct told *order, size_t np,
			  size_t kept)
{
	size_t best = 0;
	uid_t uid = 0;

	if (np - kept <= rp->left_out)
		return;
	/* In rank order, an owner's count is its last rank + 1: the largest rank wins. */
	for (size_t i = 0; i < np; i++)
		if (order[i].rank + 1 > best) {
			best = order[i].rank + 1;
			uid = order[i].p->uid;
		}
	rp->left_out = np - kept;
	rp->left_out_of = np;
	rp->left_out_uid = uid;
	rp->left_out_uid_procs = best;
}

/* Tell a backend that walks in the kernel every process and thread now. */
static int tell_backend(struct run_python *rp)
{
	size_t nr = py_registry__count(rp->reg), nr_threads = 0, t = 0, np, kept;
	struct errmsg em = { "" };
	int err;

	for (size_t i = 0; i < nr; i++)
		nr_threads += py_registry__get(rp->reg, i)->nr_threads;
	if (reserve((void **)&rp->procs, &rp->cap_procs, nr + 1, sizeof(*rp->procs)) ||
	    reserve((void **)&rp->threads, &rp->cap_threads, nr_threads + 1, sizeof(*rp->threads)) ||
	    reserve((void **)&rp->order, &rp->cap_order, nr + 1, sizeof(*rp->order)))
		return -ENOMEM;
	np = order_fairly(rp, rp->order);
	for (size_t i = 0; i < np; i++) {
		const struct py_process *p = rp->order[i].p;

		rp->procs[i] = (struct interp_proc){ p->pid, p->interp.layout->id, rp->threads + t,
						     p->nr_threads };
		for (size_t k = 0; k < p->nr_threads; k++)
			rp->threads[t++] = (struct interp_thread){ p->threads[k].tid,
								   p->threads[k].tstate,
								   p->threads[k].check };
	}
	kept = np;
	err = rp->ops->set_interp(rp->backend, rp->procs, np, &kept, &em);
	if (err && em.text[0])
		pr_info("python: %s\n", em.text);
	if (kept < np)
		note_left_out(rp, rp->order, np, kept);
	return err;
}

/* Looks at pid's image as a sample of it would; whether that is done (found, or ended). */
static bool look_at(void *ctx, pid_t pid)
{
	struct run_python *rp = ctx;
	struct addr_space *as;

	if (!rp->pl || !proctrack__knows(rp->pl->procs, pid))
		return false;
	as = proctrack__addr_space(rp->pl->procs, pid);
	if (!as)
		return false;
	saw_image(rp, as, 0);
	return py_registry__find(rp->reg, as) != NULL || as->end_time;
}

/*
 * The processes found at the start, looked at until deadline; whether all
 * were. A signal ends the looks: the run is stopping.
 */
static bool look_pending(struct run_python *rp, int64_t deadline)
{
	while (rp->next_pending < rp->nr_pending) {
		if (mono_ms() >= deadline || signals__stop_requested())
			return false;
		look_at(rp, rp->pending[rp->next_pending++]);
	}
	free(rp->pending);
	rp->pending = NULL;
	rp->nr_pending = rp->next_pending = 0;
	return true;
}

/*
 * The thread lists due (asked again, or their time come), from where the
 * last tick stopped, until deadline: a crowd of processes, each with
 * thousands of thread states, is read over many ticks, each process in
 * turn, and the tick still ends in time.
 */
static bool scan_due(struct run_python *rp, int64_t now, int64_t deadline)
{
	size_t nr = py_registry__count(rp->reg);

	if (rp->scan_cursor >= nr)
		rp->scan_cursor = 0;
	for (size_t k = 0; k < nr; k++) {
		size_t i = (rp->scan_cursor + k) % nr;
		struct py_process *p = py_registry__get(rp->reg, i);

		if (p->gone || (!p->rescan && now < p->next_scan_ms))
			continue;
		if (mono_ms() >= deadline || signals__stop_requested()) {
			rp->scan_cursor = i;
			return false;
		}
		scan_threads(rp, p, now);
		rp->changed = true;
	}
	rp->scan_cursor = 0;
	return true;
}

void run_python__tick(struct run_python *rp)
{
	int64_t now = mono_ms(), deadline = now + TICK_BUDGET_MS;
	bool in_time;

	/* A launched command becomes Python at its exec: looked at every tick, not only at samples. */
	if (rp->child > 0)
		look_at(rp, rp->child);
	/* As are the processes that mapped an interpreter's file, for their first seconds. */
	python_watch__sweep(&rp->watch, now, look_at, rp);
	in_time = look_pending(rp, deadline);
	in_time = scan_due(rp, now, deadline) && in_time;
	rp->ticks_over += !in_time;
	if (rp->changed) {
		if (rp->backend && rp->ops && rp->ops->set_interp)
			tell_backend(rp);
		python_early__publish(rp->early, rp->reg);
		rp->changed = false;
	}
}

void run_python__scan(struct run_python *rp, struct pipeline *pl, pid_t child)
{
	size_t cap = 0;
	struct dirent *d;
	DIR *dir;

	rp->child = child;
	if (!pl->procs)
		return;
	dir = opendir("/proc");
	if (!dir)
		return;
	/* Bounded by the pid space; a look at a process not named like Python reads no file. */
	while ((d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		if (*end || pid <= 0 || pid > INT32_MAX || !pipeline__wants_pid(pl, (pid_t)pid) ||
		    !proctrack__knows(pl->procs, (pid_t)pid))
			continue;
		if (rp->nr_pending == cap) {
			pid_t *more = realloc(rp->pending, (cap ? 2 * cap : 256) * sizeof(*more));

			if (!more)
				break;
			rp->pending = more;
			cap = cap ? 2 * cap : 256;
		}
		rp->pending[rp->nr_pending++] = (pid_t)pid;
	}
	closedir(dir);
	rp->pl = pl;
	/* The Python processes of an ordinary host are found before the first sample. */
	look_pending(rp, mono_ms() + SCAN_BUDGET_MS);
	run_python__tick(rp);
}

bool run_python__watching(const struct run_python *rp)
{
	return python_watch__busy(&rp->watch);
}

const struct interp_reader *run_python__reader(struct run_python *rp)
{
	return python_early__reader(rp->early);
}

void run_python__ended(struct run_python *rp, const struct addr_space *as)
{
	py_registry__forget(rp->reg, as);
	rp->changed = true;
}

/*
 * Who made us refuse names or line tables (a process's budget, py_codes_held):
 * each process still held by its pid and uid, the gone ones in the total.
 */
static void report_budgets(const struct run_python *rp, const struct py_registry_stats *st)
{
	if (!st->over_budget)
		return;
	pr_info("python: %zu processes filled their budget of names and line tables: %llu "
		"line tables (%.1f MiB) not kept, their frames without lines; %llu names not "
		"kept, their frames unnamed\n", st->over_budget,
		(unsigned long long)st->tables_refused, st->table_bytes_refused / 1048576.0,
		(unsigned long long)st->names_refused);
	for (size_t i = 0; i < py_registry__count(rp->reg); i++) {
		const struct py_process *p = py_registry__get(rp->reg, i);
		struct py_codes_held h;

		if (!p->over_budget)
			continue;
		py_codes__held(p->codes, &h);
		pr_info("python: pid %d (uid %d): %zu line tables (%.1f MiB) and %.1f MiB of names "
			"held, the %zu MiB one process may make us hold; %llu line tables "
			"(%.1f MiB) and %llu names refused\n", (int)p->pid,
			p->uid == (uid_t)-1 ? -1 : (int)p->uid, h.tables, h.table_bytes / 1048576.0,
			h.name_bytes / 1048576.0, h.limit >> 20,
			(unsigned long long)h.tables_refused, h.table_bytes_refused / 1048576.0,
			(unsigned long long)h.names_refused);
	}
}

void run_python__report(const struct run_python *rp, const struct pipeline *pl,
			const struct resolver *res)
{
	static const char *const why[] = {
		[INTERP_NO_THREAD] = "their thread was not known yet",
		[INTERP_BAD_THREAD] = "their thread's state was reused",
		[INTERP_IDLE] = "no Python code was running",
		[INTERP_UNREADABLE] = "their thread's state could not be read",
		[INTERP_LOST] = "the frames were not kept (a full map)",
	};
	struct interp_merge_counts mc;
	struct py_registry_stats st;
	uint64_t early_reads, early_frames, rewalks;

	py_registry__stats(rp->reg, &st);
	resolver__interp_counts(res, &mc);
	if (rp->watch.dropped)
		pr_info("python: %llu processes that mapped an interpreter's file were looked for "
			"only at their samples: %d were being looked for already\n",
			(unsigned long long)rp->watch.dropped, PYTHON_WATCH_MAX);
	if (rp->left_out)
		pr_info("python: %zu of %zu Python processes were not walked in the kernel at once "
			"(its table was full; their samples keep their native frames): uid %u ran "
			"%zu of them, and each owner's processes had an equal share of the table\n",
			rp->left_out, rp->left_out_of, (unsigned int)rp->left_out_uid,
			rp->left_out_uid_procs);
	if (rp->ticks_over)
		pr_info("python: %llu ticks ran out of their %d ms for reading Python processes (the "
			"rest was read at the next ones); the costliest thread list to read: pid %d "
			"(uid %d), %.1f ms\n",
			(unsigned long long)rp->ticks_over, TICK_BUDGET_MS, (int)rp->slowest_pid,
			rp->slowest_uid == (uid_t)-1 ? -1 : (int)rp->slowest_uid, rp->slowest_us / 1000.0);
	if (st.idle)
		pr_info("python: %llu looks at processes that map an interpreter but run none "
			"(not Python processes until they do)\n", (unsigned long long)st.idle);
	if (!st.processes && !st.refused)
		return;
	pr_info("python: %zu processes, %llu samples with Python frames\n", st.processes,
		(unsigned long long)pl->interp_samples[INTERP_FRAMES]);
	python_early__counts(rp->early, &early_reads, &early_frames, &rewalks);
	if (early_reads)
		pr_info("python: %llu samples read right after they were taken (the reader "
			"thread), %llu of them with Python frames; the others at the drain\n",
			(unsigned long long)early_reads, (unsigned long long)early_frames);
	if (rewalks)
		pr_info("python: %llu walks read again: the thread left the frame they began "
			"with while they read its callers\n", (unsigned long long)rewalks);
	for (size_t i = INTERP_NO_THREAD; i <= INTERP_LOST; i++)
		if (pl->interp_samples[i])
			pr_info("python: %llu samples without Python frames: %s\n",
				(unsigned long long)pl->interp_samples[i], why[i]);
	if (pl->interp_other_process)
		pr_info("python: %llu samples counted in the kernel over an interval in which their "
			"pid was two processes' (one ended, another took its pid): their Python frames "
			"cannot be told apart, [python: process ended]\n",
			(unsigned long long)pl->interp_other_process);
	if (pl->interp_cut)
		pr_info("python: %llu samples with their Python stack cut (deeper than %d frames, "
			"or a frame unreadable)\n",
			(unsigned long long)pl->interp_cut, MAX_INTERP_DEPTH);
	if (mc.no_eval)
		pr_info("python: %llu of %llu stacks with Python frames put them under the native "
			"leaf frames: the native walk did not reach the eval loop (an interpreter "
			"built without frame pointers; --unwind dwarf interleaves them)\n",
			(unsigned long long)mc.no_eval, (unsigned long long)mc.stacks);
	if (mc.mismatched)
		pr_info("python: %llu stacks had more or fewer eval loop calls than runs of Python "
			"frames\n", (unsigned long long)mc.mismatched);
	if (mc.unnamed)
		pr_info("python: %llu frames could not be named (the process's memory could not "
			"be read)\n", (unsigned long long)mc.unnamed);
	if (mc.ended || st.handed_over || st.no_handle)
		pr_info("python: %llu frames of processes that ended before their names were read: "
			"[python: process ended] (%zu processes' pids were another's before their "
			"memory was opened; %zu could not be opened)\n",
			(unsigned long long)mc.ended, st.handed_over, st.no_handle);
	if (mc.freed)
		pr_info("python: %llu frames ran code objects freed before they were named "
			"(freed memory is not read for names; a module's body at an import, "
			"throwaway code): [python: code object freed]\n",
			(unsigned long long)mc.freed);
	report_budgets(rp, &st);
}
