// SPDX-License-Identifier: GPL-2.0
/*
 * bpf/python_layouts.h as a table: one entry per PY*_ prefix, stamped by
 * token pasting over PY_LAYOUTS, so that user space reads exactly the
 * offsets the in-kernel walk was compiled with.
 */
#include "interp/python/pyint.h"

#define PY_LAYOUT_ENTRY(P)                                                                    \
	[PY_LAYOUT_##P] = {                                                                   \
		.id = PY_LAYOUT_##P,                                                          \
		.major = P##_MAJOR,                                                           \
		.minor = P##_MINOR,                                                           \
		.runtime_interp_head = P##_RUNTIME_INTERP_HEAD,                               \
		.interp_next = P##_INTERP_NEXT,                                               \
		.interp_threads_head = P##_INTERP_THREADS_HEAD,                               \
		.tstate_next = P##_TSTATE_NEXT,                                               \
		.tstate_interp = P##_TSTATE_INTERP,                                           \
		.tstate_frame = P##_TSTATE_FRAME,                                             \
		.cframe_current = P##_CFRAME_CURRENT,                                         \
		.tstate_thread_id = P##_TSTATE_THREAD_ID,                                     \
		.tstate_native_tid = P##_TSTATE_NATIVE_TID,                                   \
		.frame_read = P##_FRAME_READ,                                                 \
		.frame_code = P##_FRAME_CODE,                                                 \
		.frame_back = P##_FRAME_BACK,                                                 \
		.frame_lasti = P##_FRAME_LASTI,                                               \
		.frame_entry = P##_FRAME_ENTRY,                                               \
		.code_filename = P##_CODE_FILENAME,                                           \
		.code_name = P##_CODE_NAME,                                                   \
		.code_qualname = P##_CODE_QUALNAME,                                           \
		.code_firstlineno = P##_CODE_FIRSTLINENO,                                     \
		.code_linetable = P##_CODE_LINETABLE,                                         \
		.code_version = P##_CODE_VERSION,                                             \
		.code_code = P##_CODE_CODE,                                                   \
		.code_adaptive = P##_CODE_ADAPTIVE,                                           \
		.str_data = P##_STR_DATA,                                                     \
		.str_state = P##_STR_STATE,                                                   \
		.str_ascii_size = P##_STR_ASCII_SIZE,                                         \
		.str_compact_size = P##_STR_COMPACT_SIZE,                                     \
		.code_tag_bits = P##_CODE_TAG_BITS,                                           \
		.lasti_kind = P##_LASTI_KIND,                                                 \
		.entry_kind = P##_ENTRY_KIND,                                                 \
		.str_kind = P##_STR_KIND,                                                     \
		.lines_kind = P##_LINES_KIND,                                                 \
	},

static const struct py_layout layouts[PY_NR_LAYOUTS] = {
	PY_LAYOUTS(PY_LAYOUT_ENTRY)
};

const struct py_layout *py_layout__by_id(unsigned int id)
{
	if (id == PY_LAYOUT_NONE || id >= PY_NR_LAYOUTS)
		return NULL;
	return &layouts[id];
}

/* A layout serves its own minor and the later ones up to the next layout's. */
const struct py_layout *py_layout__for_version(int major, int minor)
{
	const struct py_layout *best = NULL;

	for (unsigned int id = PY_LAYOUT_NONE + 1; id < PY_NR_LAYOUTS; id++) {
		const struct py_layout *l = &layouts[id];

		if (l->major == major && l->minor <= minor && (!best || l->minor > best->minor))
			best = l;
	}
	/* Only 3.9 is served by an earlier minor's layout: nothing past the last one known. */
	if (best && best->minor != minor && !(major == 3 && minor == 9))
		return NULL;
	return best;
}

int32_t py_fields_end(const int32_t *offs, size_t n, int32_t size)
{
	int32_t end = 0;

	for (size_t i = 0; i < n; i++)
		if (offs[i] >= 0 && offs[i] + size > end)
			end = offs[i] + size;
	return end;
}
