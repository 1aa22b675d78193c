// SPDX-License-Identifier: GPL-2.0
/*
 * profile --diff BASE NEW: no sampling, two profile files read back,
 * compared, and the comparison written like any report (to --output, in
 * --format). --diff-threshold turns it into a CI gate: exit 1 when some
 * function's self share grew by more than that many points.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/run/outfile.h"
#include "app/run/run.h"
#include "core/input/read.h"
#include "core/lib/log.h"
#include "core/model/diff.h"
#include "core/output/writer.h"

static int read_profile(const char *path, struct profile *p)
{
	struct errmsg em = { "" };

	int err = profile__read_file(path, p, &em);

	if (!err)
		return 0;
	if (!em.text[0])
		errmsg__set(&em, "reading %s: %s", path, strerror(err < 0 ? -err : EIO));
	pr_warn("%s\n", em.text);
	return -1;
}

static int write_diff(const struct run_opts *o, const struct profile *diff, FILE *out)
{
	static int (*const writers[])(FILE *, const struct profile *, const struct writer_opts *) = {
		[FORMAT_BCC] = writer__diff,	/* the text report of changes */
		[FORMAT_FOLDED] = writer__folded,
		[FORMAT_SVG] = writer__svg,
		[FORMAT_PPROF] = writer__pprof,
	};
	struct writer_opts wo = { .delimited = o->delimited, .annotations = o->annotations };

	errno = 0;
	return writers[o->format](out, diff, &wo);
}

/*
 * The function whose self share grew most, if by more than the threshold.
 * Prints the verdict either way. Returns 1 above it, 0 otherwise, -ENOMEM.
 */
static int judge(const struct run_opts *o, const struct profile *diff)
{
	struct diff_function *fns = NULL;
	size_t nr = 0;
	int err, above;

	err = profile__diff_functions(diff, &fns, &nr);
	if (err)
		return err;
	/* Sorted by change, growth first. */
	above = nr && fns[0].new - fns[0].base > o->diff_threshold;
	if (above)
		pr_warn("%s: self share grew by %.2f points (%.2f%% -> %.2f%%), more than "
			"--diff-threshold %g\n",
			fns[0].name, fns[0].new - fns[0].base, fns[0].base, fns[0].new,
			o->diff_threshold);
	else
		pr_info("no function's self share grew by more than %g points\n",
			o->diff_threshold);
	free(fns);
	return above;
}

int run__diff(const struct run_opts *o)
{
	struct profile base, new, diff;
	struct outfile out = { 0 };
	struct errmsg em = { "" };
	char title[512];
	int err, code = 1;

	log_set_verbosity(o->verbose);
	profile__init(&base);
	profile__init(&new);
	profile__init(&diff);
	if (read_profile(o->diff_base, &base) || read_profile(o->diff_new, &new))
		goto out;
	if (profile__diff(&base, &new, &diff)) {
		pr_warn("comparing the profiles: %s\n", strerror(ENOMEM));
		goto out;
	}
	snprintf(title, sizeof(title), "Differential: %s -> %s (red grew, blue shrank)",
		 o->diff_base, o->diff_new);
	diff.title = profile__intern(&diff, title);
	diff.comment = diff.title;
	err = outfile__open(&out, o->output, &em);
	if (err) {
		pr_warn("%s\n", errmsg__reason(&em, err));
		goto out;
	}
	err = write_diff(o, &diff, out.f);
	if (err) {
		pr_warn("writing the report: %s\n", strerror(-err));
		goto out;
	}
	err = outfile__commit(&out, &em);
	if (err) {
		pr_warn("%s\n", errmsg__reason(&em, err));
		goto out;
	}
	code = 0;
	if (o->diff_threshold >= 0) {
		err = judge(o, &diff);
		code = err ? 1 : 0;
		if (err < 0)
			pr_warn("judging the threshold: %s\n", strerror(-err));
	}
out:
	outfile__discard(&out);
	profile__fini(&diff);
	profile__fini(&new);
	profile__fini(&base);
	return code;
}
