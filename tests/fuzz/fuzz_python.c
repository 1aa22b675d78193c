// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the memory of a Python process, which its owner
 * controls, read by interp/python as the profiler reads it: validation
 * (3.13+'s debug offsets, PyCode_Type), the thread lists, each thread's
 * frames (directly and through a page snapshot, which must agree), and
 * the names and lines of their code objects. Whatever the memory holds,
 * reads stay bounded, names come out valid UTF-8 within their bounds, and
 * walks within PY_MAX_FRAMES.
 *
 * Input: a byte choosing the layout, a byte of flags (1: one thread read;
 * 2: a budget of 256 bytes for names and line tables), six little-endian
 * u32 offsets from FUZZ_BASE (0: none) for _PyRuntime, interp_head,
 * _PyThreadState_Current, PyCode_Type, the str type and the bytes type,
 * then the memory, mapped at FUZZ_BASE + 4096 (where the unit suite's
 * synthetic images put it: tests/unit/python/pyfake.h writes the seeds).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/utf8.h"
#include "interp/python/python.h"

#define FUZZ_BASE 0x10000000ULL
#define HEADER 26
#define MAX_THREADS 16
#define MAX_NAMED 24

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void check_text(const char *s, size_t max)
{
	size_t len = strlen(s);

	if (len >= max)
		abort();
	for (size_t i = 0; i < len;) {
		size_t n = utf8__seq_len((const unsigned char *)s + i, len - i);

		if (!n)
			abort();
		i += n;
	}
}

static void name_frames(struct py_codes *codes, const struct py_stack *st)
{
	for (uint32_t i = 0; i < st->nr_frames && i < MAX_NAMED; i++) {
		const struct py_frame *fr = &st->frames[i];
		struct py_code_info info, again;

		if (py_codes__lookup(codes, fr->code, fr->ident, fr->lasti, &info))
			continue;
		/* Memory unchanged: the cached entry, checked, says the same. */
		if (py_codes__lookup(codes, fr->code, fr->ident, fr->lasti, &again) ||
		    again.name != info.name || again.file != info.file || again.line != info.line)
			abort();
		check_text(info.name, PY_NAME_MAX);
		check_text(info.file, PY_PATH_MAX);
		check_text(py_short_filename(info.file), PY_PATH_MAX);
		if (info.line < 0)
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct py_stack direct, snapped;
	static struct py_snap snap;
	struct py_tstate threads[MAX_THREADS];
	uint64_t *addrs[6];
	struct py_image *img;
	struct py_codes *codes;
	struct py_interp pi;
	struct errmsg why;
	struct py_mem mem;
	unsigned int flags;
	int n;

	if (size < HEADER + 1)
		return 0;
	memset(&pi, 0, sizeof(pi));
	/* A layout's id as the seeds write it; other bytes choose one too. */
	pi.layout = py_layout__by_id(data[0] > PY_LAYOUT_NONE && data[0] < PY_NR_LAYOUTS ?
					     data[0] :
					     1 + data[0] % (PY_NR_LAYOUTS - 1));
	pi.major = pi.layout->major;
	pi.minor = pi.layout->minor;
	addrs[0] = &pi.runtime;
	addrs[1] = &pi.interp_head;
	addrs[2] = &pi.tstate_current;
	addrs[3] = &pi.code_type;
	addrs[4] = &pi.str_type;
	addrs[5] = &pi.bytes_type;
	for (int i = 0; i < 6; i++) {
		uint32_t off = le32(data + 2 + 4 * i);

		*addrs[i] = off ? FUZZ_BASE + off : 0;
	}
	img = py_image__new();
	if (!img || py_image__add(img, FUZZ_BASE + 4096, data + HEADER, size - HEADER)) {
		py_image__free(img);
		return 0;
	}
	py_image__mem(img, &mem);
	/* Its verdict does not matter here: the profiler would stop, the fuzzer goes on. */
	py_interp__validate(&pi, &mem, &why);
	n = py_threads__read(&pi, &mem, 720, threads, data[1] & 1 ? 1 : MAX_THREADS, &flags);
	if (n > MAX_THREADS)
		abort();
	codes = py_codes__new(&pi, &mem);
	/* A small budget now and then: names and line tables refused, never held past it. */
	if (codes && data[1] & 2)
		py_codes__set_limit(codes, 256);
	py_snap__init(&snap, &mem);
	for (int t = 0; codes && t < n; t++) {
		int a = py_walk(pi.layout, &mem, threads[t].tstate, &direct);
		int b;

		py_snap__reset(&snap);
		b = py_walk(pi.layout, &snap.mem, threads[t].tstate, &snapped);
		if (direct.nr_frames > PY_MAX_FRAMES || a != b || direct.nr_frames != snapped.nr_frames ||
		    direct.status != snapped.status ||
		    memcmp(direct.frames, snapped.frames,
			   direct.nr_frames * sizeof(direct.frames[0])))
			abort();
		if (!a)
			name_frames(codes, &direct);
	}
	if (codes) {
		struct py_codes_held h;

		py_codes__held(codes, &h);
		if (h.name_bytes + h.table_bytes > h.limit)
			abort();
	}
	py_codes__free(codes);
	py_image__free(img);
	return 0;
}
