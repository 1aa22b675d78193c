// SPDX-License-Identifier: GPL-2.0
#include "app/run/progress.h"

#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

#include "core/lib/log.h"

/* Often enough to look alive, rarely enough to cost nothing. */
#define REDRAW_MS 250

void progress__init(struct progress *p, const struct run_opts *o, int64_t start_ms)
{
	bool folded_to_pipe = o->format == FORMAT_FOLDED && !o->output && !isatty(STDOUT_FILENO);

	*p = (struct progress){
		.on = o->duration && !o->quiet && !folded_to_pipe && isatty(STDERR_FILENO),
		.off_cpu = run_opts__off_cpu(o),
		.on_cpu = run_opts__on_cpu(o),
		.duration = o->duration,
		.start_ms = start_ms,
		.last_ms = start_ms - REDRAW_MS,
	};
}

void progress__update(struct progress *p, const struct backend_stats *st, int64_t now_ms)
{
	int64_t elapsed = now_ms - p->start_ms;

	if (!p->on || now_ms - p->last_ms < REDRAW_MS)
		return;
	if (elapsed < 0)
		elapsed = 0;
	if (elapsed > (int64_t)p->duration * 1000)
		elapsed = (int64_t)p->duration * 1000;
	p->last_ms = now_ms;
	/* \r and erase-to-end-of-line: the line is rewritten where it stands. */
	fprintf(stderr, "\r%s: %" PRId64 "/%u s", log_program(), elapsed / 1000, p->duration);
	if (p->on_cpu)
		fprintf(stderr, ", %" PRIu64 " samples", st->samples);
	if (p->off_cpu)
		fprintf(stderr, ", %" PRIu64 " switches", st->switches);
	fprintf(stderr, ", %" PRIu64 " lost\033[K", st->lost + st->offcpu_lost);
	fflush(stderr);
	p->drawn = true;
}

void progress__clear(struct progress *p)
{
	if (!p->drawn)
		return;
	fputs("\r\033[K", stderr);
	fflush(stderr);
	p->drawn = false;
}
