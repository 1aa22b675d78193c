// SPDX-License-Identifier: GPL-2.0
#include "app/cli/setters.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compat/cgroup.h"
#include "core/proc/proctrack.h"

void parsed__init(struct parsed *p)
{
	memset(p, 0, sizeof(*p));
	p->run.frequency = DEFAULT_FREQUENCY;
	p->run.hash_storage_size = DEFAULT_HASH_STORAGE_SIZE;
	p->run.stack_storage_size = DEFAULT_STACK_STORAGE_SIZE;
	p->run.stack_dump_size = DEFAULT_STACK_DUMP_SIZE;
	p->run.unwind = DEFAULT_UNWIND;
	p->run.cpu = -1;
	p->run.state = -1;
	p->run.min_block_us = 1;
	p->run.max_block_us = UINT64_MAX;
	p->run.diff_threshold = -1;
}

int parsed__check(struct parsed *p, struct errmsg *err)
{
	/* auto sizes the copies it takes where it takes them. */
	if (p->stack_dump_given && p->run.unwind == UNWIND_FP) {
		errmsg__set(err, "argument --stack-dump-size: only with --unwind dwarf or auto");
		return -1;
	}
	if (p->run.command && (p->run.nr_pids || p->run.nr_tids)) {
		errmsg__set(err, "argument -- COMMAND: not allowed with argument %s",
			    p->run.nr_pids ? "-p" : p->run.mode == MODE_ON_CPU ? "-L" : "-t");
		return -1;
	}
	if (p->run.command && (p->run.nr_cgroups || p->run.cgroupmap || p->run.mntnsmap)) {
		/* The command's events follow it, not a cgroup: start it in the cgroup instead. */
		errmsg__set(err, "argument -- COMMAND: not allowed with argument %s",
			    p->run.nr_cgroups ? "--cgroup" : p->run.cgroupmap ? "--cgroupmap"
									    : "--mntnsmap");
		return -1;
	}
	if (p->run.min_block_us > p->run.max_block_us) {
		errmsg__set(err, "argument -m/--min-block-time: %llu is above the maximum (%llu)",
			    (unsigned long long)p->run.min_block_us,
			    (unsigned long long)p->run.max_block_us);
		return -1;
	}
	return 0;
}

int set_ids(void *o, const struct cli_option *opt, const char *label, const char *arg,
		   struct errmsg *err)
{
	struct run_opts *opts = o;

	if (opt->short_name != 'p')
		return cli__id_list(label, arg, &opts->tids, &opts->nr_tids, err);
	if (cli__id_list(label, arg, &opts->pids, &opts->nr_pids, err))
		return -1;
	/* /proc/TID exists for every thread: a thread's id is not a process's. */
	for (int i = 0; i < opts->nr_pids; i++) {
		pid_t tgid = procfs__tgid_of(opts->pids[i]);

		if (tgid && tgid != opts->pids[i]) {
			errmsg__set(err, "argument %s: %d is a thread of process %d, not a process "
				    "(%s takes threads)", label, (int)opts->pids[i], (int)tgid,
				    opts->mode == MODE_ON_CPU ? "-L" : "-t");
			return -1;
		}
	}
	return 0;
}

int set_folded(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err)
{
	((struct run_opts *)o)->format = FORMAT_FOLDED;
	return 0;
}

/* One of names[] (NULL-terminated), its index into *out. */
static int set_choice(const char *label, const char *arg, const char *const *names,
		      const char *list, int *out, struct errmsg *err)
{
	for (int i = 0; names[i]; i++)
		if (!strcmp(arg, names[i])) {
			*out = i;
			return 0;
		}
	errmsg__set(err, "argument %s: invalid choice '%s' (choose from %s)", label, arg, list);
	return -1;
}

int set_format(void *o, const struct cli_option *opt, const char *label, const char *arg,
		      struct errmsg *err)
{
	static const char *const names[] = { "bcc", "folded", "svg", "pprof", NULL };
	int v;

	if (set_choice(label, arg, names, "bcc, folded, svg, pprof", &v, err))
		return -1;
	((struct run_opts *)o)->format = v;
	return 0;
}

int set_backend(void *o, const struct cli_option *opt, const char *label,
		       const char *arg, struct errmsg *err)
{
	static const char *const names[] = { "auto", "bpf", "perf", NULL };
	int v;

	if (set_choice(label, arg, names, "auto, bpf, perf", &v, err))
		return -1;
	((struct run_opts *)o)->backend = v;
	return 0;
}

int set_unwind(void *o, const struct cli_option *opt, const char *label, const char *arg,
		      struct errmsg *err)
{
	/* In enum unwind_mode's order. */
	static const char *const names[] = { "fp", "dwarf", "auto", NULL };
	int v;

	if (set_choice(label, arg, names, "fp, dwarf, auto", &v, err))
		return -1;
	((struct run_opts *)o)->unwind = v;
	return 0;
}

int set_python(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err)
{
	static const char *const names[] = { "mixed", "raw", "off", NULL };
	int v;

	if (set_choice(label, arg, names, "mixed, raw, off", &v, err))
		return -1;
	((struct run_opts *)o)->python = v;
	return 0;
}

int set_node(void *o, const struct cli_option *opt, const char *label, const char *arg,
	     struct errmsg *err)
{
	static const char *const names[] = { "mixed", "raw", "off", NULL };
	int v;

	if (set_choice(label, arg, names, "mixed, raw, off", &v, err))
		return -1;
	((struct run_opts *)o)->node = v;
	return 0;
}

int set_output(void *o, const struct cli_option *opt, const char *label, const char *arg,
		      struct errmsg *err)
{
	if (!*arg) {
		errmsg__set(err, "argument %s: expected a file name", label);
		return -1;
	}
	((struct run_opts *)o)->output = arg;
	return 0;
}

int set_stack_dump_size(void *o, const struct cli_option *opt, const char *label,
			       const char *arg, struct errmsg *err)
{
	struct run_opts *opts = o;
	unsigned long long v;

	if (cli__positive(label, arg, MAX_STACK_DUMP_SIZE, &v, err))
		return -1;
	if (v < 64 || v % 8) {
		errmsg__set(err, "argument %s: %s is not a multiple of 8 from 64 to %d", label, arg,
			    MAX_STACK_DUMP_SIZE);
		return -1;
	}
	opts->stack_dump_size = (unsigned int)v;
	((struct parsed *)o)->stack_dump_given = true;
	return 0;
}

int set_storage(void *o, const struct cli_option *opt, const char *label, const char *arg,
		       struct errmsg *err)
{
	unsigned long long v;

	if (cli__positive(label, arg, opt->data == OFF(hash_storage_size) ? 1 << 26 : 1 << 24,
			  &v, err))
		return -1;
	*(unsigned int *)((char *)o + opt->data) = (unsigned int)v;
	if (opt->data == OFF(stack_storage_size))
		((struct run_opts *)o)->stack_storage_given = true;
	return 0;
}

int set_micros(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err)
{
	unsigned long long v;

	if (cli__positive(label, arg, UINT64_MAX, &v, err))
		return -1;
	*(uint64_t *)((char *)o + opt->data) = v;
	return 0;
}

int set_state(void *o, const struct cli_option *opt, const char *label, const char *arg,
	      struct errmsg *err)
{
	unsigned long long v;

	if (cli__parse_uint(arg, 0, INT_MAX, &v)) {
		errmsg__set(err, "argument %s: invalid state '%s': must be a non-negative integer",
			    label, arg);
		return -1;
	}
	((struct run_opts *)o)->state = (int)v;
	return 0;
}

int set_cgroup(void *o, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err)
{
	struct run_opts *opts = o;
	const char *p = arg;

	if (!*arg || arg[strlen(arg) - 1] == ',') {
		errmsg__set(err, "argument %s: expected a comma-separated list of cgroup "
			    "directories, got '%s'", label, arg);
		return -1;
	}
	while (*p) {
		size_t n = strcspn(p, ",");
		char **list;

		if (!n) {
			errmsg__set(err, "argument %s: empty path in '%s'", label, arg);
			return -1;
		}
		if (opts->nr_cgroups == CGROUP_MAX) {
			errmsg__set(err, "argument %s: at most %d cgroups", label, CGROUP_MAX);
			return -1;
		}
		list = realloc(opts->cgroups, (opts->nr_cgroups + 1) * sizeof(*list));
		if (!list) {
			errmsg__set(err, "out of memory");
			return -1;
		}
		opts->cgroups = list;
		list[opts->nr_cgroups] = strndup(p, n);
		if (!list[opts->nr_cgroups]) {
			errmsg__set(err, "out of memory");
			return -1;
		}
		opts->nr_cgroups++;
		p += n + (p[n] == ',');
	}
	return 0;
}

int set_path(void *o, const struct cli_option *opt, const char *label, const char *arg,
	     struct errmsg *err)
{
	if (!*arg) {
		errmsg__set(err, "argument %s: expected a path", label);
		return -1;
	}
	*(const char **)((char *)o + opt->data) = arg;
	return 0;
}

int set_duration(void *o, const char *arg, unsigned int index, struct errmsg *err)
{
	unsigned long long v;

	if (index) {
		errmsg__set(err, "unrecognized argument: %s (a command goes after '--')", arg);
		return -1;
	}
	if (cli__positive("duration", arg, UINT_MAX / 2, &v, err))
		return -1;
	((struct run_opts *)o)->duration = (unsigned int)v;
	return 0;
}

