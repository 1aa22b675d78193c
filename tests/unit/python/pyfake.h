/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Synthetic memory of a Python process for one layout of
 * bpf/python_layouts.h: a runtime, interpreters, thread states, frames,
 * code objects and strings laid out with the table's offsets (and, for
 * 3.13+, the _Py_DebugOffsets that describe them), in one address range.
 */
#ifndef TESTS_UNIT_PYTHON_PYFAKE_H
#define TESTS_UNIT_PYTHON_PYFAKE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "interp/python/python.h"

#define FAKE_BASE 0x10000000ULL
#define FAKE_SIZE (4UL << 20)
#define FAKE_TID_OFFSET 720

struct fake {
	const struct py_layout *l;
	struct py_interp pi;		/* as detection would give it */
	uint8_t *buf;			/* FAKE_SIZE bytes at FAKE_BASE */
	size_t used;
	struct py_image *img;		/* after fake_finish */
	struct py_mem mem;
	uint32_t versions;		/* co_version of the code objects made (3.12+) */
};

void fake_init(struct fake *f, const struct py_layout *l);
/* Puts the bytes into an image; f->mem reads it. */
void fake_finish(struct fake *f);
/* The image made again from the bytes as they are now (empty: of nothing, a process gone). */
void fake_remap(struct fake *f, bool empty);
void fake_free(struct fake *f);

uint64_t fake_alloc(struct fake *f, size_t len);
void fake_put(struct fake *f, uint64_t addr, const void *data, size_t len);
void fake_put64(struct fake *f, uint64_t addr, uint64_t v);
void fake_put32(struct fake *f, uint64_t addr, uint32_t v);
uint64_t fake_get64(const struct fake *f, uint64_t addr);

/* A str object holding utf8 (2.7: its bytes; 3.x: the narrowest kind that holds it). */
uint64_t fake_str(struct fake *f, const char *utf8);
uint64_t fake_bytes(struct fake *f, const void *data, size_t len);
/*
 * A live code object (a reference count of 1; 3.12+: the next co_version);
 * lines: a line table in the layout's format.
 */
uint64_t fake_code(struct fake *f, const char *name, const char *file, int firstline,
		   const uint8_t *lines, size_t lines_len);
/* The lasti a frame of code holds when at 2-byte unit unit (a pointer for 3.11+). */
uint64_t fake_lasti(const struct fake *f, uint64_t code, int unit);
/* A frame running code at lasti, called from back; entry: is_entry (3.11) or owner 3 (3.12+). */
uint64_t fake_frame(struct fake *f, uint64_t code, uint64_t lasti, uint64_t back, int entry);
/* An interpreter (appended to the runtime's list). */
uint64_t fake_interp(struct fake *f);
/* A thread state of interp with top frame frame (0: none) and OS thread tid (pushed to the list's head). */
uint64_t fake_thread(struct fake *f, uint64_t interp, uint64_t frame, uint32_t tid);
/* The value struct py_thread.check holds for the thread tid made. */
uint64_t fake_check(const struct fake *f, uint64_t tstate);

/*
 * The image as a seed of tests/fuzz/fuzz_python.c (its header: layout,
 * flags, the interpreter's addresses; then the memory after the guard page).
 */
void fake_write_seed(const struct fake *f, const char *dir, const char *name);

/* A line table in l's format giving lines[i] to unit i (n units; 0: no line). */
size_t fake_linetable(const struct py_layout *l, int firstline, const int *lines, size_t n,
		      uint8_t *out, size_t out_len);

#endif
