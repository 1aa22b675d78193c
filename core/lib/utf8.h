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

/*
 * Length of the control character at s (at most n bytes), or 0: 1 for a C0
 * control or DEL, 2 for a C1 control (U+0080-U+009F, 0xc2 0x80-0x9f in
 * UTF-8), 3 for a bidirectional or line-separating format character
 * (U+200E/F, U+202A-E, U+2066-9, U+2028/9). A terminal acts on C0 and C1
 * (U+009B is CSI, U+009D OSC); a terminal or editor shows a line reordered
 * by a bidi override (U+202E) or split by a line separator, so one name can
 * pass for another or for two lines. Text from others shows them escaped.
 * Stray bytes 0x80-0x9f, not UTF-8, are not controls to a UTF-8 terminal.
 */
size_t utf8__control_len(const unsigned char *s, size_t n);

#endif
