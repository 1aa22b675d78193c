/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A command-line parser driven by a table, one row per option (spellings,
 * argument, setter, help), in the manner of Python's argparse that bcc's
 * tools use: the same errors ("argument -p/--pid: ..."), mutually exclusive
 * groups, clustered short flags, "--long=value", positionals, and
 * "-- COMMAND ARGS". The help text is generated from the same table.
 */
#ifndef APP_CLI_ARGPARSE_H
#define APP_CLI_ARGPARSE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "core/lib/log.h"

struct cli_option;

/*
 * Apply one occurrence of an option to opts. label is how messages name it
 * ("-p/--pid"); arg is its argument, or NULL for a flag. Returns 0, or -1
 * with a one-line message in err (without the program name).
 */
typedef int (*cli_setter)(void *opts, const struct cli_option *opt, const char *label,
			  const char *arg, struct errmsg *err);

struct cli_option {
	char short_name;	/* 0: none */
	const char *long_name;	/* NULL: none */
	const char *metavar;	/* NULL: a flag, without argument */
	cli_setter set;
	intptr_t data;		/* for the setter: a value, an offset, ... */
	unsigned int group;	/* options of one non-zero group exclude each other */
	const char *help;	/* NULL: not listed */
};

struct cli_positional {
	const char *name;	/* "duration" */
	const char *help;
};

struct cli_spec {
	const char *prog;		/* "profile" */
	const char *usage;		/* the synopsis after "usage: ", lines already wrapped */
	const char *description;
	const struct cli_option *options;	/* ends with a row without set */
	const struct cli_positional *positionals;	/* ends with a row without name */
	/* Each positional argument in turn; index counts them. Returns 0 or -1 with err. */
	int (*positional)(void *opts, const char *arg, unsigned int index, struct errmsg *err);
	bool command;			/* "-- COMMAND [ARGS...]" ends the options */
	/* Rules across options, after parsing. Returns 0 or -1 with err. */
	int (*check)(void *opts, struct errmsg *err);
	const char *epilog;		/* examples, printed after the options */
};

enum cli_result {
	CLI_OK,
	CLI_HELP,		/* -h: help printed, exit 0 */
	CLI_USAGE_ERROR,	/* message in err, exit 2 */
};

/* Parse argv into opts. *command points into argv after "--", or is NULL. */
enum cli_result cli__parse(const struct cli_spec *spec, int argc, char **argv, void *opts,
			   char ***command, struct errmsg *err);
void cli__help(const struct cli_spec *spec, FILE *out);

/* Setters and argument readers for the common cases. */

/* A flag setting the bool at offset data of opts. */
int cli__set_flag(void *opts, const struct cli_option *opt, const char *label, const char *arg,
		  struct errmsg *err);
/* A flag adding one to the int at offset data (-v, -vv). */
int cli__count(void *opts, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
/* A decimal integer in [min, max]: no sign, no spaces, nothing after it. 0 or -EINVAL/-ERANGE. */
int cli__parse_uint(const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out);
/* The same, 1..max, with argparse-style messages naming label. Returns 0 or -1. */
int cli__positive(const char *label, const char *arg, unsigned long long max,
		  unsigned long long *out, struct errmsg *err);
/*
 * A comma-separated list of existing process or thread ids, duplicates
 * dropped (a repeated id would be sampled twice). Returns 0 or -1.
 */
int cli__id_list(const char *label, const char *arg, int **ids, int *nr, struct errmsg *err);

#endif
