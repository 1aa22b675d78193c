// SPDX-License-Identifier: GPL-2.0
#include "app/cli/argparse.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HELP_COLUMN 24
#define HELP_WIDTH 80
#define MAX_GROUPS 16

/* "-p/--pid", "-F", "--backend" */
static void label_of(const struct cli_option *o, char *buf, size_t len)
{
	if (o->short_name && o->long_name)
		snprintf(buf, len, "-%c/--%s", o->short_name, o->long_name);
	else if (o->short_name)
		snprintf(buf, len, "-%c", o->short_name);
	else
		snprintf(buf, len, "--%s", o->long_name);
}

static const struct cli_option *find_short(const struct cli_spec *spec, char c)
{
	for (const struct cli_option *o = spec->options; o->set; o++)
		if (o->short_name == c)
			return o;
	return NULL;
}

static const struct cli_option *find_long(const struct cli_spec *spec, const char *name,
					  size_t len)
{
	for (const struct cli_option *o = spec->options; o->set; o++)
		if (o->long_name && strlen(o->long_name) == len && !strncmp(o->long_name, name, len))
			return o;
	return NULL;
}

struct parse_state {
	const struct cli_spec *spec;
	void *opts;
	/* Per group: the option seen, and how it was spelled. */
	const struct cli_option *seen[MAX_GROUPS];
	char seen_as[MAX_GROUPS][64];
};

/* One occurrence of o, spelled as typed; arg NULL for a flag. */
static int apply(struct parse_state *st, const struct cli_option *o, const char *typed,
		 const char *arg, struct errmsg *err)
{
	char label[96];

	if (o->group && o->group < MAX_GROUPS) {
		if (st->seen[o->group] && st->seen[o->group] != o) {
			errmsg__set(err, "argument %s: not allowed with argument %s", typed,
				    st->seen_as[o->group]);
			return -1;
		}
		st->seen[o->group] = o;
		snprintf(st->seen_as[o->group], sizeof(st->seen_as[o->group]), "%s", typed);
	}
	label_of(o, label, sizeof(label));
	return o->set(st->opts, o, label, arg, err);
}

/* "--name" or "--name=value"; *i moves past a separate argument. */
static int long_option(struct parse_state *st, int argc, char **argv, int *i, struct errmsg *err)
{
	const char *a = argv[*i] + 2, *eq = strchr(a, '=');
	size_t len = eq ? (size_t)(eq - a) : strlen(a);
	const struct cli_option *o = find_long(st->spec, a, len);
	char typed[64];

	if (!o) {
		errmsg__set(err, "unrecognized argument: %s", argv[*i]);
		return -1;
	}
	snprintf(typed, sizeof(typed), "--%s", o->long_name);
	if (!o->metavar) {
		if (eq) {
			errmsg__set(err, "argument %s: ignored explicit argument '%s'", typed,
				    eq + 1);
			return -1;
		}
		return apply(st, o, typed, NULL, err);
	}
	if (eq)
		return apply(st, o, typed, eq + 1, err);
	if (*i + 1 >= argc) {
		errmsg__set(err, "argument %s: expected one argument", typed);
		return -1;
	}
	return apply(st, o, typed, argv[++*i], err);
}

/* "-abc", "-p123", "-p 123"; *i moves past a separate argument. */
static int short_options(struct parse_state *st, int argc, char **argv, int *i,
			 struct errmsg *err)
{
	const char *a = argv[*i];

	for (size_t j = 1; a[j]; j++) {
		const struct cli_option *o = find_short(st->spec, a[j]);
		char typed[3] = { '-', a[j], 0 };

		if (!o) {
			if (j > 1 || a[j + 1])
				errmsg__set(err, "unrecognized argument: -%c (in %s)", a[j], a);
			else
				errmsg__set(err, "unrecognized argument: %s", a);
			return -1;
		}
		if (!o->metavar) {
			if (apply(st, o, typed, NULL, err))
				return -1;
			continue;
		}
		if (a[j + 1])
			return apply(st, o, typed, a + j + 1, err);
		if (*i + 1 >= argc) {
			errmsg__set(err, "argument %s: expected one argument", typed);
			return -1;
		}
		return apply(st, o, typed, argv[++*i], err);
	}
	return 0;
}

static bool is_help(const char *a)
{
	return !strcmp(a, "-h") || !strcmp(a, "--help");
}

enum cli_result cli__parse(const struct cli_spec *spec, int argc, char **argv, void *opts,
			   char ***command, struct errmsg *err)
{
	struct parse_state st = { .spec = spec, .opts = opts };
	unsigned int npos = 0;
	int end = argc;

	*command = NULL;
	err->text[0] = '\0';
	/* Everything after "--" is the command, never options. */
	for (int i = 1; spec->command && i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			if (i + 1 >= argc) {
				errmsg__set(err, "argument --: expected a command after '--'");
				return CLI_USAGE_ERROR;
			}
			*command = &argv[i + 1];
			end = i;
			break;
		}
	for (int i = 1; i < end; i++)
		if (is_help(argv[i])) {
			cli__help(spec, stdout);
			return CLI_HELP;
		}
	for (int i = 1; i < end; i++) {
		const char *a = argv[i];
		int ret;

		if (a[0] == '-' && a[1] == '-' && a[2])
			ret = long_option(&st, end, argv, &i, err);
		else if (a[0] == '-' && a[1])
			ret = short_options(&st, end, argv, &i, err);
		else if (spec->positional)
			ret = spec->positional(opts, a, npos++, err);
		else {
			errmsg__set(err, "unrecognized argument: %s", a);
			ret = -1;
		}
		if (ret)
			return CLI_USAGE_ERROR;
	}
	if (spec->check && spec->check(opts, err))
		return CLI_USAGE_ERROR;
	return CLI_OK;
}

/* Words of text from column col, wrapped at HELP_WIDTH, each line indented to HELP_COLUMN. */
static void put_wrapped(FILE *out, const char *text, int col)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");

		if (col > HELP_COLUMN && col + 1 + (int)word > HELP_WIDTH) {
			fprintf(out, "\n%*s", HELP_COLUMN, "");
			col = HELP_COLUMN;
		} else if (col > HELP_COLUMN) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, word, out);
		col += (int)word;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

/* "  -p PID, --pid PID", then the help at HELP_COLUMN, or on the next line if it is long. */
static void put_entry(FILE *out, const char *invocation, const char *help)
{
	int n = fprintf(out, "  %s", invocation);

	if (n + 2 > HELP_COLUMN) {
		fprintf(out, "\n%*s", HELP_COLUMN, "");
	} else {
		fprintf(out, "%*s", HELP_COLUMN - n, "");
	}
	put_wrapped(out, help, HELP_COLUMN);
}

void cli__help(const struct cli_spec *spec, FILE *out)
{
	char inv[128];

	fprintf(out, "usage: %s\n\n%s\n", spec->usage, spec->description);
	if (spec->positionals && spec->positionals[0].name) {
		fputs("\npositional arguments:\n", out);
		for (const struct cli_positional *p = spec->positionals; p->name; p++)
			put_entry(out, p->name, p->help);
	}
	fputs("\noptions:\n", out);
	put_entry(out, "-h, --help", "show this help message and exit");
	for (const struct cli_option *o = spec->options; o->set; o++) {
		const char *mv = o->metavar;

		if (!o->help)
			continue;
		if (o->short_name && o->long_name)
			snprintf(inv, sizeof(inv), mv ? "-%c %s, --%s %s" : "-%c, --%s", o->short_name,
				 mv ? mv : o->long_name, o->long_name, mv);
		else if (o->short_name)
			snprintf(inv, sizeof(inv), mv ? "-%c %s" : "-%c", o->short_name, mv);
		else
			snprintf(inv, sizeof(inv), mv ? "--%s %s" : "--%s", o->long_name, mv);
		put_entry(out, inv, o->help);
	}
	if (spec->epilog)
		fprintf(out, "\n%s", spec->epilog);
}

int cli__set_flag(void *opts, const struct cli_option *opt, const char *label, const char *arg,
		  struct errmsg *err)
{
	*(bool *)((char *)opts + opt->data) = true;
	return 0;
}

int cli__count(void *opts, const struct cli_option *opt, const char *label, const char *arg,
	       struct errmsg *err)
{
	(*(int *)((char *)opts + opt->data))++;
	return 0;
}

int cli__parse_uint(const char *s, unsigned long long min, unsigned long long max,
		    unsigned long long *out)
{
	char *end;
	unsigned long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || *end)
		return -EINVAL;
	if (v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli__positive(const char *label, const char *arg, unsigned long long max,
		  unsigned long long *out, struct errmsg *err)
{
	int ret = cli__parse_uint(arg, 1, max, out);

	if (ret == -ERANGE && arg[0] == '0' && !arg[1])
		errmsg__set(err, "argument %s: must be nonzero", label);
	else if (ret == -ERANGE)
		errmsg__set(err, "argument %s: %s is out of range (1..%llu)", label, arg, max);
	else if (ret)
		errmsg__set(err, "argument %s: invalid value '%s': must be a positive integer",
			    label, arg);
	return ret ? -1 : 0;
}

static bool id_exists(int id)
{
	char path[64];

	/* /proc/TID exists for threads too, though readdir does not list them. */
	snprintf(path, sizeof(path), "/proc/%d", id);
	return access(path, F_OK) == 0;
}

int cli__id_list(const char *label, const char *arg, int **ids, int *nr, struct errmsg *err)
{
	size_t len = strlen(arg), cap = len / 2 + 2;
	const char *p = arg;
	int *list;

	if (!len || arg[len - 1] == ',') {
		errmsg__set(err, "argument %s: expected a comma-separated list of IDs, got '%s'",
			    label, arg);
		return -1;
	}
	/* A repeated option adds to the list. */
	list = realloc(*ids, (*nr + cap) * sizeof(*list));
	if (!list) {
		errmsg__set(err, "out of memory");
		return -1;
	}
	*ids = list;
	while (*p) {
		size_t n = strcspn(p, ",");
		unsigned long long v;
		char tok[32];
		bool dup = false;

		snprintf(tok, sizeof(tok), "%.*s", (int)(n < sizeof(tok) - 1 ? n : sizeof(tok) - 1),
			 p);
		if (n >= sizeof(tok) || cli__parse_uint(tok, 1, INT_MAX, &v)) {
			errmsg__set(err, "argument %s: invalid ID '%.*s': must be a positive integer",
				    label, (int)(n > 40 ? 40 : n), p);
			return -1;
		}
		if (!id_exists((int)v)) {
			errmsg__set(err, "argument %s: no such process or thread: %llu", label, v);
			return -1;
		}
		for (int i = 0; i < *nr; i++)
			dup |= list[i] == (int)v;
		if (!dup)
			list[(*nr)++] = (int)v;
		p += n + (p[n] == ',');
	}
	return 0;
}
