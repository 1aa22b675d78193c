// SPDX-License-Identifier: GPL-2.0
#include "core/options.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum {
	OPT_HASH_STORAGE = 0x100,
	OPT_STACK_STORAGE,
	OPT_BACKEND,
	OPT_FORMAT,
	OPT_OUTPUT,
	OPT_UNWIND,
	OPT_STACK_DUMP_SIZE,
};

static const struct option long_options[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "pid", required_argument, NULL, 'p' },
	{ "tid", required_argument, NULL, 'L' },
	{ "user-stacks-only", no_argument, NULL, 'U' },
	{ "kernel-stacks-only", no_argument, NULL, 'K' },
	{ "frequency", required_argument, NULL, 'F' },
	{ "count", required_argument, NULL, 'c' },
	{ "delimited", no_argument, NULL, 'd' },
	{ "annotations", no_argument, NULL, 'a' },
	{ "addresses", no_argument, NULL, 'A' },
	{ "include-idle", no_argument, NULL, 'I' },
	{ "folded", no_argument, NULL, 'f' },
	{ "hash-storage-size", required_argument, NULL, OPT_HASH_STORAGE },
	{ "stack-storage-size", required_argument, NULL, OPT_STACK_STORAGE },
	{ "cpu", required_argument, NULL, 'C' },
	{ "backend", required_argument, NULL, OPT_BACKEND },
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, OPT_OUTPUT },
	{ "unwind", required_argument, NULL, OPT_UNWIND },
	{ "stack-dump-size", required_argument, NULL, OPT_STACK_DUMP_SIZE },
	{ "verbose", no_argument, NULL, 'v' },
	{ 0 },
};

void options__usage(FILE *out)
{
	fputs("usage: profile [-h] [-p PID | -L TID] [-U | -K] [-F FREQUENCY | -c COUNT] [-d] [-a]\n"
	      "               [-A] [-I] [-f] [--hash-storage-size N] [--stack-storage-size N]\n"
	      "               [-C CPU] [--backend auto|bpf|perf] [-v]\n"
	      "               [--format bcc|folded|svg|pprof] [--output FILE]\n"
	      "               [--unwind fp|dwarf] [--stack-dump-size BYTES]\n"
	      "               [duration] [-- COMMAND [ARGS...]]\n"
	      "\n"
	      "Profile CPU stack traces at a timed interval\n"
	      "\n"
	      "positional arguments:\n"
	      "  duration              duration of trace, in seconds\n"
	      "  COMMAND [ARGS...]     run COMMAND, profile it and its children until it exits\n"
	      "\n"
	      "options:\n"
	      "  -h, --help            show this help message and exit\n"
	      "  -p PID, --pid PID     profile process with one or more comma separated PIDs only\n"
	      "  -L TID, --tid TID     profile thread with one or more comma separated TIDs only\n"
	      "  -U, --user-stacks-only\n"
	      "                        show stacks from user space only (no kernel space stacks)\n"
	      "  -K, --kernel-stacks-only\n"
	      "                        show stacks from kernel space only (no user space stacks)\n"
	      "  -F FREQUENCY, --frequency FREQUENCY\n"
	      "                        sample frequency, Hertz (default 49)\n"
	      "  -c COUNT, --count COUNT\n"
	      "                        sample period, number of events (nanoseconds of cpu-clock)\n"
	      "  -d, --delimited       insert delimiter between kernel/user stacks\n"
	      "  -a, --annotations     add _[k] annotations to kernel frames\n"
	      "  -A, --addresses       keep stacks distinct by address and print addresses\n"
	      "  -I, --include-idle    include CPU idle stacks\n"
	      "  -f, --folded          output folded format, one line per stack (for flame graphs)\n"
	      "  --hash-storage-size N\n"
	      "                        the number of hash keys that can be stored (default 40960)\n"
	      "  --stack-storage-size N\n"
	      "                        the number of unique stack traces that can be stored and\n"
	      "                        displayed (default 16384)\n"
	      "  -C CPU, --cpu CPU     cpu number to run profile on\n"
	      "  --backend auto|bpf|perf\n"
	      "                        where stacks are counted (default auto)\n"
	      "  -v, --verbose         explain the choices made (repeat for more)\n"
	      "  --format bcc|folded|svg|pprof\n"
	      "                        report format: bcc's (default), folded (-f), an\n"
	      "                        interactive flame graph, or gzip'ed pprof\n"
	      "  --output FILE         write the report to FILE instead of standard output\n"
	      "  --unwind fp|dwarf     walk user stacks by frame pointers (default), or with\n"
	      "                        .eh_frame over a copy of the stack (needs no frame pointers)\n"
	      "  --stack-dump-size BYTES\n"
	      "                        user stack copied per sample with --unwind dwarf\n"
	      "                        (default 16384, at most 65528)\n"
	      "\n"
	      "examples:\n"
	      "    profile             # profile stack traces at 49 Hertz until Ctrl-C\n"
	      "    profile -F 99       # profile stack traces at 99 Hertz\n"
	      "    profile -c 1000000  # profile stack traces every 1 in a million events\n"
	      "    profile 5           # profile at 49 Hertz for 5 seconds only\n"
	      "    profile -f 5        # output in folded format for flame graphs\n"
	      "    profile -p 185      # only profile process with PID 185\n"
	      "    profile -L 185      # only profile thread with TID 185\n"
	      "    profile -U          # only show user space stacks (no kernel)\n"
	      "    profile -K          # only show kernel space stacks (no user)\n"
	      "    profile -f -- make  # profile a command and its children until it exits\n",
	      out);
}

static void set_err(char *err, size_t err_len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_len, fmt, ap);
	va_end(ap);
}

/* A decimal integer in [min, max]; nothing else, no sign tricks. */
static int parse_uint(const char *s, unsigned long long min, unsigned long long max,
		      unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

static bool pid_exists(pid_t pid)
{
	char path[64];

	/* /proc/TID exists for threads too, though readdir does not list them. */
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	return access(path, F_OK) == 0;
}

static int parse_id_list(const char *opt, const char *s, pid_t **ids, int *nr, char *err,
			 size_t err_len)
{
	char *copy = strdup(s), *tok, *save = NULL;
	int cnt = 0, ret = 0;

	if (!copy)
		return -ENOMEM;
	/* Enough room for every comma-separated entry. */
	*ids = calloc(strlen(s) / 2 + 2, sizeof(**ids));
	if (!*ids) {
		free(copy);
		return -ENOMEM;
	}
	if (!*s || s[strlen(s) - 1] == ',') {
		set_err(err, err_len, "argument %s: expected a comma-separated list of IDs, got '%s'",
			opt, s);
		ret = -EINVAL;
		goto out;
	}
	for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		unsigned long long v;

		if (parse_uint(tok, 1, INT_MAX, &v)) {
			set_err(err, err_len, "argument %s: invalid ID '%s': must be a positive integer",
				opt, tok);
			ret = -EINVAL;
			goto out;
		}
		if (!pid_exists((pid_t)v)) {
			set_err(err, err_len, "argument %s: no such process or thread: %llu", opt, v);
			ret = -ESRCH;
			goto out;
		}
		(*ids)[cnt++] = (pid_t)v;
	}
	*nr = cnt;
out:
	free(copy);
	return ret;
}

static int parse_positive(const char *opt, const char *arg, unsigned long long max,
			  unsigned long long *out, char *err, size_t err_len)
{
	int ret = parse_uint(arg, 1, max, out);

	if (ret == -ERANGE && arg[0] == '0' && !arg[1])
		set_err(err, err_len, "argument %s: must be nonzero", opt);
	else if (ret == -ERANGE)
		set_err(err, err_len, "argument %s: %s is out of range (1..%llu)", opt, arg, max);
	else if (ret)
		set_err(err, err_len, "argument %s: invalid value '%s': must be a positive integer",
			opt, arg);
	return ret;
}

static const char *conflict(char a, char b)
{
	static char buf[64];

	snprintf(buf, sizeof(buf), "argument -%c: not allowed with argument -%c", b, a);
	return buf;
}

enum options_result options__parse(int argc, char **argv, struct profile_opts *opts, char *err,
				   size_t err_len)
{
	unsigned long long v;
	int opt_argc = argc, c;
	char seen_thread = 0, seen_stack = 0, seen_sample = 0;
	bool stack_dump_given = false;

	memset(opts, 0, sizeof(*opts));
	opts->frequency = DEFAULT_FREQUENCY;
	opts->hash_storage_size = DEFAULT_HASH_STORAGE_SIZE;
	opts->stack_storage_size = DEFAULT_STACK_STORAGE_SIZE;
	opts->stack_dump_size = DEFAULT_STACK_DUMP_SIZE;
	opts->cpu = -1;
	err[0] = '\0';

	/* Everything after "--" is the command; getopt must not permute it. */
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--")) {
			opt_argc = i;
			if (i + 1 < argc)
				opts->command = &argv[i + 1];
			else {
				set_err(err, err_len, "argument --: expected a command after '--'");
				return OPTIONS_USAGE_ERROR;
			}
			break;
		}
	}

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(opt_argc, argv, ":hp:L:UKF:c:daAIfC:v", long_options, NULL)) != -1) {
		switch (c) {
		case 'h':
			options__usage(stdout);
			return OPTIONS_HELP;
		case 'p':
		case 'L':
			if (seen_thread) {
				set_err(err, err_len, "%s", conflict(seen_thread, c));
				return OPTIONS_USAGE_ERROR;
			}
			seen_thread = c;
			if (c == 'p' ? parse_id_list("-p/--pid", optarg, &opts->pids, &opts->nr_pids,
						     err, err_len)
				     : parse_id_list("-L/--tid", optarg, &opts->tids, &opts->nr_tids,
						     err, err_len))
				return OPTIONS_USAGE_ERROR;
			break;
		case 'U':
		case 'K':
			if (seen_stack && seen_stack != c) {
				set_err(err, err_len, "%s", conflict(seen_stack, c));
				return OPTIONS_USAGE_ERROR;
			}
			seen_stack = c;
			if (c == 'U')
				opts->user_only = true;
			else
				opts->kernel_only = true;
			break;
		case 'F':
		case 'c':
			if (seen_sample && seen_sample != c) {
				set_err(err, err_len, "%s", conflict(seen_sample, c));
				return OPTIONS_USAGE_ERROR;
			}
			seen_sample = c;
			if (c == 'F') {
				/* The kernel caps this at perf_event_max_sample_rate. */
				if (parse_positive("-F/--frequency", optarg, 1000000, &v, err, err_len))
					return OPTIONS_USAGE_ERROR;
				opts->frequency = v;
				opts->period = 0;
			} else {
				if (parse_positive("-c/--count", optarg, UINT64_MAX >> 1, &v, err,
						   err_len))
					return OPTIONS_USAGE_ERROR;
				opts->period = v;
				opts->frequency = 0;
			}
			break;
		case 'd':
			opts->delimited = true;
			break;
		case 'a':
			opts->annotations = true;
			break;
		case 'A':
			opts->addresses = true;
			break;
		case 'I':
			opts->include_idle = true;
			break;
		case 'f':
			opts->format = FORMAT_FOLDED;
			break;
		case OPT_FORMAT:
			if (!strcmp(optarg, "bcc"))
				opts->format = FORMAT_BCC;
			else if (!strcmp(optarg, "folded"))
				opts->format = FORMAT_FOLDED;
			else if (!strcmp(optarg, "svg"))
				opts->format = FORMAT_SVG;
			else if (!strcmp(optarg, "pprof"))
				opts->format = FORMAT_PPROF;
			else {
				set_err(err, err_len,
					"argument --format: invalid choice '%s' (choose from bcc, folded, "
					"svg, pprof)",
					optarg);
				return OPTIONS_USAGE_ERROR;
			}
			break;
		case OPT_OUTPUT:
			if (!*optarg) {
				set_err(err, err_len, "argument --output: expected a file name");
				return OPTIONS_USAGE_ERROR;
			}
			opts->output = optarg;
			break;
		case OPT_UNWIND:
			if (!strcmp(optarg, "fp"))
				opts->unwind = UNWIND_FP;
			else if (!strcmp(optarg, "dwarf"))
				opts->unwind = UNWIND_DWARF;
			else {
				set_err(err, err_len,
					"argument --unwind: invalid choice '%s' (choose from fp, dwarf)",
					optarg);
				return OPTIONS_USAGE_ERROR;
			}
			break;
		case OPT_STACK_DUMP_SIZE:
			if (parse_positive("--stack-dump-size", optarg, MAX_STACK_DUMP_SIZE, &v, err,
					   err_len))
				return OPTIONS_USAGE_ERROR;
			if (v < 64 || v % 8) {
				set_err(err, err_len,
					"argument --stack-dump-size: %s is not a multiple of 8 from 64 to "
					"%d",
					optarg, MAX_STACK_DUMP_SIZE);
				return OPTIONS_USAGE_ERROR;
			}
			opts->stack_dump_size = v;
			stack_dump_given = true;
			break;
		case OPT_HASH_STORAGE:
			if (parse_positive("--hash-storage-size", optarg, 1 << 26, &v, err, err_len))
				return OPTIONS_USAGE_ERROR;
			opts->hash_storage_size = v;
			break;
		case OPT_STACK_STORAGE:
			if (parse_positive("--stack-storage-size", optarg, 1 << 24, &v, err, err_len))
				return OPTIONS_USAGE_ERROR;
			opts->stack_storage_size = v;
			break;
		case 'C':
			if (parse_uint(optarg, 0, INT_MAX, &v)) {
				set_err(err, err_len, "argument -C/--cpu: invalid CPU '%s'", optarg);
				return OPTIONS_USAGE_ERROR;
			}
			opts->cpu = (int)v;
			break;
		case OPT_BACKEND:
			if (!strcmp(optarg, "auto"))
				opts->backend = BACKEND_AUTO;
			else if (!strcmp(optarg, "bpf"))
				opts->backend = BACKEND_BPF;
			else if (!strcmp(optarg, "perf"))
				opts->backend = BACKEND_PERF;
			else {
				set_err(err, err_len,
					"argument --backend: invalid choice '%s' (choose from auto, bpf, perf)",
					optarg);
				return OPTIONS_USAGE_ERROR;
			}
			break;
		case 'v':
			opts->verbose++;
			break;
		case ':':
			set_err(err, err_len, "argument %s: expected one argument", argv[optind - 1]);
			return OPTIONS_USAGE_ERROR;
		default:
			set_err(err, err_len, "unrecognized argument: %s", argv[optind - 1]);
			return OPTIONS_USAGE_ERROR;
		}
	}

	if (optind < opt_argc) {
		if (parse_positive("duration", argv[optind], UINT_MAX / 2, &v, err, err_len))
			return OPTIONS_USAGE_ERROR;
		opts->duration = v;
		optind++;
	}
	if (optind < opt_argc) {
		set_err(err, err_len, "unrecognized argument: %s (a command goes after '--')",
			argv[optind]);
		return OPTIONS_USAGE_ERROR;
	}
	if (stack_dump_given && opts->unwind != UNWIND_DWARF) {
		set_err(err, err_len, "argument --stack-dump-size: only with --unwind dwarf");
		return OPTIONS_USAGE_ERROR;
	}
	if (opts->command && (opts->nr_pids || opts->nr_tids)) {
		set_err(err, err_len, "argument -- COMMAND: not allowed with argument -%c",
			seen_thread);
		return OPTIONS_USAGE_ERROR;
	}
	return OPTIONS_OK;
}

void options__free(struct profile_opts *opts)
{
	free(opts->pids);
	free(opts->tids);
	opts->pids = opts->tids = NULL;
}

const char *options__stack_context(const struct profile_opts *opts)
{
	if (opts->user_only)
		return "user";
	if (opts->kernel_only)
		return "kernel";
	return "user + kernel";
}

/* Python's repr() of a list of ints, as bcc prints args.pid: "[185, 186]". */
static void print_id_list(FILE *out, const pid_t *ids, int nr)
{
	fputc('[', out);
	for (int i = 0; i < nr; i++)
		fprintf(out, "%s%d", i ? ", " : "", (int)ids[i]);
	fputc(']', out);
}

void options__print_header(FILE *out, const struct profile_opts *opts)
{
	if (opts->frequency)
		fprintf(out, "Sampling at %u Hertz of ", opts->frequency);
	else
		fprintf(out, "Sampling at every %llu events of ", (unsigned long long)opts->period);

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
	fprintf(out, " by %s stack", options__stack_context(opts));
	if (opts->cpu >= 0)
		fprintf(out, " on CPU#%d", opts->cpu);
	if (opts->duration)
		fprintf(out, " for %u secs.\n", opts->duration);
	else if (opts->command)
		fputs(" until it exits.\n", out);
	else
		fputs("... Hit Ctrl-C to end.\n", out);
}
