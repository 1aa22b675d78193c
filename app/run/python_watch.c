// SPDX-License-Identifier: GPL-2.0
#include "app/run/python_watch.h"

void python_watch__add(struct python_watch *w, pid_t pid, int64_t now_ms)
{
	for (size_t i = 0; i < w->nr; i++) {
		if (w->items[i].pid == pid) {
			w->items[i].until_ms = now_ms + PYTHON_WATCH_MS;
			return;
		}
	}
	if (w->nr == PYTHON_WATCH_MAX) {
		w->dropped++;
		return;
	}
	w->items[w->nr].pid = pid;
	w->items[w->nr].until_ms = now_ms + PYTHON_WATCH_MS;
	w->nr++;
}

void python_watch__sweep(struct python_watch *w, int64_t now_ms,
			 bool (*done)(void *ctx, pid_t pid), void *ctx)
{
	size_t kept = 0;

	for (size_t i = 0; i < w->nr; i++) {
		if (done(ctx, w->items[i].pid) || now_ms >= w->items[i].until_ms)
			continue;
		w->items[kept++] = w->items[i];
	}
	w->nr = kept;
}
