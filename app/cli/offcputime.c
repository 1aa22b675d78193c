// SPDX-License-Identifier: GPL-2.0
/*
 * offcputime's command line: bcc's offcputime.py option for option (the
 * 2016 tool's -v too), plus what profile shares (--backend, --unwind,
 * --format, --output, -- COMMAND); its diagnostics are --verbose, since -v
 * is taken.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "app/cli/options.h"
#include "app/cli/setters.h"

enum {
	GROUP_NONE,
	GROUP_THREAD,		/* -p | -t | -u | -k */
	GROUP_STACK,		/* -U | -K */
};

static int set_threads(void *o, const struct cli_option *opt, const char *label,
		       const char *arg, struct errmsg *err)
{
	((struct run_opts *)o)->threads = (enum thread_kind)opt->data;
	return 0;
}

static const struct cli_option offcputime_options[] = {
	{ 'p', "pid", "PID", set_ids, 0, GROUP_THREAD,
	  "trace these PIDs only, comma separated list" },
	{ 't', "tid", "TID", set_ids, 0, GROUP_THREAD,
	  "trace these TIDs only, comma separated list" },
	{ 'u', "user-threads-only", NULL, set_threads, THREADS_USER, GROUP_THREAD,
	  "user threads only (no kernel threads)" },
	{ 'k', "kernel-threads-only", NULL, set_threads, THREADS_KERNEL, GROUP_THREAD,
	  "kernel threads only (no user threads)" },
	{ 'U', "user-stacks-only", NULL, cli__set_flag, OFF(user_only), GROUP_STACK,
	  "show stacks from user space only (no kernel space stacks)" },
	{ 'K', "kernel-stacks-only", NULL, cli__set_flag, OFF(kernel_only), GROUP_STACK,
	  "show stacks from kernel space only (no user space stacks)" },
	{ 'd', "delimited", NULL, cli__set_flag, OFF(delimited), 0,
	  "insert delimiter between kernel/user stacks" },
	{ 'f', "folded", NULL, set_folded, 0, 0, "output folded format" },
	{ 's', "offset", NULL, cli__set_flag, OFF(offsets), 0, "show address offsets" },
	{ 'v', NULL, NULL, cli__set_flag, OFF(raw_addresses), 0,
	  "show raw addresses (as the 2016 offcputime did)" },
	{ 0, "stack-storage-size", "STACK_STORAGE_SIZE", set_storage, OFF(stack_storage_size), 0,
	  "the number of unique stack traces that can be stored and displayed (default 16384)" },
	{ 'm', "min-block-time", "MIN_BLOCK_TIME", set_micros, OFF(min_block_us), 0,
	  "the amount of time in microseconds over which we store traces (default 1)" },
	{ 'M', "max-block-time", "MAX_BLOCK_TIME", set_micros, OFF(max_block_us), 0,
	  "the amount of time in microseconds under which we store traces (default U64_MAX)" },
	{ 0, "state", "STATE", set_state, 0, 0,
	  "filter on this thread state bitmask (eg, 2 == TASK_UNINTERRUPTIBLE) see "
	  "include/linux/sched.h" },
	{ 0, "backend", "auto|bpf|perf", set_backend, 0, 0, "where time is summed (default auto)" },
	{ 0, "unwind", "fp|dwarf|auto", set_unwind, 0, 0,
	  "how user stacks are walked (default " DEFAULT_UNWIND_NAME "): by frame pointers, "
	  "with .eh_frame over a copy of the stack taken at switch-out, or auto: frame pointers "
	  "for the binaries that keep them, .eh_frame for the others" },
	{ 0, "stack-dump-size", "BYTES", set_stack_dump_size, 0, 0,
	  "user stack copied per switch-out with --unwind dwarf, or auto where it copies "
	  "(default 16384)" },
	{ 0, "python", "mixed|raw|off", set_python, 0, 0,
	  "Python functions in the stacks of Python processes, in place of the interpreter's "
	  "own frames (mixed, default), beside them (raw), or not at all (off)" },
	{ 0, "python-full-paths", NULL, cli__set_flag, OFF(python_full_paths), 0,
	  "name Python (and JavaScript) frames' files in full, not shortened as py-spy does" },
	{ 0, "node", "mixed|raw|off", set_node, 0, 0,
	  "JavaScript functions in the stacks of Node.js processes (perf backend, --unwind dwarf "
	  "or auto), in place of V8's own frames (mixed, default), beside them (raw), or not at "
	  "all (off)" },
	{ 0, "inline", NULL, cli__set_flag, OFF(inline_frames), 0,
	  "show functions inlined into user frames as frames of their own (needs debug info)" },
	{ 0, "format", "bcc|folded|svg|pprof", set_format, 0, 0,
	  "report format: bcc's (default), folded (-f), an interactive flame graph, or gzip'ed "
	  "pprof" },
	{ 0, "output", "FILE", set_output, 0, 0,
	  "write the report to FILE instead of standard output" },
	{ 0, "verbose", NULL, cli__count, OFF(verbose), 0,
	  "explain the choices made (repeat for more)" },
	{ 0, "quiet", NULL, cli__set_flag, OFF(quiet), 0,
	  "no progress line (a timed run on a terminal shows one on stderr)" },
	{ 0, "cgroup", "PATH", set_cgroup, 0, 0,
	  "only tasks in this cgroup directory or below it (cgroup v2, or a v1 perf_event "
	  "cgroup); comma-separated or repeated for several" },
	{ 0, "cgroupmap", "CGROUPMAP", set_path, OFF(cgroupmap), 0,
	  "trace cgroups in this BPF map only (bpf backend, Linux 4.18)" },
	{ 0, "mntnsmap", "MNTNSMAP", set_path, OFF(mntnsmap), 0,
	  "trace mount namespaces in this BPF map only (bpf backend, kernel BTF)" },
	{ 0 },
};

static const struct cli_positional offcputime_positionals[] = {
	{ "duration", "duration of trace, in seconds" },
	{ "COMMAND [ARGS...]", "run COMMAND, trace it and its children until it exits" },
	{ 0 },
};

/* bcc's own checks, worded as bcc words them. */
static int check_offcputime(void *o, struct errmsg *err)
{
	struct parsed *p = o;

	if (p->run.threads == THREADS_KERNEL && p->run.user_only) {
		errmsg__set(err, "ERROR: Displaying user stacks for kernel threads doesn't make "
			    "sense.");
		return -1;
	}
	if (p->run.format == FORMAT_FOLDED && p->run.offsets) {
		errmsg__set(err, "ERROR: can only use -f or -s. Exiting.");
		return -1;
	}
	return parsed__check(p, err);
}

static const struct cli_spec offcputime_cli = {
	.prog = "offcputime",
	.usage = "offcputime [-h] [-p PID | -t TID | -u | -k] [-U | -K] [-d] [-f] [-s]\n"
		 "                  [--stack-storage-size STACK_STORAGE_SIZE]\n"
		 "                  [-m MIN_BLOCK_TIME] [-M MAX_BLOCK_TIME] [--state STATE]\n"
		 "                  [-v] [--backend auto|bpf|perf] [--unwind fp|dwarf|auto]\n"
		 "                  [--inline] [--python mixed|raw|off] [--python-full-paths]\n"
		 "                  [--node mixed|raw|off]\n"
		 "                  [--format bcc|folded|svg|pprof] [--output FILE] [--verbose]\n"
		 "                  [--quiet] [--cgroup PATH] [--cgroupmap CGROUPMAP]\n"
		 "                  [--mntnsmap MNTNSMAP] [duration] [-- COMMAND [ARGS...]]",
	.description = "Summarize off-CPU time by stack trace",
	.options = offcputime_options,
	.positionals = offcputime_positionals,
	.positional = set_duration,
	.command = true,
	.check = check_offcputime,
	.epilog = "examples:\n"
		  "    ./offcputime             # trace off-CPU stack time until Ctrl-C\n"
		  "    ./offcputime 5           # trace for 5 seconds only\n"
		  "    ./offcputime -f 5        # 5 seconds, and output in folded format\n"
		  "    ./offcputime -s 5        # 5 seconds, and show symbol offsets\n"
		  "    ./offcputime -m 1000     # trace only events that last more than 1000 usec\n"
		  "    ./offcputime -M 10000    # trace only events that last less than 10000 usec\n"
		  "    ./offcputime -p 185,175,165 # only trace threads for PID 185,175,165\n"
		  "    ./offcputime -t 188,120,134 # only trace threads 188,120,134\n"
		  "    ./offcputime -u          # only trace user threads (no kernel)\n"
		  "    ./offcputime -k          # only trace kernel threads (no user)\n"
		  "    ./offcputime -U          # only show user space stacks (no kernel)\n"
		  "    ./offcputime -K          # only show kernel space stacks (no user)\n"
		  "    ./offcputime -- make     # where a build waits, until it exits\n",
};

enum options_result offcputime__parse(int argc, char **argv, struct run_opts *opts, char *err,
				      size_t err_len)
{
	struct parsed p;
	struct errmsg em;
	enum cli_result r;

	parsed__init(&p);
	p.run.mode = MODE_OFF_CPU;
	p.run.print_header = offcputime__print_header;
	r = cli__parse(&offcputime_cli, argc, argv, &p, &p.run.command, &em);
	*opts = p.run;
	snprintf(err, err_len, "%s", r == CLI_USAGE_ERROR ? em.text : "");
	return (enum options_result)r;
}

/* bcc's "PIDs 185,175": ids joined by commas. */
static void print_ids(FILE *out, const char *what, const pid_t *ids, int nr)
{
	fprintf(out, "%s ", what);
	for (int i = 0; i < nr; i++)
		fprintf(out, "%s%d", i ? "," : "", (int)ids[i]);
}

void offcputime__print_header(FILE *out, const struct run_opts *o)
{
	fputs("Tracing off-CPU time (us) of ", out);
	if (o->nr_pids)
		print_ids(out, "PIDs", o->pids, o->nr_pids);
	else if (o->nr_tids)
		print_ids(out, "TIDs", o->tids, o->nr_tids);
	else if (o->threads == THREADS_USER)
		fputs("user threads", out);
	else if (o->threads == THREADS_KERNEL)
		fputs("kernel threads", out);
	else if (o->command)
		fprintf(out, "command %s", o->command[0]);
	else
		fputs("all threads", out);
	fprintf(out, " by %s stack", run_opts__stack_context(o));
	if (o->duration)
		fprintf(out, " for %u secs.\n", o->duration);
	else if (o->command)
		fputs(" until it exits.\n", out);
	else
		fputs("... Hit Ctrl-C to end.\n", out);
}
