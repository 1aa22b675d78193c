// SPDX-License-Identifier: GPL-2.0
/*
 * Lines of code offsets, as each version's PyCode_Addr2Line finds them:
 * co_lnotab (<= 3.9), 3.10's co_linetable (Objects/lnotab_notes.txt) and
 * 3.11+'s location table (Objects/locations.md). Tables come from the
 * process: every loop consumes at least one byte of a bounded buffer, and
 * lines are kept in 64 bits, so no table overflows anything.
 */
#include <limits.h>

#include "interp/python/pyint.h"

static int as_line(int64_t line)
{
	return line >= 0 && line <= INT_MAX ? (int)line : -1;
}

/*
 * Pairs (address increment, line increment); the line increment is signed
 * from 3.6 on (bpo-26107), unsigned in 2.7.
 */
int py_lines__lnotab(const uint8_t *t, size_t len, int firstline, int64_t addr,
		     bool signed_delta)
{
	int64_t line = firstline, at = 0;

	if (addr < 0)
		return as_line(firstline);
	for (size_t i = 0; i + 1 < len; i += 2) {
		at += t[i];
		if (at > addr)
			break;
		line += signed_delta ? (int8_t)t[i + 1] : t[i + 1];
	}
	return as_line(line);
}

/*
 * 3.10: pairs (byte length of a range, line delta); a delta of -128 means
 * the range has no line, and does not move the line the next ones count
 * from. The range holding addr gives its line; past the end, none.
 */
int py_lines__linetable310(const uint8_t *t, size_t len, int firstline, int64_t addr)
{
	int64_t line = firstline, start = 0, end = 0, cur = -1;

	if (addr < 0)
		return as_line(firstline);
	for (size_t i = 0; i + 1 < len; i += 2) {
		int delta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (delta == -128) {
			cur = -1;
		} else {
			line += delta;
			cur = line;
		}
		if (start <= addr && addr < end)
			return as_line(cur);
	}
	return -1;
}

/* A varint of 6-bit chunks, bit 6 continuing; at most 32 bits are kept. */
static uint64_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	while (*i < len) {
		uint8_t b = t[(*i)++];

		if (shift < 32)
			v |= (uint64_t)(b & 63) << shift;
		shift += 6;
		if (!(b & 64))
			break;
	}
	return v;
}

static int64_t svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = varint(t, len, i);

	return v & 1 ? -(int64_t)(v >> 1) : (int64_t)(v >> 1);
}

/*
 * 3.11+: entries starting with a byte that has bit 7 set: a code (bits
 * 3-6) and the range's length in code units less one (bits 0-2). Codes
 * 0-9: same line; 10-12: line + code - 10; 13 and 14: a signed varint
 * delta (14 then carries columns); 15: no line. The bytes after the first
 * of an entry are skipped up to the next start byte, as CPython does.
 */
int py_lines__locations(const uint8_t *t, size_t len, int firstline, int64_t addr)
{
	int64_t line = firstline, start = 0, end = 0;
	size_t i = 0;

	if (addr < 0)
		return as_line(firstline);
	while (i < len) {
		uint8_t first = t[i];
		unsigned int code = (first >> 3) & 15;
		size_t j = i + 1;
		int64_t cur;

		if (code == 13 || code == 14)
			line += svarint(t, len, &j);
		else if (code >= 10 && code <= 12)
			line += code - 10;
		cur = code == 15 ? -1 : line;
		start = end;
		end += 2 * ((first & 7) + 1);
		if (start <= addr && addr < end)
			return as_line(cur);
		i++;
		while (i < len && !(t[i] & 128))
			i++;
	}
	return -1;
}

int64_t py_lines__addr(const struct py_layout *l, uint64_t code, uint64_t lasti)
{
	int64_t v = (int64_t)lasti;

	switch (l->lasti_kind) {
	case PY_LASTI_BYTE_OFFSET:
		return (int32_t)v;
	case PY_LASTI_INSN_INDEX:
		return 2 * (int64_t)(int32_t)v;
	default:
		/* A pointer into co_code_adaptive, in 2-byte units; before it (-2: just pushed) is < 0. */
		if (l->code_adaptive < 0)
			return -1;
		v = (int64_t)(lasti - (code + (uint64_t)l->code_adaptive));
		if (v < -2 * (int64_t)INT32_MAX || v > 2 * (int64_t)INT32_MAX)
			return INT64_MAX;
		return v / 2 * 2;
	}
}

int py_lines__line(const struct py_layout *l, const uint8_t *t, size_t len, int firstline,
		   int64_t addr)
{
	int line;

	switch (l->lines_kind) {
	case PY_LINES_LNOTAB:
		line = py_lines__lnotab(t, len, firstline, addr, l->major >= 3);
		break;
	case PY_LINES_LINETABLE:
		line = py_lines__linetable310(t, len, firstline, addr);
		break;
	default:
		line = py_lines__locations(t, len, firstline, addr);
		break;
	}
	return line < 0 ? 0 : line;
}
