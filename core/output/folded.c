// SPDX-License-Identifier: GPL-2.0
/* Folded stacks: "comm;user root..leaf;[-;]kernel root..leaf count". */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core/lib/interrupt.h"
#include "core/output/text.h"
#include "core/output/writer.h"

static void format_line(struct strbuf *sb, const struct profile *p, const struct profile_stack *s,
			const struct writer_opts *o, const struct frame_texts *ft)
{
	text__escaped(sb, s->comm, strlen(s->comm), ESCAPE_CONTROLS_AND_SEMICOLONS);
	for (unsigned int i = s->nr_kernel + s->nr_user; i-- > s->nr_kernel;) {
		strbuf__putn(sb, ";", 1);
		frame_texts__put(sb, ft, p, s, i);
	}
	if (text__delimited(s, o))
		strbuf__puts(sb, ";-");
	for (unsigned int i = s->nr_kernel; i-- > 0;) {
		strbuf__putn(sb, ";", 1);
		frame_texts__put(sb, ft, p, s, i);
	}
}

/*
 * Two profiles compared: "stack base new" lines, the input of flamegraph.pl
 * for a differential flame graph (FlameGraph's difffolded.pl output).
 */
static int write_differential(FILE *out, const struct profile *p, const struct writer_opts *o)
{
	struct strbuf sb = { 0 };
	struct frame_texts ft;
	int err = frame_texts__init(&ft, p, o, ESCAPE_CONTROLS_AND_SEMICOLONS);

	for (size_t i = 0; !err && i < p->nr_stacks; i++) {
		const struct profile_stack *s = &p->stacks[i];

		strbuf__reset(&sb);
		format_line(&sb, p, s, o, &ft);
		if (sb.oom)
			err = -ENOMEM;
		else
			fprintf(out, "%s %" PRIu64 " %" PRIu64 "\n", sb.buf, s->values[0],
				s->values[1]);
	}
	/* Safe after a failed init too: it leaves nothing allocated. */
	frame_texts__fini(&ft);
	strbuf__free(&sb);
	return err ? err : writer__flush(out);
}

int writer__folded(FILE *out, const struct profile *p, const struct writer_opts *o)
{
	/* Raw addresses before each frame are a multi-line thing (the 2016 offcputime's -v). */
	struct writer_opts fo = *o;
	struct text_stacks ts;
	int err;

	fo.raw_addresses = false;
	if (p->differential)
		return write_differential(out, p, &fo);
	err = text__merge(p, &fo, ESCAPE_CONTROLS_AND_SEMICOLONS, format_line, &ts);
	if (err)
		return err;
	for (size_t i = 0; i < ts.nr && !interrupt__pending(); i++)
		fprintf(out, "%s %" PRIu64 "\n", ts.stacks[i].text, ts.stacks[i].value);
	writer__printed_missed(o, ts.missed);
	text_stacks__free(&ts);
	return writer__flush(out);
}
