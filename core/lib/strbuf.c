// SPDX-License-Identifier: GPL-2.0
#include "core/lib/strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf__putn(struct strbuf *sb, const char *s, size_t n)
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

void strbuf__puts(struct strbuf *sb, const char *s)
{
	strbuf__putn(sb, s, strlen(s));
}

void strbuf__printf(struct strbuf *sb, const char *fmt, ...)
{
	char tmp[1024];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (n > 0)
		strbuf__putn(sb, tmp, (size_t)n < sizeof(tmp) ? (size_t)n : sizeof(tmp) - 1);
}

void strbuf__free(struct strbuf *sb)
{
	free(sb->buf);
	*sb = (struct strbuf){ 0 };
}
