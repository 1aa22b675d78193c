// SPDX-License-Identifier: GPL-2.0
/*
 * A detected interpreter checked against its process's memory before
 * anything is walked: 3.13+ describe their own layout in the
 * _Py_DebugOffsets at the start of _PyRuntime, and every version's
 * PyCode_Type is named "code".
 */
#include <errno.h>
#include <stddef.h>

#include "interp/python/pyint.h"

#define DEBUG_COOKIE "xdebugpy"

/*
 * Where _Py_DebugOffsets keeps an offset that the table has too: its byte
 * position in the struct, and the table's value (a field of struct
 * py_layout, or a constant when field is -1).
 */
struct dbg_field {
	uint16_t pos;
	int16_t field;
	int32_t constant;
	const char *name;
};

#define F(pos, f) { pos, offsetof(struct py_layout, f), 0, #f }
#define C(pos, c, name) { pos, -1, c, name }

/* 3.13.0, read with gdb (`ptype /o struct _Py_DebugOffsets`, 584 bytes). */
static const struct dbg_field dbg313[] = {
	F(40, runtime_interp_head), F(64, interp_next), F(72, interp_threads_head),
	F(168, tstate_next), F(176, tstate_interp), F(184, tstate_frame),
	F(192, tstate_thread_id), F(200, tstate_native_tid),
	F(232, frame_back), F(240, frame_code), F(248, frame_lasti), F(264, frame_entry),
	F(280, code_filename), F(288, code_name), F(296, code_qualname), F(304, code_linetable),
	F(312, code_firstlineno), F(344, code_adaptive),
	C(360, PY_OB_TYPE, "ob_type"), C(376, PY_TYPE_TP_NAME, "tp_name"),
	C(520, PY_VAR_OB_SIZE, "bytes ob_size"), C(528, PY_BYTES_SVAL, "ob_sval"),
	F(544, str_state), C(552, 16, "unicode length"), F(560, str_ascii_size),
};

/*
 * 3.14.0, from its Include/internal/pycore_debug_offsets.h as py-spy's
 * bindgen of 3.14.0 has it (no build here): interpreter_state gained
 * threads_main, code_object_generation and tlbc_generation,
 * interpreter_frame stackpointer and tlbc_index, code_object co_tlbc;
 * type_object lost tp_repr; set_object came before dict_object.
 */
static const struct dbg_field dbg314[] = {
	F(40, runtime_interp_head), F(64, interp_next), F(72, interp_threads_head),
	F(192, tstate_next), F(200, tstate_interp), F(208, tstate_frame),
	F(216, tstate_thread_id), F(224, tstate_native_tid),
	F(256, frame_back), F(264, frame_code), F(272, frame_lasti), F(288, frame_entry),
	F(320, code_filename), F(328, code_name), F(336, code_qualname), F(344, code_linetable),
	F(352, code_firstlineno), F(384, code_adaptive),
	C(408, PY_OB_TYPE, "ob_type"), C(424, PY_TYPE_TP_NAME, "tp_name"),
	C(592, PY_VAR_OB_SIZE, "bytes ob_size"), C(600, PY_BYTES_SVAL, "ob_sval"),
	F(616, str_state), C(624, 16, "unicode length"), F(632, str_ascii_size),
};

/* The bytes of _Py_DebugOffsets read: up to the last field compared. */
#define DBG_READ 640

static int32_t table_value(const struct py_layout *l, const struct dbg_field *f)
{
	int32_t v;

	if (f->field < 0)
		return f->constant;
	memcpy(&v, (const char *)l + f->field, sizeof(v));
	return v;
}

static int check_debug_offsets(struct py_interp *pi, const struct py_mem *mem,
			       struct errmsg *why)
{
	const struct dbg_field *fields = pi->minor == 13 ? dbg313 : dbg314;
	size_t nr = pi->minor == 13 ? sizeof(dbg313) / sizeof(dbg313[0]) :
				      sizeof(dbg314) / sizeof(dbg314[0]);
	uint8_t buf[DBG_READ];
	uint64_t hex;
	int err;

	err = py_mem__read(mem, pi->runtime, buf, sizeof(buf));
	if (err)
		return err;
	if (memcmp(buf, DEBUG_COOKIE, 8)) {
		errmsg__set(why, "CPython %d.%d without _Py_DebugOffsets at _PyRuntime", pi->major,
			    pi->minor);
		return -ENOTSUP;
	}
	hex = py_u64(buf, 8);
	if ((int)(hex >> 24 & 0xff) != pi->major || (int)(hex >> 16 & 0xff) != pi->minor) {
		errmsg__set(why, "CPython %d.%d whose running runtime says %d.%d", pi->major,
			    pi->minor, (int)(hex >> 24 & 0xff), (int)(hex >> 16 & 0xff));
		return -ENOTSUP;
	}
	if (py_u64(buf, 16)) {
		errmsg__set(why, "CPython %d.%d: free-threaded build (its objects have other headers)",
			    pi->major, pi->minor);
		return -ENOTSUP;
	}
	pi->hexversion = (uint32_t)hex;
	pi->micro = hex >> 8 & 0xff;
	for (size_t i = 0; i < nr; i++) {
		int32_t want = table_value(pi->layout, &fields[i]);
		uint64_t got = py_u64(buf, fields[i].pos);

		if (want >= 0 && got != (uint64_t)want) {
			errmsg__set(why,
				    "CPython %d.%d.%d: %s is %llu in its debug offsets, %d in the table",
				    pi->major, pi->minor, pi->micro, fields[i].name,
				    (unsigned long long)got, want);
			return -ENOTSUP;
		}
	}
	return 0;
}

/* PyCode_Type's tp_name must read "code": the symbol, the bias and the memory agree. */
static int check_code_type(const struct py_interp *pi, const struct py_mem *mem,
			   struct errmsg *why)
{
	uint64_t name;
	char text[8];
	int err;

	err = py_read_u64(mem, pi->code_type + PY_TYPE_TP_NAME, &name);
	if (!err)
		err = py_mem__read(mem, name, text, 5);
	if (err == -EFAULT || (!err && memcmp(text, "code", 5))) {
		errmsg__set(why, "CPython %d.%d: PyCode_Type is not the code type in memory",
			    pi->major, pi->minor);
		return -ENOTSUP;
	}
	return err;
}

int py_interp__validate(struct py_interp *pi, const struct py_mem *mem, struct errmsg *why)
{
	int err;

	if (!pi->layout)
		return -EINVAL;
	if (pi->major == 3 && pi->minor >= 13 && pi->minor <= 14) {
		err = check_debug_offsets(pi, mem, why);
		if (err)
			return err;
	}
	return check_code_type(pi, mem, why);
}
