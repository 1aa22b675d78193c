// SPDX-License-Identifier: GPL-2.0
#include "app/cli/options.h"

#include "app/cli/setters.h"
#include "compat/cgroup.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Mutually exclusive groups, as bcc's argparse declares them. */
enum {
	GROUP_NONE,
	GROUP_THREAD,		/* -p | -L */
	GROUP_STACK,		/* -U | -K */
	GROUP_SAMPLE,		/* -F | -c */
	GROUP_MODE,		/* --off-cpu | --wall | --diff */
};

static int set_frequency(void *o, const struct cli_option *opt, const char *label,
			 const char *arg, struct errmsg *err)
{
	struct run_opts *opts = o;
	unsigned long long v;

	/* The kernel caps this at perf_event_max_sample_rate. */
	if (cli__positive(label, arg, 1000000, &v, err))
		return -1;
	opts->frequency = (unsigned int)v;
	opts->period = 0;
	return 0;
}

static int set_count(void *o, const struct cli_option *opt, const char *label, const char *arg,
		     struct errmsg *err)
{
	struct run_opts *opts = o;
	unsigned long long v;

	if (cli__positive(label, arg, UINT64_MAX >> 1, &v, err))
		return -1;
	opts->period = v;
	opts->frequency = 0;
	return 0;
}

static int set_cpu(void *o, const struct cli_option *opt, const char *label, const char *arg,
		   struct errmsg *err)
{
	unsigned long long v;

	if (cli__parse_uint(arg, 0, INT_MAX, &v)) {
		errmsg__set(err, "argument %s: invalid CPU '%s'", label, arg);
		return -1;
	}
	((struct run_opts *)o)->cpu = (int)v;
	return 0;
}

static int set_mode(void *o, const struct cli_option *opt, const char *label, const char *arg,
		    struct errmsg *err)
{
	((struct run_opts *)o)->mode = (enum run_mode)opt->data;
	return 0;
}

static int set_diff(void *o, const struct cli_option *opt, const char *label, const char *arg,
		    struct errmsg *err)
{
	((struct parsed *)o)->diff = true;
	return 0;
}

static int set_diff_threshold(void *o, const struct cli_option *opt, const char *label,
			      const char *arg, struct errmsg *err)
{
	struct parsed *p = o;
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	/* Points of a share: 0 to 100, written plainly (no "inf", "nan" or hex). */
	if (errno || end == arg || *end || !(v >= 0 && v <= 100) || strpbrk(arg, "xXnNiI")) {
		errmsg__set(err, "argument %s: invalid value '%s': must be a number of points "
			    "from 0 to 100", label, arg);
		return -1;
	}
	p->run.diff_threshold = v;
	p->threshold_given = true;
	return 0;
}

/* Positionals are read once all options are known: --diff makes them files. */
static int keep_positional(void *o, const char *arg, unsigned int index, struct errmsg *err)
{
	struct parsed *p = o;

	if (index >= sizeof(p->positionals) / sizeof(p->positionals[0])) {
		errmsg__set(err, "unrecognized argument: %s", arg);
		return -1;
	}
	p->positionals[index] = arg;
	p->nr_positionals = index + 1;
	return 0;
}

static const struct cli_option profile_options[] = {
	{ 'p', "pid", "PID", set_ids, 0, GROUP_THREAD,
	  "profile process with one or more comma separated PIDs only" },
	{ 'L', "tid", "TID", set_ids, 0, GROUP_THREAD,
	  "profile thread with one or more comma separated TIDs only" },
	{ 'U', "user-stacks-only", NULL, cli__set_flag, OFF(user_only), GROUP_STACK,
	  "show stacks from user space only (no kernel space stacks)" },
	{ 'K', "kernel-stacks-only", NULL, cli__set_flag, OFF(kernel_only), GROUP_STACK,
	  "show stacks from kernel space only (no user space stacks)" },
	{ 'F', "frequency", "FREQUENCY", set_frequency, 0, GROUP_SAMPLE,
	  "sample frequency, Hertz (default 49)" },
	{ 'c', "count", "COUNT", set_count, 0, GROUP_SAMPLE,
	  "sample period, number of events (nanoseconds of cpu-clock)" },
	{ 'd', "delimited", NULL, cli__set_flag, OFF(delimited), 0,
	  "insert delimiter between kernel/user stacks" },
	{ 'a', "annotations", NULL, cli__set_flag, OFF(annotations), 0,
	  "add _[k] annotations to kernel frames" },
	{ 'A', "addresses", NULL, cli__set_flag, OFF(addresses), 0,
	  "keep stacks distinct by address and print addresses" },
	{ 'I', "include-idle", NULL, cli__set_flag, OFF(include_idle), 0,
	  "include CPU idle stacks" },
	{ 'f', "folded", NULL, set_folded, 0, 0,
	  "output folded format, one line per stack (for flame graphs)" },
	{ 0, "hash-storage-size", "N", set_storage, OFF(hash_storage_size), 0,
	  "the number of hash keys that can be stored (default 40960)" },
	{ 0, "stack-storage-size", "N", set_storage, OFF(stack_storage_size), 0,
	  "the number of unique stack traces that can be stored and displayed (default 16384; "
	  "bpf, on-CPU: fewer at low rates)" },
	{ 'C', "cpu", "CPU", set_cpu, 0, 0, "cpu number to run profile on" },
	{ 0, "backend", "auto|bpf|perf", set_backend, 0, 0, "where stacks are counted (default auto)" },
	{ 'v', "verbose", NULL, cli__count, OFF(verbose), 0,
	  "explain the choices made (repeat for more)" },
	{ 0, "format", "bcc|folded|svg|pprof", set_format, 0, 0,
	  "report format: bcc's (default), folded (-f), an interactive flame graph, or gzip'ed "
	  "pprof" },
	{ 0, "output", "FILE", set_output, 0, 0,
	  "write the report to FILE instead of standard output" },
	{ 0, "unwind", "fp|dwarf|auto", set_unwind, 0, 0,
	  "how user stacks are walked (default " DEFAULT_UNWIND_NAME "): by frame pointers, "
	  "with .eh_frame over a copy of the stack (needs no frame pointers), or auto: frame "
	  "pointers for the binaries that keep them, .eh_frame for the others (-v says which, "
	  "per binary)" },
	{ 0, "stack-dump-size", "BYTES", set_stack_dump_size, 0, 0,
	  "user stack copied per sample with --unwind dwarf, or auto where it copies (default "
	  "16384, at most 65528)" },
	{ 0, "inline", NULL, cli__set_flag, OFF(inline_frames), 0,
	  "show functions inlined into user frames as frames of their own (needs debug info; "
	  "pprof always carries them, with source lines)" },
	{ 0, "python", "mixed|raw|off", set_python, 0, 0,
	  "Python functions in the stacks of Python processes, in place of the interpreter's "
	  "own frames (mixed, default), beside them (raw), or not at all (off)" },
	{ 0, "python-full-paths", NULL, cli__set_flag, OFF(python_full_paths), 0,
	  "name Python (and JavaScript) frames' files in full, not shortened as py-spy does" },
	{ 0, "node", "mixed|raw|off", set_node, 0, 0,
	  "JavaScript functions in the stacks of Node.js processes (perf backend, --unwind dwarf "
	  "or auto), in place of V8's own frames (mixed, default), beside them (raw), or not at "
	  "all (off)" },
	{ 0, "off-cpu", NULL, set_mode, MODE_OFF_CPU, GROUP_MODE,
	  "measure time switched out (blocked, sleeping, preempted) by stack, in microseconds, "
	  "as offcputime does" },
	{ 0, "wall", NULL, set_mode, MODE_WALL, GROUP_MODE,
	  "on-CPU samples (each its period) and off-CPU time in one profile per thread, in "
	  "microseconds" },
	{ 0, "min-block-us", "US", set_micros, OFF(min_block_us), 0,
	  "off-CPU intervals shorter than this are left out (default 1)" },
	{ 0, "max-block-us", "US", set_micros, OFF(max_block_us), 0,
	  "off-CPU intervals longer than this are left out" },
	{ 0, "state", "STATE", set_state, 0, 0,
	  "off-CPU time only of threads that switched out in this state (a bitmask, e.g. 2 = "
	  "TASK_UNINTERRUPTIBLE; 0 = preempted while runnable)" },
	{ 0, "cgroup", "PATH", set_cgroup, 0, 0,
	  "only tasks in this cgroup directory or below it (cgroup v2, or a v1 perf_event "
	  "cgroup); comma-separated or repeated for several" },
	{ 0, "cgroupmap", "MAP_PATH", set_path, OFF(cgroupmap), 0,
	  "only tasks whose cgroup id is a key of this pinned BPF hash map, as bcc's (bpf "
	  "backend, Linux 4.18)" },
	{ 0, "mntnsmap", "MAP_PATH", set_path, OFF(mntnsmap), 0,
	  "only tasks whose mount namespace id is a key of this pinned BPF hash map, as bcc's "
	  "(bpf backend, kernel BTF)" },
	{ 0, "quiet", NULL, cli__set_flag, OFF(quiet), 0,
	  "no progress line (a timed run on a terminal shows one on stderr)" },
	{ 0, "diff", NULL, set_diff, 0, GROUP_MODE,
	  "compare two profiles, BASE and NEW (folded or pprof files), instead of sampling: "
	  "changes of each function's and stack's share; with --format svg a differential "
	  "flame graph (red grew, blue shrank)" },
	{ 0, "diff-threshold", "PCT", set_diff_threshold, 0, 0,
	  "with --diff, exit 1 when a function's self share grew by more than PCT points" },
	{ 0 },
};

static const struct cli_positional profile_positionals[] = {
	{ "duration", "duration of trace, in seconds" },
	{ "COMMAND [ARGS...]", "run COMMAND, profile it and its children until it exits" },
	{ "BASE NEW", "with --diff: the two profiles to compare" },
	{ 0 },
};

/* The first sampling option given, which means nothing when comparing files. */
static const char *sampling_option(const struct parsed *p)
{
	const struct run_opts *r = &p->run;

	if (r->nr_pids || r->nr_tids)
		return r->nr_pids ? "-p" : "-L";
	if (r->user_only || r->kernel_only)
		return r->user_only ? "-U" : "-K";
	if (r->frequency != DEFAULT_FREQUENCY || r->period)
		return r->period ? "-c" : "-F";
	if (r->addresses)
		return "-A";
	if (r->include_idle)
		return "-I";
	if (r->hash_storage_size != DEFAULT_HASH_STORAGE_SIZE)
		return "--hash-storage-size";
	if (r->stack_storage_size != DEFAULT_STACK_STORAGE_SIZE)
		return "--stack-storage-size";
	if (r->cpu >= 0)
		return "-C";
	if (r->backend != BACKEND_AUTO)
		return "--backend";
	if (r->unwind != DEFAULT_UNWIND || p->stack_dump_given)
		return r->unwind != DEFAULT_UNWIND ? "--unwind" : "--stack-dump-size";
	if (r->inline_frames)
		return "--inline";
	if (r->python != PYTHON_MIXED || r->python_full_paths)
		return r->python != PYTHON_MIXED ? "--python" : "--python-full-paths";
	if (r->node != NODE_MIXED)
		return "--node";
	if (r->nr_cgroups || r->cgroupmap || r->mntnsmap)
		return r->nr_cgroups ? "--cgroup" : r->cgroupmap ? "--cgroupmap" : "--mntnsmap";
	if (r->command)
		return "-- COMMAND";
	return NULL;
}

static int check_diff(struct parsed *p, struct errmsg *err)
{
	const char *conflict = sampling_option(p);

	if (conflict) {
		errmsg__set(err, "argument --diff: not allowed with argument %s (--diff compares "
			    "two files, it does not sample)", conflict);
		return -1;
	}
	if (p->nr_positionals != 2) {
		errmsg__set(err, "argument --diff: expected two files, BASE and NEW");
		return -1;
	}
	p->run.diff_base = p->positionals[0];
	p->run.diff_new = p->positionals[1];
	return 0;
}


static int check_profile(void *o, struct errmsg *err)
{
	struct parsed *p = o;

	if (p->diff)
		return check_diff(p, err);
	if (p->threshold_given) {
		errmsg__set(err, "argument --diff-threshold: only with --diff");
		return -1;
	}
	if (p->nr_positionals > 1) {
		errmsg__set(err, "unrecognized argument: %s (a command goes after '--')",
			    p->positionals[1]);
		return -1;
	}
	if (p->nr_positionals && set_duration(&p->run, p->positionals[0], 0, err))
		return -1;
	if (p->run.mode == MODE_ON_CPU &&
	    (p->run.state >= 0 || p->run.min_block_us != 1 || p->run.max_block_us != UINT64_MAX)) {
		errmsg__set(err, "argument --min-block-us/--max-block-us/--state: only with "
			    "--off-cpu or --wall");
		return -1;
	}
	return parsed__check(p, err);
}

static const struct cli_spec profile_cli = {
	.prog = "profile",
	.usage = "profile [-h] [-p PID | -L TID] [-U | -K] [-F FREQUENCY | -c COUNT] [-d] [-a]\n"
		 "               [-A] [-I] [-f] [--hash-storage-size N] [--stack-storage-size N]\n"
		 "               [-C CPU] [--backend auto|bpf|perf] [-v]\n"
		 "               [--format bcc|folded|svg|pprof] [--output FILE]\n"
		 "               [--unwind fp|dwarf|auto] [--stack-dump-size BYTES] [--inline]\n"
		 "               [--python mixed|raw|off] [--python-full-paths]\n"
		 "               [--node mixed|raw|off]\n"
		 "               [--off-cpu | --wall] [--min-block-us US] [--max-block-us US]\n"
		 "               [--state STATE] [--quiet] [--cgroup PATH] [--cgroupmap MAP_PATH]\n"
		 "               [--mntnsmap MAP_PATH] [duration] [-- COMMAND [ARGS...]]\n"
		 "       profile --diff [--diff-threshold PCT] [--format F] [--output FILE] BASE NEW",
	.description = "Profile CPU stack traces at a timed interval",
	.options = profile_options,
	.positionals = profile_positionals,
	.positional = keep_positional,
	.command = true,
	.check = check_profile,
	.epilog = "examples:\n"
		  "    profile             # profile stack traces at 49 Hertz until Ctrl-C\n"
		  "    profile -F 99       # profile stack traces at 99 Hertz\n"
		  "    profile -c 1000000  # profile stack traces every 1 in a million events\n"
		  "    profile 5           # profile at 49 Hertz for 5 seconds only\n"
		  "    profile -f 5        # output in folded format for flame graphs\n"
		  "    profile -p 185      # only profile process with PID 185\n"
		  "    profile -L 185      # only profile thread with TID 185\n"
		  "    profile -U          # only show user space stacks (no kernel)\n"
		  "    profile -K          # only show kernel space stacks (no user)\n"
		  "    profile -f -- make  # profile a command and its children until it exits\n"
		  "    profile --off-cpu -p 185 --format svg --output wait.svg 10\n"
		  "                        # where PID 185's threads wait, as a flame graph\n"
		  "    profile --wall -- make  # on-CPU and off-CPU time of a build, per thread\n"
		  "    profile --cgroup /sys/fs/cgroup/system.slice/nginx.service 10\n"
		  "                        # only nginx's service and what runs below it\n"
		  "    profile --diff --diff-threshold 2 old.folded new.folded\n"
		  "                        # what grew since the last build; exit 1 above 2 points\n",
};

void options__usage(FILE *out)
{
	cli__help(&profile_cli, out);
}

enum options_result options__parse(int argc, char **argv, struct run_opts *opts, char *err,
				   size_t err_len)
{
	struct parsed p;
	struct errmsg em;
	enum cli_result r;

	parsed__init(&p);
	p.run.print_header = options__print_header;
	r = cli__parse(&profile_cli, argc, argv, &p, &p.run.command, &em);
	*opts = p.run;
	snprintf(err, err_len, "%s", r == CLI_USAGE_ERROR ? em.text : "");
	return (enum options_result)r;
}

void options__free(struct run_opts *opts)
{
	free(opts->pids);
	free(opts->tids);
	opts->pids = opts->tids = NULL;
	for (int i = 0; i < opts->nr_cgroups; i++)
		free(opts->cgroups[i]);
	free(opts->cgroups);
	opts->cgroups = NULL;
	opts->nr_cgroups = 0;
}

/* Python's repr() of a list of ints, as bcc prints args.pid: "[185, 186]". */
static void print_id_list(FILE *out, const pid_t *ids, int nr)
{
	fputc('[', out);
	for (int i = 0; i < nr; i++)
		fprintf(out, "%s%d", i ? ", " : "", (int)ids[i]);
	fputc(']', out);
}

void options__print_header(FILE *out, const struct run_opts *opts)
{
	if (opts->mode == MODE_OFF_CPU) {
		offcputime__print_header(out, opts);
		return;
	}
	if (opts->frequency)
		fprintf(out, "Sampling at %u Hertz", opts->frequency);
	else
		fprintf(out, "Sampling at every %llu events", (unsigned long long)opts->period);
	fputs(opts->mode == MODE_WALL ? " and tracing off-CPU time (us) of " : " of ", out);

	if (opts->nr_pids) {
		fputs("PID ", out);
		print_id_list(out, opts->pids, opts->nr_pids);
	} else if (opts->nr_tids) {
		fputs("TID ", out);
		print_id_list(out, opts->tids, opts->nr_tids);
	} else if (opts->command) {
		fprintf(out, "command %s", opts->command[0]);
	} else {
		fputs("all threads", out);
	}
	fprintf(out, " by %s stack", run_opts__stack_context(opts));
	if (opts->cpu >= 0)
		fprintf(out, " on CPU#%d", opts->cpu);
	if (opts->duration)
		fprintf(out, " for %u secs.\n", opts->duration);
	else if (opts->command)
		fputs(" until it exits.\n", out);
	else
		fputs("... Hit Ctrl-C to end.\n", out);
}
