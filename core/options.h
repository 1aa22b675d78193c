/* SPDX-License-Identifier: GPL-2.0 */
/* Command line of bcc's profile.py, plus --backend and -- COMMAND. */
#ifndef CORE_OPTIONS_H
#define CORE_OPTIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define DEFAULT_FREQUENCY 49
#define DEFAULT_HASH_STORAGE_SIZE 40960
#define DEFAULT_STACK_STORAGE_SIZE 16384
/* Bytes of user stack copied per sample in dwarf mode; the kernel refuses 65536. */
#define DEFAULT_STACK_DUMP_SIZE 16384
#define MAX_STACK_DUMP_SIZE 65528

enum backend_choice {
	BACKEND_AUTO,
	BACKEND_BPF,
	BACKEND_PERF,
};

enum unwind_mode {
	UNWIND_FP,		/* frame pointers, walked by the kernel */
	UNWIND_DWARF,		/* .eh_frame over a copy of the user stack, in user space */
};

enum output_format {
	FORMAT_BCC,		/* bcc's multi-line report */
	FORMAT_FOLDED,		/* -f: one line per stack */
	FORMAT_SVG,		/* an interactive flame graph */
	FORMAT_PPROF,		/* gzip'ed profile.proto */
};

struct profile_opts {
	pid_t *pids;		/* -p: processes (tgids) */
	int nr_pids;
	pid_t *tids;		/* -L: threads */
	int nr_tids;
	bool user_only;		/* -U */
	bool kernel_only;	/* -K */
	unsigned int frequency;	/* -F, 0 when -c is given */
	uint64_t period;	/* -c, 0 when sampling by frequency */
	bool delimited;		/* -d */
	bool annotations;	/* -a */
	bool addresses;		/* -A */
	bool include_idle;	/* -I */
	enum output_format format;	/* -f is FORMAT_FOLDED */
	const char *output;	/* --output FILE, NULL for stdout */
	unsigned int hash_storage_size;
	unsigned int stack_storage_size;
	int cpu;		/* -C, -1 for all */
	enum backend_choice backend;
	enum unwind_mode unwind;	/* --unwind */
	unsigned int stack_dump_size;	/* --stack-dump-size, bytes, a multiple of 8 */
	int verbose;		/* -v, repeatable */
	unsigned int duration;	/* seconds, 0 = until Ctrl-C */
	char **command;		/* after --, NULL-terminated; NULL if none */
	/* Set by the core, not the command line: */
	bool no_kernel_access;	/* this user may not sample the kernel: user mode only */
};

enum options_result {
	OPTIONS_OK,
	OPTIONS_HELP,		/* -h: usage printed, exit 0 */
	OPTIONS_USAGE_ERROR,	/* message in err, exit 2 */
};

/*
 * Parse argv into opts. On a usage error, err holds a one-line message
 * naming the option. opts must be freed with options__free() in every case.
 */
enum options_result options__parse(int argc, char **argv, struct profile_opts *opts, char *err,
				   size_t err_len);
void options__free(struct profile_opts *opts);
void options__usage(FILE *out);

/* bcc's header line, e.g. "Sampling at 49 Hertz of all threads by user + kernel stack". */
void options__print_header(FILE *out, const struct profile_opts *opts);

/* Whether user stacks are unwound from stack copies (--unwind dwarf, and user stacks wanted). */
static inline bool options__dwarf(const struct profile_opts *opts)
{
	return opts->unwind == UNWIND_DWARF && !opts->kernel_only;
}

/* The stack context words of the header: "user", "kernel" or "user + kernel". */
const char *options__stack_context(const struct profile_opts *opts);

#endif
