// SPDX-License-Identifier: GPL-2.0
#include "core/lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/utf8.h"

static int verbosity;
static const char *program = "profile";

void log_set_verbosity(int v)
{
	verbosity = v;
}

int log_verbosity(void)
{
	return verbosity;
}

void log_set_program(const char *name)
{
	program = name;
}

const char *log_program(void)
{
	return program;
}

void errmsg__set(struct errmsg *e, const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return;
	va_start(ap, fmt);
	vsnprintf(e->text, sizeof(e->text), fmt, ap);
	va_end(ap);
}

/*
 * Messages name files and processes others control (a mapped file's path, a
 * perf map's): their control characters, C0 but for newlines and tabs and
 * C1, reach the terminal as \xNN, as in the report.
 */
static void put_escaped(const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t from = 0;

	for (size_t i = 0; i < len;) {
		size_t n = utf8__control_len(u + i, len - i);

		if (!n || u[i] == '\n' || u[i] == '\t') {
			i++;
			continue;
		}
		fwrite(s + from, 1, i - from, stderr);
		for (size_t k = 0; k < n; k++)
			fprintf(stderr, "\\x%02x", u[i + k]);
		i += n;
		from = i;
	}
	fwrite(s + from, 1, len - from, stderr);
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	char buf[1024], *text = buf;
	va_list ap;
	int len;

	if ((int)level > verbosity)
		return;
	va_start(ap, fmt);
	len = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (len < 0)
		return;
	if ((size_t)len >= sizeof(buf)) {
		text = malloc((size_t)len + 1);
		if (text) {
			va_start(ap, fmt);
			vsnprintf(text, (size_t)len + 1, fmt, ap);
			va_end(ap);
		} else {
			text = buf;	/* out of memory: the message cut short */
			len = sizeof(buf) - 1;
		}
	}
	fprintf(stderr, "%s: ", program);
	put_escaped(text, (size_t)len);
	if (text != buf)
		free(text);
}

const char *errmsg__reason(const struct errmsg *e, int err)
{
	if (e && e->text[0])
		return e->text;
	return err < 0 ? strerror(-err) : "no reason given";
}
