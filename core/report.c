// SPDX-License-Identifier: GPL-2.0
#include "core/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
		symbolizer__user_frame(sym, e->as, ip, adj, &fs);

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

void report_cache__init(struct report_cache *rc)
{
	hashmap__init(&rc->merged, text_hash, text_equal);
}

void report_cache__free(struct report_cache *rc)
{
	struct hashmap_entry *ent;
	size_t bkt;

	hashmap__for_each(&rc->merged, bkt, ent) {
		struct printed_stack *p = ent->value;

		free(p->text);
		free(p);
	}
	hashmap__clear(&rc->merged);
}

/* The merged stack printing as e does, added to the cache if new; NULL when out of memory. */
static struct printed_stack *format_entry(struct report_cache *rc, struct symbolizer *sym,
					  const struct agg_entry *e, const struct report_opts *o,
					  struct strbuf *sb)
{
	struct printed_stack key, *p;

	sb->len = 0;
	if (o->folded)
		format_folded(sb, sym, e, o);
	else
		format_multiline(sb, sym, e, o);
	if (sb->oom)
		return NULL;
	key.text = sb->buf;
	p = hashmap__find(&rc->merged, &key);
	if (p)
		return p;
	p = calloc(1, sizeof(*p));
	if (!p || !(p->text = strdup(sb->buf)) || hashmap__add(&rc->merged, p, p)) {
		if (p)
			free(p->text);
		free(p);
		return NULL;
	}
	return p;
}

/*
 * Whether e prints now as it will at the end: every user frame is in a file
 * mapping (or the vdso) already known. JIT code is left for the end, when
 * its perf map is complete, as is an address whose mapping is not yet known.
 */
static bool prints_the_same_later(const struct agg_entry *e, const struct report_opts *o)
{
	if (o->kernel_only || e->user_err)
		return true;
	for (unsigned int i = 0; i < e->nr_user; i++) {
		uint64_t ip = e->ips[e->nr_kernel + i];
		const struct mapping *m;

		if (ip == STACK_TRUNCATED_IP)
			continue;
		m = e->as ? addr_space__find(e->as, i ? ip - 1 : ip) : NULL;
		if (!m || (!mapping__is_file(m) && strcmp(m->path, "[vdso]")))
			return false;
	}
	return true;
}

void report__prepare(struct report_cache *rc, struct agg *agg, struct symbolizer *sym,
		     const struct report_opts *opts, int budget_ms)
{
	struct strbuf sb = { 0 };
	struct timespec t0, t;
	size_t done = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < agg->nr_fresh) {
		struct agg_entry *e = agg->fresh[done++];

		if (prints_the_same_later(e, opts))
			e->printed = format_entry(rc, sym, e, opts, &sb);
		/* Checking the clock every 64 entries is cheap enough. */
		if (!(done % 64)) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >=
			    budget_ms)
				break;
		}
	}
	/* What is left waits for the next call, or for the report. */
	memmove(agg->fresh, agg->fresh + done, (agg->nr_fresh - done) * sizeof(*agg->fresh));
	agg->nr_fresh -= done;
	free(sb.buf);
}

int report__collect(const struct agg *agg, struct symbolizer *sym, const struct report_opts *opts,
		    struct report_cache *cache, struct printed_stacks *list,
		    struct report_stats *stats)
{
	struct report_cache local, *rc = cache;
	struct hashmap_entry *ent;
	struct agg_entry *e;
	struct strbuf sb = { 0 };
	size_t bkt;
	int err = 0;

	memset(stats, 0, sizeof(*stats));
	memset(list, 0, sizeof(*list));
	if (!rc) {
		report_cache__init(&local);
		rc = &local;
	}
	hashmap__for_each(&rc->merged, bkt, ent)
		((struct printed_stack *)ent->value)->count = 0;

	/* Identical printed stacks merge: the same text, whatever addresses made it. */
	agg__for_each(agg, bkt, ent, e) {
		struct printed_stack *p = e->printed;

		count_missing(e, opts, stats);
		if (!p)
			p = format_entry(rc, sym, e, opts, &sb);
		if (!p) {
			err = -ENOMEM;
			goto out;
		}
		p->count += e->count;
	}

	list->stacks = calloc(rc->merged.size ? rc->merged.size : 1, sizeof(*list->stacks));
	if (!list->stacks) {
		err = -ENOMEM;
		goto out;
	}
	/* The texts move to the list; the cache is left empty. */
	hashmap__for_each(&rc->merged, bkt, ent) {
		struct printed_stack *p = ent->value;

		if (p->count) {
			list->stacks[list->nr++] = *p;
			list->total += p->count;
		} else {
			free(p->text);
		}
		free(p);
	}
	hashmap__clear(&rc->merged);
	qsort(list->stacks, list->nr, sizeof(*list->stacks), cmp_printed);
	stats->stacks = list->nr;
	stats->samples = list->total;
out:
	/* Entries must not point into a cache that is gone. */
	agg__for_each(agg, bkt, ent, e)
		e->printed = NULL;
	report_cache__free(rc);
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
		  const struct report_opts *opts, struct report_cache *cache,
		  struct report_stats *stats)
{
	struct printed_stacks list;
	int err = report__collect(agg, sym, opts, cache, &list, stats);

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
