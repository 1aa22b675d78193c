/* SPDX-License-Identifier: GPL-2.0 */
/*
 * UTF-8 as XML and proto3 readers want it: names from hostile binaries and
 * process names need not be, and one bad byte makes a browser refuse a
 * whole SVG or Go's pprof a whole profile.
 */
#ifndef CORE_LIB_UTF8_H
#define CORE_LIB_UTF8_H

#include <stddef.h>

/*
 * Length of the valid UTF-8 sequence at s (at most n bytes; 1 for ASCII),
 * or 0: a stray continuation byte, an overlong form, a surrogate, past
 * U+10FFFF, or cut short by n.
 */
size_t utf8__seq_len(const unsigned char *s, size_t n);

/* The largest length <= n that does not end inside a sequence of s. */
size_t utf8__boundary(const char *s, size_t n);

#endif
