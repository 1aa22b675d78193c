/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the text formats share: a frame's text, where the kernel/user
 * delimiter goes, and stacks merged by the text they print (stacks that
 * print the same are one, whatever addresses made them), sorted by value
 * (ascending), ties by text.
 */
#ifndef CORE_OUTPUT_TEXT_H
#define CORE_OUTPUT_TEXT_H

#include <stdbool.h>
#include <stdint.h>

#include "core/lib/strbuf.h"
#include "core/model/profile.h"
#include "core/output/writer.h"

/*
 * Names come from files and processes anyone controls: a control character,
 * C0 or C1 (a newline is a fake line; ESC and U+009B CSI drive the
 * terminal the report is read on) or, in folded stacks and flame graphs, a
 * ';' (a fake frame) is written as \xNN, each of its bytes.
 */
enum text_escape {
	ESCAPE_CONTROLS,		/* multi-line text */
	ESCAPE_CONTROLS_AND_SEMICOLONS,	/* folded stacks, flame graphs */
};

/*
 * One frame: "[ADDR ]name[+OFF][ (inlined)][_[k]][ [module]]"; a missed-stack
 * placeholder by its name. " (inlined)" marks an inlined call in multi-line
 * text (esc ESCAPE_CONTROLS) only, as perf report --inline does. A user frame
 * without a symbol is "[unknown]" there and "[module]" in folded stacks and
 * flame graphs without -A (profile_frame__unnamed_module). The text is not
 * escaped yet (text__escaped): names and modules come from files anyone names.
 */
void text__frame(struct strbuf *sb, const struct profile_frame *f, const struct writer_opts *o,
		 enum text_escape esc);

void text__escaped(struct strbuf *sb, const char *s, size_t len, enum text_escape esc);

/* Whether -d puts a delimiter in this stack: both parts there and complete. */
bool text__delimited(const struct profile_stack *s, const struct writer_opts *o);

/* Every frame's text, formatted once per report: stacks share frames. */
struct frame_texts {
	char *buf;
	uint32_t *start;	/* frame i's text is buf[start[i]..start[i + 1]) */
};

/* Returns 0 or -ENOMEM. */
int frame_texts__init(struct frame_texts *ft, const struct profile *p,
		      const struct writer_opts *o, enum text_escape esc);
void frame_texts__fini(struct frame_texts *ft);
/* Append the text of frame i of stack s. */
static inline void frame_texts__put(struct strbuf *sb, const struct frame_texts *ft,
				    const struct profile *p, const struct profile_stack *s,
				    unsigned int i)
{
	uint32_t f = p->stack_frames[s->first + i];

	strbuf__putn(sb, ft->buf + ft->start[f], ft->start[f + 1] - ft->start[f]);
}

struct text_stack {
	char *text;
	uint64_t value;
	/* Of the stacks merged here, one had its kernel (user) part lost: the marker stands for it. */
	bool kernel_lost, user_lost;
};

struct text_block;

struct text_stacks {
	struct text_stack *stacks;
	size_t nr;
	struct text_block *blocks;	/* where the texts live */
	uint64_t missed;		/* markers printed for lost parts (see text__merge) */
};

typedef void (*text_format_fn)(struct strbuf *sb, const struct profile *p,
			       const struct profile_stack *s, const struct writer_opts *o,
			       const struct frame_texts *ft);

/*
 * Format every stack with fmt, merge equal texts, sort. Returns 0 or -ENOMEM.
 * out->missed counts the lost kernel and user parts as printed: one per
 * marker of a merged text, however many stacks (raw keys) it holds, as bcc
 * counts one per count-map key it prints.
 */
int text__merge(const struct profile *p, const struct writer_opts *o, enum text_escape esc,
		text_format_fn fmt, struct text_stacks *out);
void text_stacks__free(struct text_stacks *ts);

#endif
