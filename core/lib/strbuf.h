/* SPDX-License-Identifier: GPL-2.0 */
/* A growing NUL-terminated string; out of memory is remembered, not fatal. */
#ifndef CORE_LIB_STRBUF_H
#define CORE_LIB_STRBUF_H

#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
	bool oom;	/* an append failed: the text is incomplete */
};

void strbuf__putn(struct strbuf *sb, const char *s, size_t n);
void strbuf__puts(struct strbuf *sb, const char *s);
void strbuf__printf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Empty it, keeping its memory. */
static inline void strbuf__reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}
void strbuf__free(struct strbuf *sb);

#endif
