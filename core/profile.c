// SPDX-License-Identifier: GPL-2.0
#include "core/profile.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "compat/cpus.h"
#include "compat/features.h"
#include "core/launch.h"
#include "core/log.h"
#include "core/report.h"
#include "core/symbolize.h"
#include "core/flamegraph.h"
#include "core/pprof.h"

/* Drain at least this often, so that /proc is read while processes live. */
#define DRAIN_INTERVAL_MS 100

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t forward_pid;
static int wake_pipe[2] = { -1, -1 };

static void on_signal(int sig)
{
	int saved = errno;

	if (sig != SIGCHLD) {
		stop_signal = sig;
		/* Ctrl-C reaches the command through the terminal; SIGTERM may not. */
		if (sig == SIGTERM && forward_pid > 0)
			kill(forward_pid, SIGTERM);
	}
	if (write(wake_pipe[1], "x", 1) < 0) {
		/* full pipe: a wake-up is already pending */
	}
	errno = saved;
}

static int install_signals(void)
{
	struct sigaction sa;

	if (pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGCHLD, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

static void drain_wake_pipe(void)
{
	char buf[64];

	while (read(wake_pipe[0], buf, sizeof(buf)) > 0)
		;
}

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/*
 * The report file, opened before sampling so that a bad path fails at once.
 * Created safely in shared directories such as /tmp: a symlink placed where
 * the report goes is not followed (O_NOFOLLOW), and an existing file is only
 * replaced if it is a regular file of ours (or a character device such as
 * /dev/null), never a FIFO, a directory or another user's file.
 */
static FILE *open_output(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0644);
	struct stat st;
	FILE *f;

	if (fd < 0) {
		/* ENXIO: a FIFO nobody reads (O_NONBLOCK keeps us from waiting on it). */
		pr_warn("argument --output: cannot create %s: %s\n", path,
			errno == ELOOP	 ? "it is a symbolic link"
			: errno == ENXIO ? "it exists and is not a regular file"
					 : strerror(errno));
		return NULL;
	}
	if (fstat(fd, &st) || (!S_ISCHR(st.st_mode) && !S_ISREG(st.st_mode)) ||
	    (S_ISREG(st.st_mode) && st.st_uid != geteuid())) {
		pr_warn("argument --output: %s exists and is %s; not replacing it\n", path,
			!S_ISREG(st.st_mode) ? "not a regular file" : "another user's file");
		close(fd);
		return NULL;
	}
	if (S_ISREG(st.st_mode) && ftruncate(fd, 0)) {
		pr_warn("argument --output: cannot truncate %s: %s\n", path, strerror(errno));
		close(fd);
		return NULL;
	}
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
	f = fdopen(fd, "w");
	if (!f)
		close(fd);
	return f;
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool cpu_is_online(int cpu)
{
	int *cpus = NULL, nr = cpus__online(&cpus);
	bool found = false;

	for (int i = 0; i < nr; i++)
		found |= cpus[i] == cpu;
	free(cpus);
	return found || nr < 0;
}

static void print_unwind_mode(const struct profile_opts *opts)
{
	if (options__dwarf(opts))
		pr_info("unwind: dwarf (.eh_frame over a %u-byte copy of each user stack, in user "
			"space)\n",
			opts->stack_dump_size);
	else
		pr_info("unwind: frame pointers (callchains taken by the kernel)\n");
}

static const struct backend_ops *choose_backend(struct profile_opts *opts,
						const struct backend_ops *const *backends)
{
	static const char *const names[] = { [BACKEND_BPF] = "bpf", [BACKEND_PERF] = "perf" };
	char why[512], all_why[1536] = "";

	pr_info("kernel %s\n", kernel_release());
	for (enum kernel_feature f = 0; f < __FEAT_CNT && log_verbosity() >= 2; f++)
		pr_debug("feature %s: %s\n", kernel_feature__desc(f),
			 feature_state__name(kernel_feature__state(f)));
	const struct backend_ops *partial = NULL;
	char partial_why[512] = "";

	for (int i = 0; backends[i]; i++) {
		const struct backend_ops *ops = backends[i];
		int err;

		if (opts->backend != BACKEND_AUTO && strcmp(ops->name, names[opts->backend]))
			continue;
		why[0] = '\0';
		err = ops->probe(opts, why, sizeof(why));
		if (err == PROBE_PARTIAL && opts->backend == BACKEND_AUTO) {
			/* Keep looking for one that does all that was asked. */
			pr_info("backend %s: usable, but %s\n", ops->name, why);
			if (!partial) {
				partial = ops;
				snprintf(partial_why, sizeof(partial_why), "%s", why);
			}
			continue;
		}
		if (err == PROBE_PARTIAL) {
			pr_warn("note: %s\n", why);
			err = 0;
		}
		if (err == PROBE_USER_ONLY) {
			/* What a user without privileges can have: their own user stacks. */
			opts->user_only = true;
			opts->kernel_only = false;
			opts->no_kernel_access = true;
			pr_warn("note: kernel stacks are not collected: %s\n", why);
			err = 0;
		}
		if (!err) {
			pr_info("backend %s: usable; chosen\n", ops->name);
			print_unwind_mode(opts);
			return ops;
		}
		if (opts->backend != BACKEND_AUTO) {
			pr_warn("backend %s cannot run here: %s\n", ops->name, why);
			return NULL;
		}
		pr_info("backend %s: not used: %s\n", ops->name, why);
		snprintf(all_why + strlen(all_why), sizeof(all_why) - strlen(all_why), "%s%s: %s",
			 all_why[0] ? "; " : "", ops->name, why);
	}
	if (partial) {
		pr_warn("note: %s\n", partial_why);
		pr_info("backend %s: chosen, the others being unusable\n", partial->name);
		print_unwind_mode(opts);
		return partial;
	}
	if (opts->backend != BACKEND_AUTO)
		pr_warn("backend %s is not built into this profile\n", names[opts->backend]);
	else
		pr_warn("no backend can run here: %s\n", all_why);
	return NULL;
}

/* Sample until the duration ends, a signal arrives, or the command exits. */
/*
 * Between drains, stacks are formatted for the report (report__prepare), a
 * little at a time: the report after the end then has little left to do.
 */
#define PREPARE_BUDGET_MS 20

struct run_state {
	struct profile_core *core;
	struct symbolizer *sym;
	struct report_cache *rc;
	const struct report_opts *ro;	/* NULL: nothing to prepare */
};

static int sample_loop(const struct backend_ops *ops, struct backend *b,
		       const struct profile_opts *opts, struct launch *child,
		       const struct run_state *rs)
{
	int64_t deadline = opts->duration ? now_ms() + (int64_t)opts->duration * 1000 : 0;
	int err;

	for (;;) {
		int timeout = DRAIN_INTERVAL_MS;

		if (stop_signal)
			break;
		if (child && launch__poll(child))
			break;
		if (deadline) {
			int64_t left = deadline - now_ms();

			if (left <= 0)
				break;
			if (left < timeout)
				timeout = (int)left;
		}
		err = ops->wait(b, wake_pipe[0], timeout);
		if (err)
			return err;
		drain_wake_pipe();
		err = ops->drain(b);
		if (err)
			return err;
		if (rs->ro)
			report__prepare(rs->rc, &rs->core->agg, rs->sym, rs->ro, PREPARE_BUDGET_MS);
	}
	return 0;
}

static void print_lost_warning(const struct backend_stats *st, const struct profile_opts *o)
{
	if (st->lost)
		fprintf(stderr, "WARNING: %" PRIu64 " samples lost (of %" PRIu64 " seen): %s%s.\n",
			st->lost, st->lost + st->samples,
			st->lost_reason ? st->lost_reason
					: "the ring buffer was full; lower -F or profile fewer CPUs",
			options__dwarf(o) ? ", or lower --stack-dump-size" : "");
}

/* What was profiled, for titles: "command make", "PID [1, 2]", "all threads". */
static void describe_target(const struct profile_opts *o, char *buf, size_t len)
{
	size_t n = 0;

	if (o->command) {
		n += snprintf(buf, len, "command");
		for (int i = 0; o->command[i] && n < len; i++)
			n += snprintf(buf + n, len - n, " %s", o->command[i]);
	} else if (o->nr_pids || o->nr_tids) {
		const pid_t *ids = o->nr_pids ? o->pids : o->tids;
		int nr = o->nr_pids ? o->nr_pids : o->nr_tids;

		n += snprintf(buf, len, "%s [", o->nr_pids ? "PID" : "TID");
		for (int i = 0; i < nr && n < len; i++)
			n += snprintf(buf + n, len - n, "%s%d", i ? ", " : "", (int)ids[i]);
		if (n < len)
			snprintf(buf + n, len - n, "]");
	} else {
		snprintf(buf, len, "all threads");
	}
}

struct run_info {
	const char *backend;
	uint64_t start_ns;	/* wall clock */
	int64_t duration_ms;
};

/* How stacks print in this report; NULL for formats that do not print text (pprof). */
static const struct report_opts *report_opts_of(const struct profile_opts *opts,
						struct report_opts *ro)
{
	*ro = (struct report_opts){
		.folded = opts->format != FORMAT_BCC,
		.delimited = opts->delimited,
		.annotations = opts->annotations,
		.addresses = opts->addresses,
		.user_only = opts->user_only,
		.kernel_only = opts->kernel_only,
	};
	/* Flame graphs tell kernel frames by their annotation; "-" splits user from kernel. */
	if (opts->format == FORMAT_SVG)
		ro->annotations = ro->delimited = true;
	return opts->format == FORMAT_PPROF ? NULL : ro;
}

static int write_report(FILE *out, const struct profile_opts *opts, struct profile_core *core,
			struct symbolizer *sym, struct report_cache *rc, const struct run_info *ri,
			struct report_stats *rs)
{
	struct report_opts ro;
	char target[512], title[768];
	struct printed_stacks list;
	int err;

	memset(rs, 0, sizeof(*rs));
	describe_target(opts, target, sizeof(target));
	report_opts_of(opts, &ro);
	if (opts->format == FORMAT_SVG) {
		err = report__collect(&core->agg, sym, &ro, rc, &list, rs);
		if (err)
			return err;
		snprintf(title, sizeof(title), "profile of %s (%s backend, %s%llu %s, %.1f s)",
			 target, ri->backend, opts->frequency ? "" : "every ",
			 (unsigned long long)(opts->frequency ? opts->frequency : opts->period),
			 opts->frequency ? "Hz" : "events", ri->duration_ms / 1000.0);
		err = flamegraph__write(out, &list, title);
		printed_stacks__free(&list);
		return err;
	}
	if (opts->format == FORMAT_PPROF) {
		struct pprof_meta meta = {
			/* cpu-clock counts nanoseconds: a sample stands for its period. */
			.period_ns = opts->frequency ? 1000000000ULL / opts->frequency : opts->period,
			.start_ns = ri->start_ns,
			.duration_ns = (uint64_t)ri->duration_ms * 1000000,
			.comment = target,
			.user_only = opts->user_only,
			.kernel_only = opts->kernel_only,
		};

		rs->samples = core->agg.total;
		return pprof__write(out, &core->agg, sym, &meta);
	}
	return report__print(out, &core->agg, sym, &ro, rc, rs);
}

static int report(FILE *out, const struct profile_opts *opts, struct profile_core *core,
		  struct symbolizer *sym, struct report_cache *rc, const struct backend_stats *st,
		  const struct run_info *ri)
{
	struct report_stats rs;
	int err;

	err = write_report(out, opts, core, sym, rc, ri, &rs);
	if (err)
		pr_warn("writing the report: %s\n", strerror(-err));
	report__print_warnings(stderr, &rs, st->hash_full);
	print_lost_warning(st, opts);
	symbolizer__report_problems(sym);
	pr_info("%" PRIu64 " samples, %" PRIu64 " kept, %zu unique raw stacks, %" PRIu64
		" printed stacks\n",
		st->samples, core->agg.total, agg__size(&core->agg), rs.stacks);
	return err;
}

int profile__run(const struct profile_opts *cli, const struct backend_ops *const *backends)
{
	/* What the run does may differ from what was asked: user stacks only, say. */
	struct profile_opts eff = *cli, *opts = &eff;
	const struct backend_ops *ops;
	struct profile_core core;
	struct backend *b = NULL;
	struct backend_stats st = { 0 };
	struct launch child = { .pid = -1 };
	struct symbolizer *sym = NULL;
	struct report_cache rc;
	struct report_opts ro;
	struct run_state rs;
	struct run_info ri = { 0 };
	int64_t t_start = 0, t_end, t_drained;
	FILE *out = stdout;
	bool launched = false;
	int err, code = 1;

	log_set_verbosity(opts->verbose);
	report_cache__init(&rc);
	if (opts->cpu >= 0 && !cpu_is_online(opts->cpu)) {
		pr_warn("argument -C/--cpu: CPU %d is not online\n", opts->cpu);
		return EXIT_USAGE;
	}
	if (opts->output) {
		out = open_output(opts->output);
		if (!out)
			return 1;
	}
	if (install_signals()) {
		pr_warn("cannot set up signal handling: %s\n", strerror(errno));
		return 1;
	}
	ops = choose_backend(opts, backends);
	if (!ops)
		return 1;
	sym = symbolizer__new();
	if (!sym || core__init(&core, opts)) {
		pr_warn("out of memory\n");
		symbolizer__free(sym);
		return 1;
	}
	/* What the report needs anyway is read before sampling, not after it. */
	if (!opts->user_only)
		symbolizer__preload_kernel(sym);

	if (opts->command) {
		err = launch__spawn(&child, opts->command);
		if (err) {
			pr_warn("cannot start %s: %s\n", opts->command[0], strerror(-err));
			goto out;
		}
		launched = true;
		forward_pid = child.pid;
	}
	err = ops->open(&b, &core, launched ? child.pid : -1);
	if (err)
		goto out;
	err = core__snapshot_processes(&core);
	if (err) {
		pr_warn("reading /proc: %s\n", strerror(-err));
		goto out;
	}
	if (opts->format == FORMAT_BCC) {
		options__print_header(out, opts);
		fflush(out);
	}
	ri.backend = ops->name;
	ri.start_ns = wall_ns();
	t_start = now_ms();
	err = ops->start(b);
	if (err)
		goto out;
	if (launched) {
		err = launch__go(&child);
		if (err) {
			pr_warn("cannot run %s: %s\n", opts->command[0], strerror(-err));
			goto out;
		}
	}

	rs = (struct run_state){ .core = &core, .sym = sym, .rc = &rc,
				 .ro = report_opts_of(opts, &ro) };
	err = sample_loop(ops, b, opts, launched ? &child : NULL, &rs);
	t_end = now_ms();
	ops->stop(b);
	if (!err)
		err = ops->drain(b);
	t_drained = now_ms();
	if (err) {
		pr_warn("sampling failed: %s\n", strerror(-err));
		goto out;
	}
	ops->stats(b, &st);
	ri.duration_ms = t_end - t_start;
	if (opts->format == FORMAT_BCC)
		fputc('\n', out);
	err = report(out, opts, &core, sym, &rc, &st, &ri);
	if (err)
		goto out;
	pr_debug("timing: final drain %lld ms, report %lld ms\n", (long long)(t_drained - t_end),
		 (long long)(now_ms() - t_drained));
	code = 0;
	if (launched) {
		/* The report is out; the command may still be finishing (duration, Ctrl-C). */
		launch__wait(&child);
		code = launch__exit_code(&child);
	}

out:
	if (launched && !child.reaped)
		launch__abort(&child);
	if (b)
		ops->close(b);
	core__fini(&core);
	report_cache__free(&rc);
	symbolizer__free(sym);
	if (out != stdout && fclose(out) && code == 0) {
		pr_warn("writing %s: %s\n", opts->output, strerror(errno));
		code = 1;
	}
	return code;
}
