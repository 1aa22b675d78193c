// SPDX-License-Identifier: GPL-2.0
#include "core/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "core/hashmap.h"

/* A growing string. */
struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;
};

static void sb_putn(struct strbuf *sb, const char *s, size_t n)
{
	if (sb->oom)
		return;
	if (sb->len + n + 1 > sb->cap) {
		size_t ncap = (sb->cap ? sb->cap * 2 : 256) + n;
		char *tmp = realloc(sb->buf, ncap);

		if (!tmp) {
			sb->oom = true;
			return;
		}
		sb->buf = tmp;
		sb->cap = ncap;
	}
	memcpy(sb->buf + sb->len, s, n);
	sb->len += n;
	sb->buf[sb->len] = '\0';
}

static void sb_puts(struct strbuf *sb, const char *s)
{
	sb_putn(sb, s, strlen(s));
}

static void __attribute__((format(printf, 2, 3))) sb_printf(struct strbuf *sb, const char *fmt,
							       ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		sb_putn(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

/*
 * One frame's text. Every frame but the leaf holds a return address, which
 * may already belong to the next line or function: look up ip - 1.
 */
static void format_frame(struct strbuf *sb, struct symbolizer *sym, const struct agg_entry *e,
			 bool kernel, unsigned int idx, const struct report_opts *o)
{
	uint64_t ip = kernel ? e->ips[idx] : e->ips[e->nr_kernel + idx];
	uint64_t adj = idx > 0 ? 1 : 0;
	struct frame_sym fs;

	if (kernel)
		symbolizer__kernel(sym, ip - adj, &fs);
	else
		symbolizer__user(sym, e->as, ip - adj, &fs);

	if (o->addresses)
		sb_printf(sb, "%#" PRIx64 " ", ip);
	sb_puts(sb, fs.name ? fs.name : "[unknown]");
	if (o->addresses && fs.name)
		sb_printf(sb, "+%#" PRIx64, fs.offset + adj);
	if (kernel && o->annotations)
		sb_puts(sb, "_[k]");
	if (o->addresses && fs.module)
		sb_printf(sb, " [%s]", fs.module);
}

static bool want_delimiter(const struct agg_entry *e, const struct report_opts *o)
{
	return o->delimited && !o->user_only && !o->kernel_only && e->nr_kernel && e->nr_user &&
	       !e->kernel_err && !e->user_err;
}

/* "comm;user root..leaf;-;kernel root..leaf" */
static void format_folded(struct strbuf *sb, struct symbolizer *sym, const struct agg_entry *e,
			  const struct report_opts *o)
{
	sb_puts(sb, e->comm);
	if (!o->kernel_only) {
		if (e->user_err) {
			sb_puts(sb, ";[Missed User Stack]");
		} else {
			for (unsigned int i = e->nr_user; i-- > 0;) {
				sb_putn(sb, ";", 1);
				format_frame(sb, sym, e, false, i, o);
			}
		}
	}
	if (!o->user_only) {
		if (want_delimiter(e, o))
			sb_puts(sb, ";-");
		if (e->kernel_err) {
			sb_puts(sb, ";[Missed Kernel Stack]");
		} else {
			for (unsigned int i = e->nr_kernel; i-- > 0;) {
				sb_putn(sb, ";", 1);
				format_frame(sb, sym, e, true, i, o);
			}
		}
	}
}

/* Kernel frames leaf first, "--", user frames leaf first, then "- comm (pid)". */
static void format_multiline(struct strbuf *sb, struct symbolizer *sym,
			     const struct agg_entry *e, const struct report_opts *o)
{
	if (!o->user_only) {
		if (e->kernel_err) {
			sb_puts(sb, "    [Missed Kernel Stack]\n");
		} else {
			for (unsigned int i = 0; i < e->nr_kernel; i++) {
				sb_puts(sb, "    ");
				format_frame(sb, sym, e, true, i, o);
				sb_putn(sb, "\n", 1);
			}
		}
	}
	if (!o->kernel_only) {
		if (want_delimiter(e, o))
			sb_puts(sb, "    --\n");
		if (e->user_err) {
			sb_puts(sb, "    [Missed User Stack]\n");
		} else {
			for (unsigned int i = 0; i < e->nr_user; i++) {
				sb_puts(sb, "    ");
				format_frame(sb, sym, e, false, i, o);
				sb_putn(sb, "\n", 1);
			}
		}
	}
	sb_printf(sb, "    %-16s %s (%d)\n", "-", e->comm, (int)e->pid);
}

static uint64_t text_hash(const void *key)
{
	const struct printed_stack *p = key;

	return hash_bytes(p->text, strlen(p->text), 0);
}

static bool text_equal(const void *a, const void *b)
{
	return !strcmp(((const struct printed_stack *)a)->text,
		       ((const struct printed_stack *)b)->text);
}

static int cmp_printed(const void *a, const void *b)
{
	const struct printed_stack *x = a, *y = b;

	if (x->count != y->count)
		return x->count < y->count ? -1 : 1;
	return strcmp(x->text, y->text);
}

static void count_missing(const struct agg_entry *e, const struct report_opts *o,
			  struct report_stats *st)
{
	if (!o->user_only && e->kernel_err) {
		st->missing_stacks++;
		st->stack_map_collision |= e->kernel_err == -EEXIST;
	}
	if (!o->kernel_only && e->user_err) {
		st->missing_stacks++;
		st->stack_map_collision |= e->user_err == -EEXIST;
	}
}

int report__collect(const struct agg *agg, struct symbolizer *sym, const struct report_opts *opts,
		    struct printed_stacks *list, struct report_stats *stats)
{
	struct hashmap merged;
	struct hashmap_entry *ent;
	struct agg_entry *e;
	struct strbuf sb = { 0 };
	size_t bkt;
	int err = 0;

	memset(stats, 0, sizeof(*stats));
	memset(list, 0, sizeof(*list));
	hashmap__init(&merged, text_hash, text_equal);

	/* Identical printed stacks merge: the same text, whatever addresses made it. */
	agg__for_each(agg, bkt, ent, e) {
		struct printed_stack key, *p;

		count_missing(e, opts, stats);
		sb.len = 0;
		if (opts->folded)
			format_folded(&sb, sym, e, opts);
		else
			format_multiline(&sb, sym, e, opts);
		if (sb.oom) {
			err = -ENOMEM;
			goto out;
		}
		key.text = sb.buf;
		p = hashmap__find(&merged, &key);
		if (!p) {
			p = calloc(1, sizeof(*p));
			if (!p || !(p->text = strdup(sb.buf)) || hashmap__add(&merged, p, p)) {
				if (p)
					free(p->text);
				free(p);
				err = -ENOMEM;
				goto out;
			}
		}
		p->count += e->count;
	}

	list->stacks = calloc(merged.size ? merged.size : 1, sizeof(*list->stacks));
	if (!list->stacks) {
		err = -ENOMEM;
		goto out;
	}
	hashmap__for_each(&merged, bkt, ent) {
		struct printed_stack *p = ent->value;

		list->stacks[list->nr++] = *p;
		list->total += p->count;
		free(p);
	}
	hashmap__clear(&merged);
	qsort(list->stacks, list->nr, sizeof(*list->stacks), cmp_printed);
	stats->stacks = list->nr;
	stats->samples = list->total;
out:
	hashmap__for_each(&merged, bkt, ent) {
		struct printed_stack *p = ent->value;

		free(p->text);
		free(p);
	}
	hashmap__clear(&merged);
	free(sb.buf);
	if (err)
		printed_stacks__free(list);
	return err;
}

void printed_stacks__free(struct printed_stacks *list)
{
	for (size_t i = 0; i < list->nr; i++)
		free(list->stacks[i].text);
	free(list->stacks);
	memset(list, 0, sizeof(*list));
}

int report__print(FILE *out, const struct agg *agg, struct symbolizer *sym,
		  const struct report_opts *opts, struct report_stats *stats)
{
	struct printed_stacks list;
	int err = report__collect(agg, sym, opts, &list, stats);

	if (err)
		return err;
	for (size_t i = 0; i < list.nr; i++) {
		if (opts->folded)
			fprintf(out, "%s %" PRIu64 "\n", list.stacks[i].text, list.stacks[i].count);
		else
			fprintf(out, "%s        %" PRIu64 "\n\n", list.stacks[i].text,
				list.stacks[i].count);
	}
	printed_stacks__free(&list);
	if (fflush(out) == EOF || ferror(out))
		err = -EIO;
	return err;
}

void report__print_warnings(FILE *err, const struct report_stats *st, bool hash_full)
{
	if (st->missing_stacks)
		fprintf(err, "WARNING: %" PRIu64 " stack traces could not be displayed.%s\n",
			st->missing_stacks,
			st->stack_map_collision ? " Consider increasing --stack-storage-size." : "");
	if (hash_full)
		fputs("WARNING: hash table full. Consider increasing --hash-storage-size.\n", err);
}
