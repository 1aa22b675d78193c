// SPDX-License-Identifier: GPL-2.0
#include "core/log.h"

#include <stdarg.h>
#include <stdio.h>

static int verbosity;

void log_set_verbosity(int v)
{
	verbosity = v;
}

int log_verbosity(void)
{
	return verbosity;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	va_list ap;

	if ((int)level > verbosity)
		return;
	fputs("profile: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
}
