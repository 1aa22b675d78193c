/* SPDX-License-Identifier: GPL-2.0 */
/* The cost of a reader on one input, measured in a child: peak RSS growth and time. */
#ifndef TESTS_SUPPORT_MEASURE_H
#define TESTS_SUPPORT_MEASURE_H

/*
 * Extra RSS a run under AddressSanitizer may show: freed memory stays in its
 * quarantine (256 MiB by default) instead of going back to malloc.
 */
#if defined(__SANITIZE_ADDRESS__)
#define MEASURE_ASAN_KB (256L << 10)
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MEASURE_ASAN_KB (256L << 10)
#endif
#endif
#ifndef MEASURE_ASAN_KB
#define MEASURE_ASAN_KB 0L
#endif

struct cost {
	long rss_kb;		/* peak RSS growth of the reader */
	double seconds;
	long result;		/* what the reader's fn returned */
};

/* Runs fn(arg) in a child (killed after timeout_s, which fails the test): its cost. */
struct cost measure(long (*fn)(const void *), const void *arg, unsigned int timeout_s);

#endif
