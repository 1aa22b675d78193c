/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where CPython keeps what a stack walk needs, per minor version (x86-64,
 * default GIL build, release ABI): byte offsets into its structs. Shared by
 * the in-kernel walk (bpf/python.bpf.c, which compiles one program per
 * layout with these as constants) and by user space (interp/python), which
 * finds the threads and names the code objects.
 *
 * Read with gdb from the DWARF of pyenv's builds 2.7.18, 3.6.15, 3.7.16,
 * 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 (`ptype /o`, checked
 * again by tests/unit/python against whatever builds the machine has);
 * 3.14 from its published headers (Include/internal/pycore_*.h of 3.14.0:
 * _PyStackRef code pointers, owner moved to 74), not run here. No field
 * moved inside a minor version from 3.8.0 on.
 *
 * Each layout is a set of macros with a common prefix (PY27_, PY36_, ...),
 * so that a program can be written once and stamped per layout by token
 * pasting, and user space can build its table from the same names.
 * -1 is "this version has no such field".
 */
#ifndef BPF_PYTHON_LAYOUTS_H
#define BPF_PYTHON_LAYOUTS_H

/* How a frame says where it is in its code. */
#define PY_LASTI_BYTE_OFFSET 0	/* int f_lasti: byte offset into co_code (<= 3.9) */
#define PY_LASTI_INSN_INDEX 1	/* int f_lasti: 2-byte code unit index (3.10) */
#define PY_LASTI_PREV_INSTR 2	/* pointer to the last executed unit (3.11, 3.12) */
#define PY_LASTI_INSTR_PTR 3	/* pointer to the unit about to run (3.13+) */

/* How a frame says a C call entered the eval loop there (3.11+). */
#define PY_ENTRY_NONE 0		/* <= 3.10: one eval loop call per Python frame */
#define PY_ENTRY_IS_ENTRY 1	/* bool is_entry: this frame was entered from C (3.11) */
/*
 * char owner >= 3: not a Python function's frame but the C stack's own
 * (a shim entry frame of 3.12/3.13, FRAME_OWNED_BY_CSTACK; in 3.14 the
 * entry frame is FRAME_OWNED_BY_INTERPRETER, also 3; test >= 3, not ==).
 */
#define PY_ENTRY_OWNER 2

/* How names are stored. */
#define PY_STR_BYTES 0		/* 2.7: PyStringObject, ob_sval at STR_DATA */
#define PY_STR_UNICODE 1	/* 3.3+: PEP 393 compact strings */

/* How code offsets map to lines. */
#define PY_LINES_LNOTAB 0	/* co_lnotab byte pairs (<= 3.9) */
#define PY_LINES_LINETABLE 1	/* co_linetable of 3.10 (Objects/lnotab_notes.txt) */
#define PY_LINES_LOCATIONS 2	/* co_linetable location table of 3.11+ (Objects/locations.md) */

/* Objects, all versions (x86-64). */
#define PY_OB_TYPE 8
#define PY_VAR_OB_SIZE 16
#define PY_TYPE_TP_NAME 24
#define PY_TYPE_TP_BASICSIZE 32
#define PY_BYTES_SVAL 32	/* 3.x PyBytesObject data */

/* ---- 2.7 ---- */
#define PY27_MAJOR 2
#define PY27_MINOR 7
#define PY27_RUNTIME_INTERP_HEAD -1	/* no _PyRuntime: interp_head (.symtab) or a thread's interp */
#define PY27_INTERP_NEXT 0
#define PY27_INTERP_THREADS_HEAD 8
#define PY27_TSTATE_NEXT 0
#define PY27_TSTATE_INTERP 8
#define PY27_TSTATE_FRAME 16
#define PY27_CFRAME_CURRENT -1
#define PY27_TSTATE_THREAD_ID 144
#define PY27_TSTATE_NATIVE_TID -1
#define PY27_FRAME_READ 128
#define PY27_FRAME_CODE 32
#define PY27_FRAME_BACK 24
#define PY27_FRAME_LASTI 120
#define PY27_LASTI_KIND PY_LASTI_BYTE_OFFSET
#define PY27_FRAME_ENTRY -1
#define PY27_ENTRY_KIND PY_ENTRY_NONE
#define PY27_CODE_TAG_BITS 0
#define PY27_CODE_FILENAME 80
#define PY27_CODE_NAME 88
#define PY27_CODE_QUALNAME -1
#define PY27_CODE_FIRSTLINENO 96
#define PY27_CODE_LINETABLE 104
#define PY27_CODE_VERSION -1
#define PY27_LINES_KIND PY_LINES_LNOTAB
#define PY27_CODE_CODE 32	/* co_code: a str object */
#define PY27_CODE_ADAPTIVE -1
#define PY27_STR_KIND PY_STR_BYTES
#define PY27_STR_DATA 36
#define PY27_STR_STATE -1
#define PY27_STR_ASCII_SIZE -1
#define PY27_STR_COMPACT_SIZE -1

/* ---- 3.6 ---- */
#define PY36_MAJOR 3
#define PY36_MINOR 6
#define PY36_RUNTIME_INTERP_HEAD -1	/* no _PyRuntime (3.7) */
#define PY36_INTERP_NEXT 0
#define PY36_INTERP_THREADS_HEAD 8
#define PY36_TSTATE_NEXT 8
#define PY36_TSTATE_INTERP 16
#define PY36_TSTATE_FRAME 24
#define PY36_CFRAME_CURRENT -1
#define PY36_TSTATE_THREAD_ID 152
#define PY36_TSTATE_NATIVE_TID -1
#define PY36_FRAME_READ 128
#define PY36_FRAME_CODE 32
#define PY36_FRAME_BACK 24
#define PY36_FRAME_LASTI 120
#define PY36_LASTI_KIND PY_LASTI_BYTE_OFFSET
#define PY36_FRAME_ENTRY -1
#define PY36_ENTRY_KIND PY_ENTRY_NONE
#define PY36_CODE_TAG_BITS 0
#define PY36_CODE_FILENAME 96
#define PY36_CODE_NAME 104
#define PY36_CODE_QUALNAME -1
#define PY36_CODE_FIRSTLINENO 36
#define PY36_CODE_LINETABLE 112
#define PY36_CODE_VERSION -1
#define PY36_LINES_KIND PY_LINES_LNOTAB
#define PY36_CODE_CODE 40
#define PY36_CODE_ADAPTIVE -1
#define PY36_STR_KIND PY_STR_UNICODE
#define PY36_STR_DATA -1
#define PY36_STR_STATE 32
#define PY36_STR_ASCII_SIZE 48
#define PY36_STR_COMPACT_SIZE 72

/* ---- 3.7 ---- */
#define PY37_MAJOR 3
#define PY37_MINOR 7
#define PY37_RUNTIME_INTERP_HEAD 24
#define PY37_INTERP_NEXT 0
#define PY37_INTERP_THREADS_HEAD 8
#define PY37_TSTATE_NEXT 8
#define PY37_TSTATE_INTERP 16
#define PY37_TSTATE_FRAME 24
#define PY37_CFRAME_CURRENT -1
#define PY37_TSTATE_THREAD_ID 176
#define PY37_TSTATE_NATIVE_TID -1
#define PY37_FRAME_READ 112
#define PY37_FRAME_CODE 32
#define PY37_FRAME_BACK 24
#define PY37_FRAME_LASTI 104
#define PY37_LASTI_KIND PY_LASTI_BYTE_OFFSET
#define PY37_FRAME_ENTRY -1
#define PY37_ENTRY_KIND PY_ENTRY_NONE
#define PY37_CODE_TAG_BITS 0
#define PY37_CODE_FILENAME 96
#define PY37_CODE_NAME 104
#define PY37_CODE_QUALNAME -1
#define PY37_CODE_FIRSTLINENO 36
#define PY37_CODE_LINETABLE 112
#define PY37_CODE_VERSION -1
#define PY37_LINES_KIND PY_LINES_LNOTAB
#define PY37_CODE_CODE 40
#define PY37_CODE_ADAPTIVE -1
#define PY37_STR_KIND PY_STR_UNICODE
#define PY37_STR_DATA -1
#define PY37_STR_STATE 32
#define PY37_STR_ASCII_SIZE 48
#define PY37_STR_COMPACT_SIZE 72

/* ---- 3.8 and 3.9 (the same walk; 3.9 moved only runtime fields no walk reads) ---- */
#define PY38_MAJOR 3
#define PY38_MINOR 8
#define PY38_RUNTIME_INTERP_HEAD 32
#define PY38_INTERP_NEXT 0
#define PY38_INTERP_THREADS_HEAD 8
#define PY38_TSTATE_NEXT 8
#define PY38_TSTATE_INTERP 16
#define PY38_TSTATE_FRAME 24
#define PY38_CFRAME_CURRENT -1
#define PY38_TSTATE_THREAD_ID 176
#define PY38_TSTATE_NATIVE_TID -1
#define PY38_FRAME_READ 112
#define PY38_FRAME_CODE 32
#define PY38_FRAME_BACK 24
#define PY38_FRAME_LASTI 104
#define PY38_LASTI_KIND PY_LASTI_BYTE_OFFSET
#define PY38_FRAME_ENTRY -1
#define PY38_ENTRY_KIND PY_ENTRY_NONE
#define PY38_CODE_TAG_BITS 0
#define PY38_CODE_FILENAME 104
#define PY38_CODE_NAME 112
#define PY38_CODE_QUALNAME -1
#define PY38_CODE_FIRSTLINENO 40
#define PY38_CODE_LINETABLE 120
#define PY38_CODE_VERSION -1
#define PY38_LINES_KIND PY_LINES_LNOTAB
#define PY38_CODE_CODE 48
#define PY38_CODE_ADAPTIVE -1
#define PY38_STR_KIND PY_STR_UNICODE
#define PY38_STR_DATA -1
#define PY38_STR_STATE 32
#define PY38_STR_ASCII_SIZE 48
#define PY38_STR_COMPACT_SIZE 72

/* ---- 3.10 ---- */
#define PY310_MAJOR 3
#define PY310_MINOR 10
#define PY310_RUNTIME_INTERP_HEAD 32
#define PY310_INTERP_NEXT 0
#define PY310_INTERP_THREADS_HEAD 8
#define PY310_TSTATE_NEXT 8
#define PY310_TSTATE_INTERP 16
#define PY310_TSTATE_FRAME 24
#define PY310_CFRAME_CURRENT -1
#define PY310_TSTATE_THREAD_ID 176
#define PY310_TSTATE_NATIVE_TID -1
#define PY310_FRAME_READ 104
#define PY310_FRAME_CODE 32
#define PY310_FRAME_BACK 24
#define PY310_FRAME_LASTI 96
#define PY310_LASTI_KIND PY_LASTI_INSN_INDEX
#define PY310_FRAME_ENTRY -1
#define PY310_ENTRY_KIND PY_ENTRY_NONE
#define PY310_CODE_TAG_BITS 0
#define PY310_CODE_FILENAME 104
#define PY310_CODE_NAME 112
#define PY310_CODE_QUALNAME -1
#define PY310_CODE_FIRSTLINENO 40
#define PY310_CODE_LINETABLE 120
#define PY310_CODE_VERSION -1
#define PY310_LINES_KIND PY_LINES_LINETABLE
#define PY310_CODE_CODE 48
#define PY310_CODE_ADAPTIVE -1
#define PY310_STR_KIND PY_STR_UNICODE
#define PY310_STR_DATA -1
#define PY310_STR_STATE 32
#define PY310_STR_ASCII_SIZE 48
#define PY310_STR_COMPACT_SIZE 72

/* ---- 3.11 ---- */
#define PY311_MAJOR 3
#define PY311_MINOR 11
#define PY311_RUNTIME_INTERP_HEAD 40
#define PY311_INTERP_NEXT 0
#define PY311_INTERP_THREADS_HEAD 16
#define PY311_TSTATE_NEXT 8
#define PY311_TSTATE_INTERP 16
#define PY311_TSTATE_FRAME 56	/* cframe */
#define PY311_CFRAME_CURRENT 8	/* cframe->current_frame */
#define PY311_TSTATE_THREAD_ID 152
#define PY311_TSTATE_NATIVE_TID 160
#define PY311_FRAME_READ 72
#define PY311_FRAME_CODE 32
#define PY311_FRAME_BACK 48
#define PY311_FRAME_LASTI 56
#define PY311_LASTI_KIND PY_LASTI_PREV_INSTR
#define PY311_FRAME_ENTRY 68
#define PY311_ENTRY_KIND PY_ENTRY_IS_ENTRY
#define PY311_CODE_TAG_BITS 0
#define PY311_CODE_FILENAME 112
#define PY311_CODE_NAME 120
#define PY311_CODE_QUALNAME 128
#define PY311_CODE_FIRSTLINENO 72
#define PY311_CODE_LINETABLE 136
#define PY311_CODE_VERSION -1
#define PY311_LINES_KIND PY_LINES_LOCATIONS
#define PY311_CODE_CODE -1
#define PY311_CODE_ADAPTIVE 184
#define PY311_STR_KIND PY_STR_UNICODE
#define PY311_STR_DATA -1
#define PY311_STR_STATE 32
#define PY311_STR_ASCII_SIZE 48
#define PY311_STR_COMPACT_SIZE 72

/* ---- 3.12 ---- */
#define PY312_MAJOR 3
#define PY312_MINOR 12
#define PY312_RUNTIME_INTERP_HEAD 40
#define PY312_INTERP_NEXT 0
#define PY312_INTERP_THREADS_HEAD 72
#define PY312_TSTATE_NEXT 8
#define PY312_TSTATE_INTERP 16
#define PY312_TSTATE_FRAME 56	/* cframe */
#define PY312_CFRAME_CURRENT 0
#define PY312_TSTATE_THREAD_ID 136
#define PY312_TSTATE_NATIVE_TID 144
#define PY312_FRAME_READ 72
#define PY312_FRAME_CODE 0
#define PY312_FRAME_BACK 8
#define PY312_FRAME_LASTI 56
#define PY312_LASTI_KIND PY_LASTI_PREV_INSTR
#define PY312_FRAME_ENTRY 70
#define PY312_ENTRY_KIND PY_ENTRY_OWNER
#define PY312_CODE_TAG_BITS 0
#define PY312_CODE_FILENAME 112
#define PY312_CODE_NAME 120
#define PY312_CODE_QUALNAME 128
#define PY312_CODE_FIRSTLINENO 68
#define PY312_CODE_LINETABLE 136
#define PY312_CODE_VERSION 92	/* co_version: a counter, one value per code object made */
#define PY312_LINES_KIND PY_LINES_LOCATIONS
#define PY312_CODE_CODE -1
#define PY312_CODE_ADAPTIVE 192
#define PY312_STR_KIND PY_STR_UNICODE
#define PY312_STR_DATA -1
#define PY312_STR_STATE 32
#define PY312_STR_ASCII_SIZE 40
#define PY312_STR_COMPACT_SIZE 56

/* ---- 3.13 (_PyRuntime begins with _Py_DebugOffsets: checked against it) ---- */
#define PY313_MAJOR 3
#define PY313_MINOR 13
#define PY313_RUNTIME_INTERP_HEAD 632
#define PY313_INTERP_NEXT 7264
#define PY313_INTERP_THREADS_HEAD 7344
#define PY313_TSTATE_NEXT 8
#define PY313_TSTATE_INTERP 16
#define PY313_TSTATE_FRAME 72	/* current_frame */
#define PY313_CFRAME_CURRENT -1
#define PY313_TSTATE_THREAD_ID 152
#define PY313_TSTATE_NATIVE_TID 160
#define PY313_FRAME_READ 72
#define PY313_FRAME_CODE 0	/* f_executable: a code object, or None in a shim */
#define PY313_FRAME_BACK 8
#define PY313_FRAME_LASTI 56
#define PY313_LASTI_KIND PY_LASTI_INSTR_PTR
#define PY313_FRAME_ENTRY 70
#define PY313_ENTRY_KIND PY_ENTRY_OWNER
#define PY313_CODE_TAG_BITS 0
#define PY313_CODE_FILENAME 112
#define PY313_CODE_NAME 120
#define PY313_CODE_QUALNAME 128
#define PY313_CODE_FIRSTLINENO 68
#define PY313_CODE_LINETABLE 136
#define PY313_CODE_VERSION 92
#define PY313_LINES_KIND PY_LINES_LOCATIONS
#define PY313_CODE_CODE -1
#define PY313_CODE_ADAPTIVE 200
#define PY313_STR_KIND PY_STR_UNICODE
#define PY313_STR_DATA -1
#define PY313_STR_STATE 32
#define PY313_STR_ASCII_SIZE 40
#define PY313_STR_COMPACT_SIZE 56

/* ---- 3.14 (from its headers; no build here) ---- */
#define PY314_MAJOR 3
#define PY314_MINOR 14
#define PY314_RUNTIME_INTERP_HEAD 808
#define PY314_INTERP_NEXT -1	/* not known here: the main interpreter only */
#define PY314_INTERP_THREADS_HEAD 7344
#define PY314_TSTATE_NEXT 8
#define PY314_TSTATE_INTERP 16
#define PY314_TSTATE_FRAME 72
#define PY314_CFRAME_CURRENT -1
#define PY314_TSTATE_THREAD_ID 152
#define PY314_TSTATE_NATIVE_TID 160
#define PY314_FRAME_READ 80
#define PY314_FRAME_CODE 0	/* f_executable: a _PyStackRef, tag in the low bits */
#define PY314_FRAME_BACK 8
#define PY314_FRAME_LASTI 56
#define PY314_LASTI_KIND PY_LASTI_INSTR_PTR
#define PY314_FRAME_ENTRY 74
#define PY314_ENTRY_KIND PY_ENTRY_OWNER
#define PY314_CODE_TAG_BITS 7
#define PY314_CODE_FILENAME 112
#define PY314_CODE_NAME 120
#define PY314_CODE_QUALNAME 128
#define PY314_CODE_FIRSTLINENO 68
#define PY314_CODE_LINETABLE 136
#define PY314_CODE_VERSION 92
#define PY314_LINES_KIND PY_LINES_LOCATIONS
#define PY314_CODE_CODE -1
#define PY314_CODE_ADAPTIVE 208
#define PY314_STR_KIND PY_STR_UNICODE
#define PY314_STR_DATA -1
#define PY314_STR_STATE 32
#define PY314_STR_ASCII_SIZE 40
#define PY314_STR_COMPACT_SIZE 56

/*
 * The layouts in the order of their ids (PY_LAYOUT_*), each X(prefix):
 * the in-kernel walk's prog array and user space's table follow it.
 */
#define PY_LAYOUTS(X) X(PY27) X(PY36) X(PY37) X(PY38) X(PY310) X(PY311) X(PY312) X(PY313) X(PY314)

enum py_layout_id {
	PY_LAYOUT_NONE = 0,
#define PY_LAYOUT_ENUM(P) PY_LAYOUT_##P,
	PY_LAYOUTS(PY_LAYOUT_ENUM)
#undef PY_LAYOUT_ENUM
	PY_NR_LAYOUTS,
};

#endif
