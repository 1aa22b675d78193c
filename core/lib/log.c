// SPDX-License-Identifier: GPL-2.0
#include "core/lib/log.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

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

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > verbosity)
		return;
	fprintf(stderr, "%s: ", program);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}

const char *errmsg__reason(const struct errmsg *e, int err)
{
	if (e && e->text[0])
		return e->text;
	return err < 0 ? strerror(-err) : "no reason given";
}
