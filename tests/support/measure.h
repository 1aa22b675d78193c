/* SPDX-License-Identifier: GPL-2.0 */
/* The cost of a reader on one input, measured in a child: peak RSS growth and time. */
#ifndef TESTS_SUPPORT_MEASURE_H
#define TESTS_SUPPORT_MEASURE_H

/* 1 under AddressSanitizer (gcc says so one way, clang another), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define TESTS_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TESTS_UNDER_ASAN 1
#endif
#endif
#ifndef TESTS_UNDER_ASAN
#define TESTS_UNDER_ASAN 0
#endif

/*
 * Extra RSS a run under AddressSanitizer may show: freed memory stays in its
 * quarantine (256 MiB by default) instead of going back to malloc.
 */
#define MEASURE_ASAN_KB (TESTS_UNDER_ASAN ? 256L << 10 : 0L)

struct cost {
	long rss_kb;		/* peak RSS growth of the reader */
	double seconds;
	long result;		/* what the reader's fn returned */
};

/* Runs fn(arg) in a child (killed after timeout_s, which fails the test): its cost. */
struct cost measure(long (*fn)(const void *), const void *arg, unsigned int timeout_s);

#endif
