// SPDX-License-Identifier: GPL-2.0
#include "core/lib/utf8.h"

size_t utf8__seq_len(const unsigned char *s, size_t n)
{
	unsigned char lo = 0x80, hi = 0xbf;	/* the second byte's range */
	size_t len;

	if (!n)
		return 0;
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4;
	else
		return 0;	/* continuation byte, overlong 2-byte lead, or past U+10FFFF */
	if (s[0] == 0xe0)
		lo = 0xa0;	/* overlong */
	else if (s[0] == 0xed)
		hi = 0x9f;	/* surrogates */
	else if (s[0] == 0xf0)
		lo = 0x90;	/* overlong */
	else if (s[0] == 0xf4)
		hi = 0x8f;	/* past U+10FFFF */
	if (len > n || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

size_t utf8__boundary(const char *s, size_t n)
{
	size_t i = 0;

	while (i < n && s[i]) {
		/* Unbounded but safe: the terminating NUL ends any sequence. */
		size_t len = utf8__seq_len((const unsigned char *)s + i, (size_t)-1 - i);

		if (!len)
			len = 1;	/* a bad byte stands alone */
		if (i + len > n)
			break;
		i += len;
	}
	return i;
}

size_t utf8__control_len(const unsigned char *s, size_t n)
{
	if (!n)
		return 0;
	if (s[0] < 0x20 || s[0] == 0x7f)
		return 1;
	if (n >= 2 && s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f)
		return 2;
	/* U+2000-U+207F are 0xe2 0x80-0x81 0x80-0xbf. */
	if (n >= 3 && s[0] == 0xe2 && (s[1] == 0x80 || s[1] == 0x81) && (s[2] & 0xc0) == 0x80) {
		unsigned int cp = 0x2000 | (s[1] & 0x3f) << 6 | (s[2] & 0x3f);

		if (cp == 0x200e || cp == 0x200f || (cp >= 0x2028 && cp <= 0x202e) ||
		    (cp >= 0x2066 && cp <= 0x2069))
			return 3;
	}
	return 0;
}
