// SPDX-License-Identifier: GPL-2.0
/*
 * Folded stacks: "comm;root;...;leaf COUNT" per line. Kernel frames are
 * those after a "-" delimiter or with the "_[k]" annotation (this tool's
 * and FlameGraph's conventions); others are user frames.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/input/build.h"
#include "core/input/read.h"

#define KERNEL_NOTE "_[k]"

struct token {
	const char *s;
	size_t len;
	bool kernel;
};

/* The count at the end of a line: digits, optionally a fraction (FlameGraph allows it). */
static bool parse_count(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;
	size_t i = 0;

	if (!len)
		return false;
	for (; i < len && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 0)
		return false;
	if (i < len && s[i] == '.')
		for (i++; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
	*out = v;
	return i == len;
}

struct read_counts {
	unsigned int lines;
	unsigned int bad;	/* not "stack count": skipped */
	unsigned int cut;	/* deeper than INPUT_MAX_FRAMES: the frames nearest the root kept */
};

/* One line; a line that is not "stack count" is counted and skipped. */
static int parse_line(struct profile_builder *b, const char *line, size_t len,
		      struct read_counts *rc)
{
	struct token tok[INPUT_MAX_FRAMES + 1];
	uint32_t idx[INPUT_MAX_FRAMES];
	const char *sp = NULL, *p;
	unsigned int nt = 0, nk = 0, n = 0;
	bool kernel = false;
	char comm[64];
	uint64_t count;

	while (len && (line[len - 1] == '\r' || line[len - 1] == ' '))
		len--;
	if (!len)
		return 0;
	for (size_t i = len; i-- > 0;)
		if (line[i] == ' ') {
			sp = line + i;
			break;
		}
	if (!sp || !parse_count(sp + 1, len - (size_t)(sp - line) - 1, &count)) {
		rc->bad++;
		return 0;
	}
	for (p = line; p < sp && nt <= INPUT_MAX_FRAMES;) {
		const char *end = memchr(p, ';', (size_t)(sp - p));
		size_t l = end ? (size_t)(end - p) : (size_t)(sp - p);

		tok[nt++] = (struct token){ p, l, false };
		p += l + (end != NULL);
		if (!end)
			break;
	}
	if (p < sp)
		rc->cut++;
	snprintf(comm, sizeof(comm), "%.*s", (int)(tok[0].len < 63 ? tok[0].len : 63), tok[0].s);
	/* Root first in the file: mark kernel frames, then store them leaf first. */
	for (unsigned int i = 1; i < nt; i++) {
		size_t nl = strlen(KERNEL_NOTE);

		if (tok[i].len == 1 && tok[i].s[0] == '-') {
			kernel = true;
			tok[i].len = 0;	/* the delimiter is no frame */
			continue;
		}
		if (tok[i].len > nl && !memcmp(tok[i].s + tok[i].len - nl, KERNEL_NOTE, nl)) {
			tok[i].len -= nl;
			tok[i].kernel = true;
		} else {
			tok[i].kernel = kernel;
		}
		nk += tok[i].kernel;
	}
	for (int pass = 0; pass < 2; pass++)	/* kernel frames, then user frames */
		for (unsigned int i = nt; i-- > 1;) {
			int f;

			/* Zero length: the delimiter, or an empty frame (";;"). */
			if ((pass == 0) != tok[i].kernel || !tok[i].len)
				continue;
			f = builder__frame(b, tok[i].kernel ? FRAME_KERNEL : FRAME_USER, tok[i].s,
					   tok[i].len);
			if (f < 0)
				return f;
			idx[n++] = (uint32_t)f;
			if (n == INPUT_MAX_FRAMES)
				goto full;
		}
full:
	if (nk > n)
		nk = n;
	return builder__stack(b, comm, 0, idx, nk, n, count);
}

int profile__read_folded(const char *text, size_t len, struct profile *out, struct errmsg *err)
{
	struct profile_builder b;
	struct read_counts rc = { 0 };
	size_t off = 0;
	int ret = 0;

	profile__init(out);
	out->columns[0] = (struct profile_column){ "samples", "count", true };
	out->nr_columns = 1;
	builder__init(&b, out);
	while (off < len && !ret) {
		const char *nl = memchr(text + off, '\n', len - off);
		size_t l = nl ? (size_t)(nl - (text + off)) : len - off;

		ret = parse_line(&b, text + off, l, &rc);
		rc.lines++;
		off += l + 1;
	}
	builder__fini(&b);
	if (ret) {
		if (ret == -EOVERFLOW)
			errmsg__set(err, "line %u: the counts sum past 2^64: not a profile this "
					 "tool reads", rc.lines);
		else
			errmsg__set(err, "out of memory reading folded stacks");
		return ret;
	}
	if (!out->nr_stacks && rc.lines) {
		errmsg__set(err, "no \"stack count\" line among %u lines: not folded stacks",
			    rc.lines);
		return -EINVAL;
	}
	/* Nothing dropped goes unsaid. */
	if (rc.bad)
		pr_warn("WARNING: %u lines skipped: not \"stack count\"\n", rc.bad);
	if (rc.cut)
		pr_warn("WARNING: %u stacks deeper than %u frames were cut to their %u outermost\n",
			rc.cut, INPUT_MAX_FRAMES, INPUT_MAX_FRAMES);
	return 0;
}
