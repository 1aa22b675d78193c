/* SPDX-License-Identifier: GPL-2.0 */
/* profile's command line: bcc's profile.py, plus --backend, formats, unwinding and -- COMMAND. */
#ifndef APP_CLI_OPTIONS_H
#define APP_CLI_OPTIONS_H

#include <stdio.h>

#include "app/cli/argparse.h"
#include "app/run/run.h"


enum options_result {
	OPTIONS_OK = CLI_OK,
	OPTIONS_HELP = CLI_HELP,		/* -h: usage printed, exit 0 */
	OPTIONS_USAGE_ERROR = CLI_USAGE_ERROR,	/* message in err, exit 2 */
};

/*
 * Parse argv into opts. On a usage error, err holds a one-line message
 * naming the option. opts must be freed with options__free() in every case.
 */
enum options_result options__parse(int argc, char **argv, struct run_opts *opts, char *err,
				   size_t err_len);
void options__free(struct run_opts *opts);
void options__usage(FILE *out);

/* bcc's header line, e.g. "Sampling at 49 Hertz of all threads by user + kernel stack". */
void options__print_header(FILE *out, const struct run_opts *opts);

/* offcputime's command line: bcc's offcputime.py, plus the options profile shares. */
enum options_result offcputime__parse(int argc, char **argv, struct run_opts *opts, char *err,
				      size_t err_len);
/* "Tracing off-CPU time (us) of all threads by user + kernel stack... Hit Ctrl-C to end." */
void offcputime__print_header(FILE *out, const struct run_opts *opts);

#endif
