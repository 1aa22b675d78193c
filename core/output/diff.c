// SPDX-License-Identifier: GPL-2.0
/*
 * Two profiles compared, as text: each function's self share and each
 * stack's share in both, in percent of each profile's own total, sorted by
 * the change (growth first).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/model/diff.h"
#include "core/output/text.h"
#include "core/output/writer.h"

struct stack_change {
	const char *text;
	double base, new;
};

static int cmp_stack_change(const void *a, const void *b)
{
	const struct stack_change *x = a, *y = b;
	double dx = x->new - x->base, dy = y->new - y->base;

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void format_folded(struct strbuf *sb, const struct profile *p, const struct profile_stack *s,
			  const struct frame_texts *ft)
{
	text__escaped(sb, s->comm, strlen(s->comm), ESCAPE_CONTROLS_AND_SEMICOLONS);
	for (unsigned int i = s->nr_kernel + s->nr_user; i-- > s->nr_kernel;) {
		strbuf__putn(sb, ";", 1);
		frame_texts__put(sb, ft, p, s, i);
	}
	for (unsigned int i = s->nr_kernel; i-- > 0;) {
		strbuf__putn(sb, ";", 1);
		frame_texts__put(sb, ft, p, s, i);
	}
}

/* A total's unit as a reader says it: folded inputs count samples. */
static const char *unit_name(const char *unit)
{
	return strcmp(unit, "count") ? unit : "samples";
}

int writer__diff(FILE *out, const struct profile *p, const struct writer_opts *o)
{
	/* Kernel frames annotated: a kernel and a user function of one name stay apart. */
	struct writer_opts to = { .annotations = true };
	struct diff_function *fns = NULL;
	struct stack_change *sc = NULL;
	struct strbuf sb = { 0 };
	struct frame_texts ft;
	uint64_t tb, tn;
	size_t nf = 0;
	int err;

	profile__diff_totals(p, &tb, &tn);
	err = profile__diff_functions(p, &fns, &nf);
	if (!err)
		err = frame_texts__init(&ft, p, &to, ESCAPE_CONTROLS);
	if (err) {
		free(fns);
		return err;
	}
	sc = calloc(p->nr_stacks ? p->nr_stacks : 1, sizeof(*sc));
	for (size_t i = 0; sc && i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		strbuf__reset(&sb);
		format_folded(&sb, p, s, &ft);
		sc[i].text = sb.oom ? NULL : strdup(sb.buf);
		if (!sc[i].text) {
			err = -ENOMEM;
			break;
		}
		sc[i].base = tb ? 100.0 * s->values[0] / tb : 0;
		sc[i].new = tn ? 100.0 * s->values[1] / tn : 0;
	}
	if (!sc)
		err = -ENOMEM;
	if (!err) {
		qsort(sc, p->nr_stacks, sizeof(*sc), cmp_stack_change);
		fprintf(out, "Base: %" PRIu64 " %s; new: %" PRIu64 " %s. Shares in percent of each "
			     "total, changes in points.\n\n",
			tb, unit_name(p->columns[0].unit), tn, unit_name(p->columns[1].unit));
		fprintf(out, "Functions by change of self share:\n%8s %8s %8s  %s\n", "CHANGE",
			"BASE", "NEW", "FUNCTION");
		for (size_t i = 0; i < nf; i++) {
			strbuf__reset(&sb);
			text__escaped(&sb, fns[i].name, strlen(fns[i].name), ESCAPE_CONTROLS);
			fprintf(out, "%+8.2f %8.2f %8.2f  %s\n", fns[i].new - fns[i].base,
				fns[i].base, fns[i].new, sb.oom ? "?" : sb.buf);
		}
		fprintf(out, "\nStacks by change of share:\n%8s %8s %8s  %s\n", "CHANGE", "BASE",
			"NEW", "STACK");
		for (size_t i = 0; i < p->nr_stacks; i++)
			fprintf(out, "%+8.2f %8.2f %8.2f  %s\n", sc[i].new - sc[i].base, sc[i].base,
				sc[i].new, sc[i].text);
		err = writer__flush(out);
	}
	for (size_t i = 0; sc && i < p->nr_stacks; i++)
		free((char *)sc[i].text);
	free(sc);
	free(fns);
	frame_texts__fini(&ft);
	strbuf__free(&sb);
	return err;
}
