/* SPDX-License-Identifier: GPL-2.0 */
/* Messages on stderr: warnings always, info with -v, debug with -vv. */
#ifndef CORE_LIB_LOG_H
#define CORE_LIB_LOG_H

enum log_level {
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

void log_set_verbosity(int verbosity);
int log_verbosity(void);
/* The program name messages start with ("profile", "offcputime"). */
void log_set_program(const char *name);
const char *log_program(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

/*
 * A one-line reason, written where a failure is found and printed once by
 * whoever decides what to do about it (modules below the run do not print
 * errors themselves).
 */
struct errmsg {
	char text[512];
};

void errmsg__set(struct errmsg *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* What to print for a failure: e's reason, or err's (-errno) where no one wrote one. */
const char *errmsg__reason(const struct errmsg *e, int err);

#endif
