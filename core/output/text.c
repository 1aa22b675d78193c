// SPDX-License-Identifier: GPL-2.0
#include "core/output/text.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/hashmap.h"
#include "core/lib/interrupt.h"
#include "core/lib/utf8.h"

void text__frame(struct strbuf *sb, const struct profile_frame *f, const struct writer_opts *o,
		 enum text_escape esc)
{
	bool kernel = f->kind == FRAME_KERNEL, inlined = f->kind == FRAME_INLINE;
	/*
	 * Folded stacks and flame graphs name a frame without a symbol by its
	 * file, as stackcollapse-perf.pl does; bcc's report prints [unknown] as
	 * bcc does, and -A prints the module after it anyway.
	 */
	const char *module = esc == ESCAPE_CONTROLS_AND_SEMICOLONS && !o->addresses ?
			     profile_frame__unnamed_module(f) : NULL;

	if (f->kind == FRAME_MISSED) {
		strbuf__puts(sb, f->name);
		return;
	}
	if (f->kind == FRAME_INTERP) {
		/* py-spy's form: "function (file:line)"; a marker by its name alone. */
		strbuf__puts(sb, f->name ? f->name : "[unknown]");
		if (f->module && f->line)
			strbuf__printf(sb, " (%s:%u)", f->module, f->line);
		else if (f->module)
			strbuf__printf(sb, " (%s)", f->module);
		return;
	}
	if (o->addresses)
		strbuf__printf(sb, "%#" PRIx64 " ", f->address);
	else if (o->raw_addresses)
		strbuf__printf(sb, "%-16" PRIx64 " ", f->address);
	if (module)
		strbuf__printf(sb, "[%s]", module);
	else
		strbuf__puts(sb, f->name ? f->name : "[unknown]");
	/* The offset of the address as sampled, not of the one looked up; none into inlined code. */
	if ((o->addresses || o->offsets) && f->name && !inlined)
		strbuf__printf(sb, "+%#" PRIx64, f->offset + f->caller);
	/* perf report --inline's mark; in folded stacks an inlined call is a frame like others. */
	if (inlined && esc == ESCAPE_CONTROLS)
		strbuf__puts(sb, " (inlined)");
	if (kernel && o->annotations)
		strbuf__puts(sb, "_[k]");
	if (o->addresses && f->module)
		strbuf__printf(sb, " [%s]", f->module);
}

void text__escaped(struct strbuf *sb, const char *s, size_t len, enum text_escape esc)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t from = 0;

	for (size_t i = 0; i < len;) {
		size_t n = utf8__control_len(u + i, len - i);

		if (!n && (u[i] != ';' || esc == ESCAPE_CONTROLS)) {
			i++;
			continue;
		}
		strbuf__putn(sb, s + from, i - from);
		/* A C1 control or a bidi one shows as its bytes, as the SVG writer shows it. */
		for (size_t k = 0; k < (n ? n : 1); k++)
			strbuf__printf(sb, "\\x%02x", u[i + k]);
		i += n ? n : 1;
		from = i;
	}
	strbuf__putn(sb, s + from, len - from);
}

bool text__delimited(const struct profile_stack *s, const struct writer_opts *o)
{
	return o->delimited && s->nr_kernel && s->nr_user && !s->kernel_missed && !s->user_missed;
}

int frame_texts__init(struct frame_texts *ft, const struct profile *p,
		      const struct writer_opts *o, enum text_escape esc)
{
	struct strbuf sb = { 0 }, one = { 0 };

	ft->buf = NULL;
	ft->start = malloc((p->nr_frames + 1) * sizeof(*ft->start));
	if (!ft->start)
		return -ENOMEM;
	for (size_t i = 0; i < p->nr_frames; i++) {
		ft->start[i] = (uint32_t)sb.len;
		strbuf__reset(&one);
		text__frame(&one, &p->frames[i], o, esc);
		if (!one.oom)
			text__escaped(&sb, one.buf, one.len, esc);
	}
	ft->start[p->nr_frames] = (uint32_t)sb.len;
	if (sb.oom || one.oom || sb.len > UINT32_MAX) {
		strbuf__free(&one);
		strbuf__free(&sb);
		free(ft->start);
		ft->start = NULL;
		return -ENOMEM;
	}
	strbuf__free(&one);
	ft->buf = sb.buf;
	return 0;
}

void frame_texts__fini(struct frame_texts *ft)
{
	free(ft->buf);
	free(ft->start);
	ft->buf = NULL;
	ft->start = NULL;
}

/*
 * Texts are copied into blocks freed together: no allocation per stack.
 * Blocks of 32 KiB, not more: the report is written right after the
 * counted stacks' entries are freed (agg__forget_entries, chunks of 48 KiB
 * among other blocks), and texts in blocks that fit those holes reuse their
 * pages. Blocks of 1 MiB came from fresh pages at the heap's top: 0.8 MB
 * above the run's peak RSS at 11,000 unique stacks.
 */
struct text_block {
	struct text_block *next;
	size_t used, size;
	char data[];
};

#define TEXT_BLOCK_SIZE (32 << 10)

static char *copy_text(struct text_stacks *ts, const char *s, size_t len)
{
	struct text_block *b = ts->blocks;

	if (!b || b->size - b->used < len + 1) {
		size_t size = len + 1 > TEXT_BLOCK_SIZE ? len + 1 : TEXT_BLOCK_SIZE;

		b = malloc(sizeof(*b) + size);
		if (!b)
			return NULL;
		b->next = ts->blocks;
		b->used = 0;
		b->size = size;
		ts->blocks = b;
	}
	memcpy(b->data + b->used, s, len + 1);
	b->used += len + 1;
	return b->data + b->used - len - 1;
}

struct text_query {
	const struct text_stacks *ts;
	const char *text;
};

static bool text_match(const void *ctx, uint32_t id)
{
	const struct text_query *q = ctx;

	return !strcmp(q->ts->stacks[id].text, q->text);
}

static int cmp_text_stack(const void *a, const void *b)
{
	const struct text_stack *x = a, *y = b;

	if (x->value != y->value)
		return x->value < y->value ? -1 : 1;
	return strcmp(x->text, y->text);
}

int text__merge(const struct profile *p, const struct writer_opts *o, enum text_escape esc,
		text_format_fn fmt, struct text_stacks *out)
{
	/* Indexes into out->stacks by their text: 8 bytes a text, no allocation each. */
	struct idtable merged;
	struct strbuf sb = { 0 };
	size_t cap = 0;
	struct frame_texts ft;
	int err = 0;

	memset(out, 0, sizeof(*out));
	if (frame_texts__init(&ft, p, o, esc))
		return -ENOMEM;
	idtable__init(&merged);
	for (size_t i = 0; i < p->nr_stacks && !err; i++) {
		const struct profile_stack *s = &p->stacks[i];
		uint64_t value = profile__text_value(p, s);
		struct text_stack *ts;
		uint64_t hash;
		int64_t found;

		if (interrupt__pending()) {
			err = -EINTR;
			break;
		}
		strbuf__reset(&sb);
		fmt(&sb, p, s, o, &ft);
		if (sb.oom) {
			err = -ENOMEM;
			break;
		}
		hash = hash_bytes(sb.buf, sb.len, 0);
		found = idtable__find(&merged, hash, text_match,
				      &(struct text_query){ out, sb.buf });
		if (found >= 0) {
			ts = &out->stacks[found];
			ts->value += value;
			ts->kernel_lost |= profile_stack__kernel_lost(s);
			ts->user_lost |= profile_stack__user_lost(s);
			continue;
		}
		/*
		 * Room for as many texts as stacks at once: at most that many, and
		 * the part never written is never touched. Doubled as texts came,
		 * each copy left the last array behind as a hole too big for what
		 * followed (0.2-0.3 MB of peak RSS at 11,000 unique stacks).
		 */
		if (out->nr == cap) {
			size_t ncap = cap ? cap * 2 : p->nr_stacks;
			struct text_stack *tmp = realloc(out->stacks, ncap * sizeof(*tmp));

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			out->stacks = tmp;
			cap = ncap;
		}
		ts = &out->stacks[out->nr];
		ts->text = copy_text(out, sb.buf, sb.len);
		ts->value = value;
		ts->kernel_lost = profile_stack__kernel_lost(s);
		ts->user_lost = profile_stack__user_lost(s);
		if (!ts->text || idtable__add(&merged, hash, (uint32_t)out->nr)) {
			err = -ENOMEM;
			break;
		}
		out->nr++;
	}
	idtable__clear(&merged);
	strbuf__free(&sb);
	frame_texts__fini(&ft);
	if (err) {
		text_stacks__free(out);
		return err;
	}
	for (size_t i = 0; i < out->nr; i++)
		out->missed += out->stacks[i].kernel_lost + out->stacks[i].user_lost;
	if (out->nr)	/* an empty profile has no array */
		qsort(out->stacks, out->nr, sizeof(*out->stacks), cmp_text_stack);
	return 0;
}

void text_stacks__free(struct text_stacks *ts)
{
	while (ts->blocks) {
		struct text_block *next = ts->blocks->next;

		free(ts->blocks);
		ts->blocks = next;
	}
	free(ts->stacks);
	memset(ts, 0, sizeof(*ts));
}
