// SPDX-License-Identifier: GPL-2.0
/*
 * Source positions: V8's source position tables (bytecode or pc offset ->
 * character offset in the script) and a Script's lines (character offset ->
 * line), from its line_ends when V8 computed them, else from its source.
 *
 * A table is a run of entries, each two zigzag-encoded base-128 varints
 * (low 7 bits first, 0x80 = more): the code offset's delta from the last
 * entry (a negative value -d-1 means d, for an entry that is not a
 * statement), then the source position's delta. Both start from (-1, 0).
 * A source position is a bit field: bit 0 external (no script offset),
 * bits 1-30 the script offset + 1, bits 31-46 the inlining id + 1.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "interp/node/nodeint.h"

/* Longest varint: 10 bytes carry 64 bits. */
static int read_varint(const uint8_t *p, size_t len, size_t *at, int64_t *out)
{
	uint64_t v = 0;

	for (unsigned int shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (*at >= len)
			return -EINVAL;
		b = p[(*at)++];
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
			return 0;
		}
	}
	return -EINVAL;
}

int node_position_at(const uint8_t *table, size_t len, int64_t off, int64_t *script_offset,
		     unsigned int *inlined)
{
	int64_t code = -1, pos = 0, found = 0;
	bool any = false;
	size_t at = 0;

	if (len > NODE_POSITIONS_MAX)
		return -EINVAL;
	while (at < len) {
		int64_t d, p;

		if (read_varint(table, len, &at, &d) || read_varint(table, len, &at, &p))
			return -EINVAL;
		/*
		 * Offsets ascend and stay within what code and scripts can be
		 * (a position is 47 bits): a table going elsewhere is garbage,
		 * and sums of at most NODE_POSITIONS_MAX deltas so bounded stay
		 * far from overflow.
		 */
		if (d < -(int64_t)INT32_MAX || d > INT32_MAX || p > (1LL << 48) || p < -(1LL << 48))
			return -EINVAL;
		if (d < 0)
			d = -d - 1;
		code += d;
		pos += p;
		if (code > off)
			break;
		found = pos;
		any = true;
	}
	if (!any)
		return -ENOENT;
	if (found & 1) {
		*script_offset = -1;	/* an external position: a line of another file */
	} else {
		*script_offset = (int64_t)(((uint64_t)found >> 1) & ((1u << 30) - 1)) - 1;
	}
	*inlined = (unsigned int)(((uint64_t)found >> 31) & 0xffff);
	return 0;
}

/* Line of pos from the line_ends FixedArray of Smis ends: the first end at or after pos. */
static int line_from_ends(const struct node_v8_layout *l, const struct node_mem *mem,
			  uint64_t ends, int64_t pos, int *line)
{
	uint64_t w, data;
	int64_t n, lo = 0, hi;
	int err;

	err = node_read_field(l, mem, ends, l->fixed_array_length, &w);
	if (err)
		return err;
	if (!node_is_smi(l, w))
		return -EINVAL;
	n = node_smi_value(l, w);
	if (n <= 0 || n > (int64_t)NODE_SOURCE_MAX)
		return -EINVAL;
	data = node_field(l, ends, l->fixed_array_data);
	hi = n;
	/* Binary search, about 24 reads at most: the table is never copied whole. */
	while (lo < hi) {
		int64_t mid = lo + (hi - lo) / 2;

		err = node_read_word(mem, data + (uint64_t)mid * 8, &w);
		if (err)
			return err;
		if (!node_is_smi(l, w))
			return -EINVAL;
		if (node_smi_value(l, w) < pos)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == n)
		return -ENOENT;	/* past the last line's end */
	*line = (int)lo + 1;
	return 0;
}

struct count {
	size_t seen, upto;
	int lines;
};

static int count_newlines(void *ctx, const uint8_t *units8, const uint16_t *units16, size_t n)
{
	struct count *c = ctx;

	for (size_t i = 0; i < n; i++, c->seen++) {
		if (c->seen >= c->upto)
			return 1;
		if ((units8 ? units8[i] : units16[i]) == '\n')
			c->lines++;
	}
	return 0;
}

int node_script_line(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t script,
		     int64_t pos, int *line)
{
	struct count c = { .upto = (size_t)pos, .lines = 1 };
	uint64_t ends, source;
	uint32_t len;
	int err;

	if (pos < 0 || !node_obj_is(l, mem, script, l->type_script))
		return -EINVAL;
	err = node_read_field(l, mem, script, l->script_line_ends, &ends);
	if (err)
		return err;
	if (node_obj_is(l, mem, ends, l->type_fixed_array))
		return line_from_ends(l, mem, ends, pos, line);
	/* V8 builds line_ends the first time it needs a line: until then, count them. */
	err = node_read_field(l, mem, script, l->script_source, &source);
	if (err)
		return err;
	err = node_str_length(l, mem, source, &len);
	if (err)
		return err;
	if ((uint64_t)pos > len || pos > (int64_t)NODE_SOURCE_MAX)
		return -ENOENT;
	err = node_str_units(l, mem, source, (size_t)pos, count_newlines, &c);
	if (err < 0)
		return err == -ENOTSUP ? -ENOENT : err;
	*line = c.lines;
	return 0;
}
