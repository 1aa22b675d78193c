/* SPDX-License-Identifier: GPL-2.0 */
/* The cost of a reader on one input, measured in a child: peak RSS growth and time. */
#ifndef TESTS_SUPPORT_MEASURE_H
#define TESTS_SUPPORT_MEASURE_H

struct cost {
	long rss_kb;		/* peak RSS growth of the reader */
	double seconds;
	long result;		/* what the reader's fn returned */
};

/* Runs fn(arg) in a child (killed after timeout_s, which fails the test): its cost. */
struct cost measure(long (*fn)(const void *), const void *arg, unsigned int timeout_s);

#endif
