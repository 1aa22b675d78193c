// SPDX-License-Identifier: GPL-2.0
/*
 * Strings and bytes of a Python process as C strings: PEP 393 compact
 * strings (3.3+), 2.7's str, and bytes objects (line tables). No length is
 * trusted: what is read is bounded by the caller's buffer, and what comes
 * out is valid UTF-8 whatever the memory said.
 */
#include <errno.h>
#include <stdlib.h>

#include "core/lib/utf8.h"
#include "interp/python/pyint.h"

/*
 * PyASCIIObject.state, the same bits from 3.3 to 3.14 in GIL builds:
 * interned:2, kind:3, compact:1, ascii:1, then ready (<= 3.11) or
 * statically_allocated (3.12+), which no reader here needs.
 */
#define STATE_KIND(s) (((s) >> 2) & 7)
#define STATE_COMPACT(s) (((s) >> 5) & 1)
#define STATE_ASCII(s) (((s) >> 6) & 1)

#define PY_LENGTH 16		/* PyASCIIObject.length, PyVarObject.ob_size */
#define REPLACEMENT 0xfffd

/* Code point cp as UTF-8 at out[*len], if it fits before out_len - 1. */
static bool put_cp(char *out, size_t out_len, size_t *len, uint32_t cp)
{
	unsigned char b[4];
	size_t n;

	if (!cp || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		cp = REPLACEMENT;
	if (cp < 0x80) {
		b[0] = cp;
		n = 1;
	} else if (cp < 0x800) {
		b[0] = 0xc0 | (cp >> 6);
		b[1] = 0x80 | (cp & 0x3f);
		n = 2;
	} else if (cp < 0x10000) {
		b[0] = 0xe0 | (cp >> 12);
		b[1] = 0x80 | ((cp >> 6) & 0x3f);
		b[2] = 0x80 | (cp & 0x3f);
		n = 3;
	} else {
		b[0] = 0xf0 | (cp >> 18);
		b[1] = 0x80 | ((cp >> 12) & 0x3f);
		b[2] = 0x80 | ((cp >> 6) & 0x3f);
		b[3] = 0x80 | (cp & 0x3f);
		n = 4;
	}
	if (*len + n > out_len - 1)
		return false;
	memcpy(out + *len, b, n);
	*len += n;
	return true;
}

/* Code units of width kind (1, 2, 4) to UTF-8; ascii: only 0..0x7f are valid. */
static void units_to_utf8(const uint8_t *data, size_t n, unsigned int kind, bool ascii,
			  char *out, size_t out_len)
{
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		uint32_t cp;

		if (kind == 1)
			cp = data[i];
		else if (kind == 2)
			cp = (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8;
		else
			cp = py_u32(data, 4 * i);
		if (ascii && cp >= 0x80)
			cp = REPLACEMENT;
		if (!put_cp(out, out_len, &len, cp))
			break;
	}
	out[len] = '\0';
}

/* Bytes in any encoding: valid UTF-8 sequences kept, other bytes replaced. */
static void bytes_to_utf8(const uint8_t *data, size_t n, char *out, size_t out_len)
{
	size_t len = 0, i = 0;

	while (i < n) {
		size_t seq = data[i] ? utf8__seq_len(data + i, n - i) : 0;

		if (!seq) {
			if (!put_cp(out, out_len, &len, REPLACEMENT))
				break;
			i++;
			continue;
		}
		if (len + seq > out_len - 1)
			break;
		memcpy(out + len, data + i, seq);
		len += seq;
		i += seq;
	}
	out[len] = '\0';
}

/* The object's header (hdr_len bytes) with its type checked against type (0: any). */
static int read_header(const struct py_mem *mem, uint64_t obj, uint64_t type, void *hdr,
		       size_t hdr_len)
{
	int err = py_mem__read(mem, obj, hdr, hdr_len);

	if (err)
		return err;
	if (type && py_u64(hdr, PY_OB_TYPE) != type)
		return -EINVAL;
	return 0;
}

static int str27_read(const struct py_layout *l, const struct py_mem *mem, uint64_t obj,
		      uint64_t type, char *out, size_t out_len)
{
	uint8_t hdr[64], *data;
	int64_t size;
	size_t n;
	int err;

	if (l->str_data < PY_LENGTH + 8 || (size_t)l->str_data > sizeof(hdr))
		return -EINVAL;
	err = read_header(mem, obj, type, hdr, PY_LENGTH + 8);
	if (err)
		return err;
	size = (int64_t)py_u64(hdr, PY_LENGTH);
	if (size < 0)
		return -EINVAL;
	/* Each byte gives at least one byte of text. */
	n = (uint64_t)size < out_len - 1 ? (size_t)size : out_len - 1;
	data = malloc(n ? n : 1);
	if (!data)
		return -ENOMEM;
	err = py_mem__read(mem, obj + l->str_data, data, n);
	if (!err)
		bytes_to_utf8(data, n, out, out_len);
	free(data);
	return err;
}

int py_str__read(const struct py_layout *l, const struct py_mem *mem, uint64_t obj,
		 uint64_t type, char *out, size_t out_len)
{
	uint8_t hdr[128], *data;
	unsigned int kind;
	uint32_t state;
	int64_t length;
	uint64_t at;
	size_t n;
	int err;

	if (!out_len)
		return -EINVAL;
	out[0] = '\0';
	if (l->str_kind == PY_STR_BYTES)
		return str27_read(l, mem, obj, type, out, out_len);
	if (l->str_ascii_size <= l->str_state || (size_t)l->str_ascii_size > sizeof(hdr) ||
	    l->str_compact_size < l->str_ascii_size)
		return -EINVAL;
	/* The ASCII header only: a short string may end before a compact one's would. */
	err = read_header(mem, obj, type, hdr, l->str_ascii_size);
	if (err)
		return err;
	state = py_u32(hdr, l->str_state);
	length = (int64_t)py_u64(hdr, PY_LENGTH);
	kind = STATE_KIND(state);
	if (!STATE_COMPACT(state) || length < 0 || (kind != 1 && kind != 2 && kind != 4) ||
	    (STATE_ASCII(state) && kind != 1))
		return -EINVAL;
	at = obj + (STATE_ASCII(state) ? l->str_ascii_size : l->str_compact_size);
	/* Each character gives at least one byte of text. */
	n = (uint64_t)length < out_len - 1 ? (size_t)length : out_len - 1;
	data = malloc(n ? n * kind : 1);
	if (!data)
		return -ENOMEM;
	err = py_mem__read(mem, at, data, n * kind);
	if (!err)
		units_to_utf8(data, n, kind, STATE_ASCII(state), out, out_len);
	free(data);
	return err;
}

int py_bytes__read(const struct py_layout *l, const struct py_mem *mem, uint64_t obj,
		   uint64_t type, size_t max, uint8_t **data, size_t *len)
{
	int32_t sval = l->str_kind == PY_STR_BYTES ? l->str_data : PY_BYTES_SVAL;
	uint8_t hdr[PY_LENGTH + 8];
	int64_t size;
	int err;

	*data = NULL;
	*len = 0;
	err = read_header(mem, obj, type, hdr, sizeof(hdr));
	if (err)
		return err;
	size = (int64_t)py_u64(hdr, PY_LENGTH);
	if (size < 0)
		return -EINVAL;
	if ((uint64_t)size > max)
		return -E2BIG;
	*data = malloc(size ? (size_t)size : 1);
	if (!*data)
		return -ENOMEM;
	err = py_mem__read(mem, obj + sval, *data, (size_t)size);
	if (err) {
		free(*data);
		*data = NULL;
		return err;
	}
	*len = (size_t)size;
	return 0;
}

/* What follows the last needle in path, if anything does. */
static const char *after_last(const char *path, const char *needle)
{
	const char *found = NULL, *p = path;

	while ((p = strstr(p, needle))) {
		if (p[strlen(needle)])
			found = p + strlen(needle);
		p++;
	}
	return found;
}

const char *py_short_filename(const char *path)
{
	const char *site = after_last(path, "site-packages/");
	const char *dist = after_last(path, "dist-packages/");
	const char *slash;

	if (site && dist)
		return site > dist ? site : dist;
	if (site || dist)
		return site ? site : dist;
	slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}
