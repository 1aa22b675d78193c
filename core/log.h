/* SPDX-License-Identifier: GPL-2.0 */
/* Messages on stderr: warnings always, info with -v, debug with -vv. */
#ifndef CORE_LOG_H
#define CORE_LOG_H

enum log_level {
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
};

void log_set_verbosity(int verbosity);
int log_verbosity(void);
void log_msg(enum log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define pr_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define pr_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define pr_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
