// SPDX-License-Identifier: GPL-2.0
/* bcc's multi-line report. */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "core/lib/interrupt.h"
#include "core/output/text.h"
#include "core/output/writer.h"

static void put_frames(struct strbuf *sb, const struct profile *p, const struct profile_stack *s,
		       unsigned int from, unsigned int nr, const struct frame_texts *ft)
{
	for (unsigned int i = from; i < from + nr; i++) {
		strbuf__putn(sb, "    ", 4);
		frame_texts__put(sb, ft, p, s, i);
		strbuf__putn(sb, "\n", 1);
	}
}

/* Kernel frames leaf first, "--", user frames leaf first, then "- comm (pid)". */
static void format_block(struct strbuf *sb, const struct profile *p, const struct profile_stack *s,
			 const struct writer_opts *o, const struct frame_texts *ft)
{
	put_frames(sb, p, s, 0, s->nr_kernel, ft);
	if (text__delimited(s, o))
		strbuf__puts(sb, "    --\n");
	put_frames(sb, p, s, s->nr_kernel, s->nr_user, ft);
	/* bcc prints the process; where threads are kept apart, the thread. */
	strbuf__printf(sb, "    %-16s ", "-");
	text__escaped(sb, s->comm, strlen(s->comm), ESCAPE_CONTROLS);
	strbuf__printf(sb, " (%d)\n", (int)(s->tid ? s->tid : s->pid));
}

int writer__bcc(FILE *out, const struct profile *p, const struct writer_opts *o)
{
	struct text_stacks ts;
	int err = text__merge(p, o, ESCAPE_CONTROLS, format_block, &ts);

	if (err)
		return err;
	for (size_t i = 0; i < ts.nr && !interrupt__pending(); i++)
		fprintf(out, "%s        %" PRIu64 "\n\n", ts.stacks[i].text, ts.stacks[i].value);
	writer__printed_missed(o, ts.missed);
	text_stacks__free(&ts);
	return writer__flush(out);
}
