// SPDX-License-Identifier: GPL-2.0
/* Synthetic Python process memory for the unit suites (pyfake.h). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/python/pyfake.h"

uint64_t fake_alloc(struct fake *f, size_t len)
{
	uint64_t addr = FAKE_BASE + f->used;

	len = (len + 15) & ~15UL;
	ck_assert_msg(f->used + len <= FAKE_SIZE, "fake image full");
	f->used += len;
	return addr;
}

void fake_put(struct fake *f, uint64_t addr, const void *data, size_t len)
{
	ck_assert(addr >= FAKE_BASE && addr + len <= FAKE_BASE + FAKE_SIZE);
	memcpy(f->buf + (addr - FAKE_BASE), data, len);
}

void fake_put64(struct fake *f, uint64_t addr, uint64_t v)
{
	fake_put(f, addr, &v, sizeof(v));
}

void fake_put32(struct fake *f, uint64_t addr, uint32_t v)
{
	fake_put(f, addr, &v, sizeof(v));
}

uint64_t fake_get64(const struct fake *f, uint64_t addr)
{
	uint64_t v;

	memcpy(&v, f->buf + (addr - FAKE_BASE), sizeof(v));
	return v;
}

/* A type object named name. */
static uint64_t fake_type(struct fake *f, const char *name)
{
	uint64_t t = fake_alloc(f, 400), s = fake_alloc(f, strlen(name) + 1);

	fake_put(f, s, name, strlen(name) + 1);
	fake_put64(f, t + PY_TYPE_TP_NAME, s);
	return t;
}

/* 3.13's and 3.14's _Py_DebugOffsets: the fields a reader checks, at their places. */
static void fake_debug_offsets(struct fake *f, uint64_t rt)
{
	const struct py_layout *l = f->l;
	bool v14 = l->minor == 14;
	uint64_t ts = v14 ? 176 : 152, fr = v14 ? 248 : 224, co = v14 ? 312 : 272;
	uint64_t ob = v14 ? 400 : 352, ty = v14 ? 416 : 368, by = v14 ? 584 : 512;
	uint64_t un = v14 ? 608 : 536;

	fake_put(f, rt, "xdebugpy", 8);
	fake_put64(f, rt + 8, (uint64_t)l->major << 24 | (uint64_t)l->minor << 16 | 2 << 8 | 0xf0);
	fake_put64(f, rt + 16, 0);
	fake_put64(f, rt + 40, l->runtime_interp_head);
	fake_put64(f, rt + 64, (uint64_t)(int64_t)l->interp_next);
	fake_put64(f, rt + 72, l->interp_threads_head);
	fake_put64(f, rt + ts + 16, l->tstate_next);
	fake_put64(f, rt + ts + 24, l->tstate_interp);
	fake_put64(f, rt + ts + 32, l->tstate_frame);
	fake_put64(f, rt + ts + 40, l->tstate_thread_id);
	fake_put64(f, rt + ts + 48, l->tstate_native_tid);
	fake_put64(f, rt + fr + 8, l->frame_back);
	fake_put64(f, rt + fr + 16, l->frame_code);
	fake_put64(f, rt + fr + 24, l->frame_lasti);
	fake_put64(f, rt + fr + 40, l->frame_entry);
	fake_put64(f, rt + co + 8, l->code_filename);
	fake_put64(f, rt + co + 16, l->code_name);
	fake_put64(f, rt + co + 24, l->code_qualname);
	fake_put64(f, rt + co + 32, l->code_linetable);
	fake_put64(f, rt + co + 40, l->code_firstlineno);
	fake_put64(f, rt + co + 72, l->code_adaptive);
	fake_put64(f, rt + ob + 8, PY_OB_TYPE);
	fake_put64(f, rt + ty + 8, PY_TYPE_TP_NAME);
	fake_put64(f, rt + by + 8, PY_VAR_OB_SIZE);
	fake_put64(f, rt + by + 16, PY_BYTES_SVAL);
	fake_put64(f, rt + un + 8, l->str_state);
	fake_put64(f, rt + un + 16, 16);
	fake_put64(f, rt + un + 24, l->str_ascii_size);
}

void fake_init(struct fake *f, const struct py_layout *l)
{
	memset(f, 0, sizeof(*f));
	f->l = l;
	f->buf = calloc(1, FAKE_SIZE);
	ck_assert_ptr_nonnull(f->buf);
	fake_alloc(f, 4096);	/* nothing at the range's first page: a guard */
	f->pi.major = l->major;
	f->pi.minor = l->minor;
	f->pi.micro = 2;
	f->pi.layout = l;
	f->pi.code_type = fake_type(f, "code");
	f->pi.str_type = fake_type(f, l->major == 2 ? "str" : "str");
	f->pi.bytes_type = l->major == 2 ? f->pi.str_type : fake_type(f, "bytes");
	if (l->runtime_interp_head >= 0) {
		f->pi.runtime = fake_alloc(f, l->runtime_interp_head + 1024);
		if (l->minor >= 13)
			fake_debug_offsets(f, f->pi.runtime);
	} else {
		f->pi.interp_head = fake_alloc(f, 8);
		f->pi.tstate_current = fake_alloc(f, 8);
	}
}

void fake_finish(struct fake *f)
{
	/* Whole pages, as a process maps them, with room after the last object. */
	fake_alloc(f, 256);
	fake_alloc(f, (4096 - f->used % 4096) % 4096);
	/* The guard page stays out of the image. */
	fake_remap(f, false);
}

void fake_remap(struct fake *f, bool empty)
{
	py_image__free(f->img);
	f->img = py_image__new();
	ck_assert_ptr_nonnull(f->img);
	if (!empty)
		ck_assert_int_eq(py_image__add(f->img, FAKE_BASE + 4096, f->buf + 4096,
					       f->used - 4096), 0);
	py_image__mem(f->img, &f->mem);
}

void fake_free(struct fake *f)
{
	py_image__free(f->img);
	free(f->buf);
}

/* The next code point of UTF-8 s (valid: tests write it). */
static uint32_t next_cp(const unsigned char **s)
{
	const unsigned char *p = *s;
	uint32_t cp;

	if (p[0] < 0x80) {
		cp = p[0];
		*s += 1;
	} else if (p[0] < 0xe0) {
		cp = (p[0] & 0x1f) << 6 | (p[1] & 0x3f);
		*s += 2;
	} else if (p[0] < 0xf0) {
		cp = (p[0] & 0x0f) << 12 | (p[1] & 0x3f) << 6 | (p[2] & 0x3f);
		*s += 3;
	} else {
		cp = (uint32_t)(p[0] & 0x07) << 18 | (p[1] & 0x3f) << 12 | (p[2] & 0x3f) << 6 |
		     (p[3] & 0x3f);
		*s += 4;
	}
	return cp;
}

uint64_t fake_str(struct fake *f, const char *utf8)
{
	const struct py_layout *l = f->l;
	const unsigned char *p = (const unsigned char *)utf8;
	uint32_t cps[4096], max = 0;
	size_t n = 0, kind;
	uint64_t obj;

	if (l->str_kind == PY_STR_BYTES) {
		obj = fake_alloc(f, l->str_data + strlen(utf8) + 1);
		fake_put64(f, obj + PY_OB_TYPE, f->pi.str_type);
		fake_put64(f, obj + 16, strlen(utf8));
		fake_put(f, obj + l->str_data, utf8, strlen(utf8) + 1);
		return obj;
	}
	while (*p && n < 4096) {
		cps[n] = next_cp(&p);
		if (cps[n] > max)
			max = cps[n];
		n++;
	}
	kind = max < 0x100 ? 1 : max < 0x10000 ? 2 : 4;
	obj = fake_alloc(f, l->str_compact_size + (n + 1) * kind);
	fake_put64(f, obj + PY_OB_TYPE, f->pi.str_type);
	fake_put64(f, obj + 16, n);
	fake_put32(f, obj + l->str_state,
		   (uint32_t)(kind << 2 | 1 << 5 | (max < 0x80 ? 1 << 6 : 0)));
	for (size_t i = 0; i < n; i++) {
		uint64_t at = obj + (max < 0x80 ? l->str_ascii_size : l->str_compact_size) + i * kind;

		fake_put(f, at, &cps[i], kind);
	}
	return obj;
}

uint64_t fake_bytes(struct fake *f, const void *data, size_t len)
{
	int32_t sval = f->l->str_kind == PY_STR_BYTES ? f->l->str_data : PY_BYTES_SVAL;
	uint64_t obj = fake_alloc(f, sval + len + 1);

	fake_put64(f, obj + PY_OB_TYPE, f->pi.bytes_type);
	fake_put64(f, obj + 16, len);
	if (len)
		fake_put(f, obj + sval, data, len);
	return obj;
}

uint64_t fake_code(struct fake *f, const char *name, const char *file, int firstline,
		   const uint8_t *lines, size_t lines_len)
{
	const struct py_layout *l = f->l;
	uint64_t code = fake_alloc(f, l->code_adaptive > 0 ? l->code_adaptive + 512 : 512);

	fake_put64(f, code, 1);
	fake_put64(f, code + PY_OB_TYPE, f->pi.code_type);
	if (l->code_version >= 0)
		fake_put32(f, code + l->code_version, ++f->versions);
	fake_put64(f, code + l->code_name, fake_str(f, name));
	if (l->code_qualname >= 0)
		fake_put64(f, code + l->code_qualname, fake_str(f, name));
	fake_put64(f, code + l->code_filename, fake_str(f, file));
	fake_put32(f, code + l->code_firstlineno, (uint32_t)firstline);
	fake_put64(f, code + l->code_linetable, fake_bytes(f, lines, lines_len));
	return code;
}

uint64_t fake_lasti(const struct fake *f, uint64_t code, int unit)
{
	switch (f->l->lasti_kind) {
	case PY_LASTI_BYTE_OFFSET:
		return (uint64_t)(int64_t)(2 * unit);
	case PY_LASTI_INSN_INDEX:
		return (uint64_t)(int64_t)unit;
	default:
		return code + f->l->code_adaptive + 2 * (int64_t)unit;
	}
}

uint64_t fake_frame(struct fake *f, uint64_t code, uint64_t lasti, uint64_t back, int entry)
{
	const struct py_layout *l = f->l;
	uint64_t frame = fake_alloc(f, l->frame_read);
	uint8_t flag = entry ? (l->entry_kind == PY_ENTRY_OWNER ? 3 : 1) : 0;

	/* 3.14's _PyStackRef: a deferred reference carries tag bit 0. */
	fake_put64(f, frame + l->frame_code, code | (l->code_tag_bits ? 1 : 0));
	fake_put64(f, frame + l->frame_back, back);
	if (l->lasti_kind <= PY_LASTI_INSN_INDEX)
		fake_put32(f, frame + l->frame_lasti, (uint32_t)lasti);
	else
		fake_put64(f, frame + l->frame_lasti, lasti);
	if (l->entry_kind != PY_ENTRY_NONE)
		fake_put(f, frame + l->frame_entry, &flag, 1);
	return frame;
}

uint64_t fake_interp(struct fake *f)
{
	const struct py_layout *l = f->l;
	int32_t size = (l->interp_next > l->interp_threads_head ? l->interp_next :
								 l->interp_threads_head) + 64;
	uint64_t interp = fake_alloc(f, size);
	uint64_t head = f->pi.runtime ? f->pi.runtime + l->runtime_interp_head : f->pi.interp_head;

	/* Appended: the first is the main one. */
	while (fake_get64(f, head)) {
		ck_assert_int_ge(l->interp_next, 0);
		head = fake_get64(f, head) + l->interp_next;
	}
	fake_put64(f, head, interp);
	return interp;
}

uint64_t fake_thread(struct fake *f, uint64_t interp, uint64_t frame, uint32_t tid)
{
	const struct py_layout *l = f->l;
	uint64_t t = fake_alloc(f, 512), head = interp + l->interp_threads_head;

	fake_put64(f, t + l->tstate_next, fake_get64(f, head));
	fake_put64(f, head, t);
	fake_put64(f, t + l->tstate_interp, interp);
	if (l->cframe_current >= 0) {
		uint64_t cframe = fake_alloc(f, 64);

		fake_put64(f, cframe + l->cframe_current, frame);
		fake_put64(f, t + l->tstate_frame, cframe);
	} else {
		fake_put64(f, t + l->tstate_frame, frame);
	}
	if (l->tstate_native_tid >= 0) {
		fake_put64(f, t + l->tstate_native_tid, tid);
		fake_put64(f, t + l->tstate_thread_id, 0x7f0000000000ULL + tid);
	} else {
		uint64_t pthread = fake_alloc(f, 2368);

		fake_put32(f, pthread + FAKE_TID_OFFSET, tid);
		fake_put64(f, t + l->tstate_thread_id, pthread);
	}
	if (f->pi.tstate_current)
		fake_put64(f, f->pi.tstate_current, t);
	return t;
}

uint64_t fake_check(const struct fake *f, uint64_t tstate)
{
	const struct py_layout *l = f->l;

	return fake_get64(f, tstate + (l->tstate_native_tid >= 0 ? l->tstate_native_tid :
								   l->tstate_thread_id));
}

static size_t put_varint(uint8_t *out, size_t at, size_t len, uint64_t v)
{
	do {
		uint8_t b = v & 63;

		v >>= 6;
		if (v)
			b |= 64;
		if (at < len)
			out[at] = b;
		at++;
	} while (v);
	return at;
}

static size_t put_svarint(uint8_t *out, size_t at, size_t len, int64_t v)
{
	return put_varint(out, at, len, v < 0 ? (uint64_t)(-v) << 1 | 1 : (uint64_t)v << 1);
}

static size_t put_byte(uint8_t *out, size_t at, size_t len, uint8_t b)
{
	if (at < len)
		out[at] = b;
	return at + 1;
}

size_t fake_linetable(const struct py_layout *l, int firstline, const int *lines, size_t n,
		      uint8_t *out, size_t out_len)
{
	size_t at = 0, last_addr = 0;
	int cur = firstline;

	for (size_t i = 0; i < n; i++) {
		int line = lines[i], delta = line ? line - cur : 0;

		if (l->lines_kind == PY_LINES_LNOTAB) {
			size_t addr = 2 * i;

			if (!line || !delta)
				continue;
			for (; addr - last_addr > 255; last_addr += 255) {
				at = put_byte(out, at, out_len, 255);
				at = put_byte(out, at, out_len, 0);
			}
			at = put_byte(out, at, out_len, (uint8_t)(addr - last_addr));
			at = put_byte(out, at, out_len, (uint8_t)(int8_t)delta);
			last_addr = addr;
		} else if (l->lines_kind == PY_LINES_LINETABLE) {
			at = put_byte(out, at, out_len, 2);
			at = put_byte(out, at, out_len, line ? (uint8_t)(int8_t)delta : 0x80);
		} else if (!line) {
			at = put_byte(out, at, out_len, 0x80 | 15 << 3);
		} else if (!delta) {
			/* Short form: a column byte follows. */
			at = put_byte(out, at, out_len, 0x80 | (i % 10) << 3);
			at = put_byte(out, at, out_len, 0x11);
		} else if (delta == 1 || delta == 2) {
			at = put_byte(out, at, out_len, 0x80 | (10 + delta) << 3);
			at = put_byte(out, at, out_len, 4);
			at = put_byte(out, at, out_len, 9);
		} else if (i % 2) {
			at = put_byte(out, at, out_len, 0x80 | 13 << 3);
			at = put_svarint(out, at, out_len, delta);
		} else {
			/* Long form: line delta, end line delta, column, end column. */
			at = put_byte(out, at, out_len, 0x80 | 14 << 3);
			at = put_svarint(out, at, out_len, delta);
			at = put_varint(out, at, out_len, 3);
			at = put_varint(out, at, out_len, 100);
			at = put_varint(out, at, out_len, 7);
		}
		if (line)
			cur = line;
	}
	return at;
}

void fake_write_seed(const struct fake *f, const char *dir, const char *name)
{
	uint64_t addrs[6] = { f->pi.runtime,   f->pi.interp_head, f->pi.tstate_current,
			      f->pi.code_type, f->pi.str_type,	  f->pi.bytes_type };
	uint8_t header[26] = { f->l->id, 0 };
	size_t len = f->used;
	char path[512];
	FILE *out;

	for (int i = 0; i < 6; i++) {
		uint32_t off = addrs[i] ? (uint32_t)(addrs[i] - FAKE_BASE) : 0;

		memcpy(header + 2 + 4 * i, &off, 4);
	}
	/* Trailing zeros need not be stored, but words stay whole (a pointer's high bytes are 0). */
	while (len > 4096 && !f->buf[len - 1])
		len--;
	len = (len + 7) & ~7UL;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	out = fopen(path, "w");
	ck_assert_ptr_nonnull(out);
	fwrite(header, 1, sizeof(header), out);
	fwrite(f->buf + 4096, 1, len - 4096, out);
	fclose(out);
}
