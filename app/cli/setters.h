/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The pieces of the command lines that profile and offcputime share: the
 * parser's output (struct parsed), defaults, and the setters of options
 * both accept (ids, --backend, --format, --output, --unwind, sizes, the
 * duration).
 */
#ifndef APP_CLI_SETTERS_H
#define APP_CLI_SETTERS_H

#include <stdbool.h>
#include <stddef.h>

#include "app/cli/argparse.h"
#include "app/run/run.h"

#define DEFAULT_FREQUENCY 49
#define DEFAULT_HASH_STORAGE_SIZE 40960
#define DEFAULT_STACK_STORAGE_SIZE 16384
/* Bytes of user stack copied per sample in dwarf mode; the kernel refuses 65536. */
#define DEFAULT_STACK_DUMP_SIZE 16384
#define MAX_STACK_DUMP_SIZE 65528

/* What the parser fills: the run's options, and what only the parser needs to know. */
struct parsed {
	struct run_opts run;	/* first: option offsets are into it */
	bool stack_dump_given;
	bool diff;		/* --diff: the positionals are two files */
	bool threshold_given;	/* --diff-threshold */
	/* The positional arguments as given: a duration, or --diff's files. */
	const char *positionals[2];
	unsigned int nr_positionals;
};

#define OFF(field) offsetof(struct run_opts, field)

/* The defaults both programs start from. */
void parsed__init(struct parsed *p);
/* Rules across options both programs have; 0 or -1 with err. */
int parsed__check(struct parsed *p, struct errmsg *err);

/* -p (data 'p': processes), -L/-t (threads) */
int set_ids(void *o, const struct cli_option *opt, const char *label, const char *arg,
	    struct errmsg *err);
int set_format(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
int set_folded(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
int set_backend(void *o, const struct cli_option *opt, const char *label, const char *arg,
		struct errmsg *err);
int set_unwind(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
int set_node(void *o, const struct cli_option *opt, const char *label, const char *arg,
	     struct errmsg *err);
int set_python(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
int set_output(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
int set_stack_dump_size(void *o, const struct cli_option *opt, const char *label,
			const char *arg, struct errmsg *err);
/* --hash-storage-size, --stack-storage-size (data: the field's offset) */
int set_storage(void *o, const struct cli_option *opt, const char *label, const char *arg,
		struct errmsg *err);
/* A number of microseconds into the uint64_t at offset data (-m, -M). */
int set_micros(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
/* --state: a thread-state mask, 0 for "was runnable" (preempted). */
int set_state(void *o, const struct cli_option *opt, const char *label, const char *arg,
	      struct errmsg *err);
/* --cgroup: a comma-separated list of cgroup directories; repeated, it adds to the list. */
int set_cgroup(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err);
/* A path into the const char * at offset data (--cgroupmap, --mntnsmap). */
int set_path(void *o, const struct cli_option *opt, const char *label, const char *arg,
	     struct errmsg *err);
/* The duration, the one positional argument. */
int set_duration(void *o, const char *arg, unsigned int index, struct errmsg *err);

#endif
