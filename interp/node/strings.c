// SPDX-License-Identifier: GPL-2.0
/*
 * V8 strings of another process: sequential (one-byte Latin-1, two-byte
 * UTF-16), cons (two halves), thin (a forward to the internalized copy) and
 * sliced (a window of a parent) strings, walked part by part with every
 * length checked against its container and every walk bounded in parts and
 * code units. External strings (their characters outside the heap, behind
 * an embedder's resource) are not read.
 */
#include <errno.h>
#include <string.h>

#include "interp/node/nodeint.h"

#define CHUNK 2048	/* code units read at a time */

struct walk {
	const struct node_v8_layout *l;
	const struct node_mem *mem;
	node_str_emit emit;
	void *ctx;
	size_t left;		/* code units still allowed */
	unsigned int parts;
};

int node_str_length(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		    uint32_t *len)
{
	int32_t n;
	int err;

	err = node_mem__read(mem, node_field(l, v, l->string_length), &n, sizeof(n));
	if (err)
		return err;
	if (n < 0)
		return -EINVAL;
	*len = (uint32_t)n;
	return 0;
}

static int emit_seq(struct walk *w, uint64_t v, bool one_byte, uint32_t start, uint32_t count)
{
	union {
		uint8_t b[CHUNK];
		uint16_t u[CHUNK];
	} buf;
	int32_t chars = one_byte ? w->l->seq_one_byte_chars : w->l->seq_two_byte_chars;
	size_t unit = one_byte ? 1 : 2;

	while (count && w->left) {
		uint32_t n = count < CHUNK ? count : CHUNK;
		int err;

		if (n > w->left)
			n = (uint32_t)w->left;
		err = node_mem__read(w->mem, node_field(w->l, v, chars) + (uint64_t)start * unit,
				     &buf, n * unit);
		if (err)
			return err;
		err = w->emit(w->ctx, one_byte ? buf.b : NULL, one_byte ? NULL : buf.u, n);
		if (err)
			return err;
		w->left -= n;
		start += n;
		count -= n;
	}
	return 0;
}

/* Emits [start, start + count) of v, which the caller checked lies within v's length. */
static int emit_part(struct walk *w, uint64_t v, uint32_t start, uint32_t count)
{
	const struct node_v8_layout *l = w->l;

	for (;;) {
		uint16_t type;
		uint32_t len, repr;
		uint64_t next;
		int err;

		if (!count || !w->left)
			return 0;
		if (++w->parts > NODE_STR_MAX_PARTS)
			return -ELOOP;
		err = node_obj_type(l, w->mem, v, &type);
		if (err)
			return err;
		if (type >= l->first_nonstring_type)
			return -EINVAL;
		err = node_str_length(l, w->mem, v, &len);
		if (err)
			return err;
		if (start > len || count > len - start)
			return -EINVAL;
		repr = type & (uint32_t)l->string_repr_mask;
		if (repr == (uint32_t)l->seq_string_tag)
			return emit_seq(w, v, (type & (uint32_t)l->string_encoding_mask) ==
						      (uint32_t)l->one_byte_string_tag,
					start, count);
		if (repr == (uint32_t)l->thin_string_tag) {
			err = node_read_field(l, w->mem, v, l->thin_actual, &next);
		} else if (repr == (uint32_t)l->sliced_string_tag) {
			uint64_t off;

			err = node_read_field(l, w->mem, v, l->sliced_offset, &off);
			if (err)
				return err;
			if (!node_is_smi(l, off) || node_smi_value(l, off) < 0 ||
			    node_smi_value(l, off) > INT32_MAX - (int64_t)start)
				return -EINVAL;
			start += (uint32_t)node_smi_value(l, off);
			err = node_read_field(l, w->mem, v, l->sliced_parent, &next);
		} else if (repr == (uint32_t)l->cons_string_tag) {
			uint64_t first;
			uint32_t first_len;

			err = node_read_field(l, w->mem, v, l->cons_first, &first);
			if (!err)
				err = node_read_field(l, w->mem, v, l->cons_second, &next);
			if (!err)
				err = node_str_length(l, w->mem, first, &first_len);
			if (err)
				return err;
			if (first_len > len)
				return -EINVAL;
			if (start < first_len) {
				uint32_t n = first_len - start < count ? first_len - start : count;

				err = emit_part(w, first, start, n);
				if (err)
					return err;
				count -= n;
				start = 0;
			} else {
				start -= first_len;
			}
		} else {
			return -ENOTSUP;	/* external */
		}
		if (err)
			return err;
		v = next;	/* the rest of this part: a loop, not a recursion */
	}
}

int node_str_units(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		   size_t max, node_str_emit emit, void *ctx)
{
	struct walk w = { .l = l, .mem = mem, .emit = emit, .ctx = ctx, .left = max };
	uint32_t len;
	uint16_t type;
	int err;

	err = node_obj_type(l, mem, v, &type);
	if (err)
		return err;
	if (type >= l->first_nonstring_type)
		return -EINVAL;
	err = node_str_length(l, mem, v, &len);
	if (err)
		return err;
	return emit_part(&w, v, 0, len);
}

struct utf8 {
	char *buf;
	size_t cap, len;
	uint16_t high;		/* a high surrogate waiting for its low half */
	bool full;
};

static void put_cp(struct utf8 *u, uint32_t cp)
{
	char tmp[4];
	size_t n;

	if (!cp || (cp >= 0xd800 && cp < 0xe000))
		cp = 0xfffd;
	if (cp < 0x80) {
		tmp[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		tmp[0] = (char)(0xc0 | cp >> 6);
		tmp[1] = (char)(0x80 | (cp & 0x3f));
		n = 2;
	} else if (cp < 0x10000) {
		tmp[0] = (char)(0xe0 | cp >> 12);
		tmp[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[2] = (char)(0x80 | (cp & 0x3f));
		n = 3;
	} else {
		tmp[0] = (char)(0xf0 | cp >> 18);
		tmp[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
		tmp[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
		tmp[3] = (char)(0x80 | (cp & 0x3f));
		n = 4;
	}
	if (u->full || u->len + n >= u->cap) {
		u->full = true;
		return;
	}
	memcpy(u->buf + u->len, tmp, n);
	u->len += n;
}

static void put_unit(struct utf8 *u, uint16_t c)
{
	if (u->high) {
		if (c >= 0xdc00 && c < 0xe000) {
			put_cp(u, 0x10000 + (((uint32_t)u->high - 0xd800) << 10) + (c - 0xdc00));
			u->high = 0;
			return;
		}
		put_cp(u, 0xfffd);
		u->high = 0;
	}
	if (c >= 0xd800 && c < 0xdc00)
		u->high = c;
	else
		put_cp(u, c);
}

static int utf8_emit(void *ctx, const uint8_t *units8, const uint16_t *units16, size_t n)
{
	struct utf8 *u = ctx;

	for (size_t i = 0; i < n && !u->full; i++)
		put_unit(u, units8 ? units8[i] : units16[i]);
	return u->full ? 1 : 0;
}

int node_str_utf8(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		  char *buf, size_t cap)
{
	struct utf8 u = { .buf = buf, .cap = cap };
	int err;

	if (!cap)
		return -EINVAL;
	buf[0] = '\0';
	/* A code unit gives at most 3 bytes: more than cap units are never needed. */
	err = node_str_units(l, mem, v, cap, utf8_emit, &u);
	if (err < 0)
		return err;
	if (u.high)
		put_cp(&u, 0xfffd);
	buf[u.len] = '\0';
	return 0;
}
