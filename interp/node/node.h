/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Node.js seen from outside: whether a mapped file is a Node.js binary (the
 * node executable or libnode.so), its Node and V8 versions, and the layout
 * of V8's frames and heap objects that a frame walker needs, read from the
 * v8dbg_* constants the binary exports (V8's postmortem metadata, which
 * llnode and the OpenTelemetry profiler read too).
 *
 * The file is its owner's: every symbol, size, offset and string read from
 * it is bounded, and what it says describes only that file. x86-64, builds
 * without pointer compression (Node's own: TaggedSize 8).
 *
 * Functions return 0 (or a count) on success, -errno on failure.
 */
#ifndef INTERP_NODE_NODE_H
#define INTERP_NODE_NODE_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/lib/log.h"

/*
 * Every value of the layout, in the order of the table in layout.c (which
 * says which v8dbg_ names give each, and how a missing one is derived).
 * Offsets are in bytes from the start of an object (add the untagged
 * pointer: tagged - heap_object_tag), or from a frame's fp; types are
 * instance types (Map::instance_type); frame types are StackFrame::Type,
 * which a frame's marker slot holds as type << smi_value_shift.
 */
#define NODE_V8_FIELDS(X)                                                                   \
	/* tagging of values: a Smi's value is tagged >> (smi_value_shift + smi_shift_size) */   \
	X(heap_object_tag) X(heap_object_tag_mask) X(smi_tag) X(smi_tag_mask)                  \
	X(smi_shift_size) X(smi_value_shift) X(pointer_size) X(tagged_size)                     \
	/* a JavaScript frame, from its fp */                                                   \
	X(fp_function) X(fp_context) X(fp_marker) X(fp_bytecode_array) X(fp_bytecode_offset)   \
	X(fp_args)                                                                              \
	/* StackFrame::Type of the frames a walker tells apart */                               \
	X(ft_entry) X(ft_construct_entry) X(ft_exit) X(ft_interpreted) X(ft_baseline)           \
	X(ft_maglev) X(ft_turbofan) X(ft_stub) X(ft_builtin) X(ft_builtin_exit) X(ft_internal) \
	X(ft_construct) X(ft_native)                                                            \
	/* strings: instance type bits */                                                       \
	X(first_nonstring_type) X(string_repr_mask) X(string_encoding_mask) X(seq_string_tag)  \
	X(cons_string_tag) X(sliced_string_tag) X(thin_string_tag) X(external_string_tag)      \
	X(one_byte_string_tag) X(two_byte_string_tag)                                           \
	/* instance types of the objects a walk meets */                                        \
	X(type_js_function) X(first_js_function_type) X(last_js_function_type)                  \
	X(type_shared_function_info) X(type_script) X(type_code) X(type_bytecode_array)         \
	X(type_scope_info) X(type_fixed_array) X(type_byte_array) X(type_trusted_byte_array)    \
	X(type_instruction_stream) X(type_code_wrapper) X(type_sfi_wrapper)                     \
	X(type_interpreter_data)                                                                \
	/* fields */                                                                            \
	X(heap_object_map) X(map_instance_type) X(fixed_array_length) X(fixed_array_data)      \
	X(string_length) X(seq_one_byte_chars) X(seq_two_byte_chars) X(cons_first)             \
	X(cons_second) X(thin_actual) X(sliced_parent) X(sliced_offset)                         \
	X(jsfunction_shared) X(jsfunction_code) X(jsfunction_dispatch_handle)                   \
	X(sfi_name_or_scope_info) X(sfi_function_data)                                          \
	X(sfi_script) X(script_name) X(script_source) X(script_line_ends)                       \
	X(bytecode_array_length) X(bytecode_array_data) X(bytecode_array_source_positions)      \
	X(code_instruction_start) X(code_instruction_size) X(code_flags)                        \
	X(code_source_positions) X(code_deopt_data)                                             \
	X(code_kind_mask) X(code_kind_shift) X(code_kind_baseline) X(code_kind_interpreted)     \
	X(scope_info_first_vars) X(scope_info_ncontext_locals) X(scope_info_nparams)           \
	X(deopt_inlined_count) X(deopt_literal_array) X(deopt_sfi) X(deopt_inlining_positions)

enum node_v8_field {
#define NODE_X_ENUM(f) NODE_V8_##f,
	NODE_V8_FIELDS(NODE_X_ENUM)
#undef NODE_X_ENUM
	NODE_V8_NR_FIELDS
};

/* Where a value came from: -v names those derived, fixed or missing. */
enum node_src {
	NODE_SRC_MISSING,	/* not in the binary, no rule for its V8: value 0 */
	NODE_SRC_CONST,		/* a v8dbg_ constant of the binary */
	NODE_SRC_DERIVED,	/* computed from other constants by a rule for this V8 */
	NODE_SRC_FIXED,		/* a value V8 has kept for the versions known (no constant) */
};

struct node_v8_layout {
#define NODE_X_MEMBER(f) int32_t f;
	NODE_V8_FIELDS(NODE_X_MEMBER)
#undef NODE_X_MEMBER
	uint8_t src[NODE_V8_NR_FIELDS];	/* enum node_src of each */
	/*
	 * Where code's instructions are: true (V8 before 11: Node 18), at the
	 * Code object + code_instruction_start (its header size); false, at the
	 * address held in the field at code_instruction_start.
	 */
	bool code_inline;
	/* v8dbg_DeoptimizationDataWrappedSharedFunctionInfoIndex (V8 13+): deopt_sfi holds a wrapper. */
	bool deopt_sfi_wrapped;
};

/* A field's name ("jsfunction_code"), or NULL. */
const char *node_v8_field__name(unsigned int field);
/* The v8dbg_ name a field is read from first, without "v8dbg_" ("off_fp_function"), or NULL. */
const char *node_v8_field__symbol(unsigned int field);
/* Whether a walker cannot do without the field (a layout missing it is refused). */
bool node_v8_field__required(unsigned int field);

/* A Node.js binary found in a mapped file. */
struct node_interp {
	int node_major, node_minor, node_patch;	/* -1: .rodata does not say (or disagrees) */
	int v8_major, v8_minor, v8_build, v8_patch;
	bool shared;			/* libnode.so (DT_SONAME), not an executable */
	bool symtab_used;		/* some constants came from .symtab, not .dynsym */
	uint64_t bias;			/* process address = ELF vaddr + bias */
	unsigned int nr_consts;		/* v8dbg_ constants the binary has */
	struct node_v8_layout v8;
};

/*
 * Whether the file open as fd, mapped with load bias bias, is Node.js:
 * 1 with *ni filled, 0 if it is not Node, -ENOTSUP (a Node whose layout
 * cannot be read; why says which version and what it lacks), or -errno.
 * fd stays open and where it was.
 */
int node_detect(int fd, uint64_t bias, struct node_interp *ni, struct errmsg *why);
/* The same over an open ELF (the fuzz target's bytes). */
int node_detect_elf(Elf *elf, uint64_t bias, struct node_interp *ni, struct errmsg *why);

/*
 * The fields of l that are not constants of the binary, by source, as
 * "derived: jsfunction_code code_flags; missing: ..." into buf (for -vv).
 * Returns how many there are.
 */
size_t node_v8_layout__not_const(const struct node_v8_layout *l, char *buf, size_t len);

/* ---- Memory of a process ------------------------------------------------ */

/* Longest single read: longer ones fail with -E2BIG. */
#define NODE_MEM_MAX_READ (256 * 1024)

/*
 * Reads len bytes at addr of one address space into buf: 0, or -EFAULT
 * (not all mapped), -ESRCH (gone), -EPERM, -E2BIG. The same contract and
 * shape as interp/python's struct py_mem, so its readers (a process's
 * /proc/PID/mem handle, images of address ranges, page snapshots) serve
 * here unchanged: { pm.mem.read, pm.mem.ctx }.
 */
struct node_mem {
	int (*read)(void *ctx, uint64_t addr, void *buf, size_t len);
	void *ctx;
};

/* Reads through mem after the checks every read shares (length, page 0, wrap-around). */
int node_mem__read(const struct node_mem *mem, uint64_t addr, void *buf, size_t len);

/* ---- Frames: V8's frame-pointer chain ------------------------------------- */

#define NODE_MAX_FRAMES 128

/* What code a frame runs. */
enum node_code_kind {
	NODE_CODE_TYPED,	/* a typed V8 frame (entry, exit, stub...): frame_type says which */
	NODE_CODE_INTERPRETED,	/* Ignition: offset is the bytecode offset */
	NODE_CODE_BASELINE,	/* Sparkplug: no offset (pc -> bytecode offset not read) */
	NODE_CODE_MAGLEV,	/* pc in the function's Maglev code: offset from its start */
	NODE_CODE_TURBOFAN,	/* pc in the function's TurboFan code: offset from its start */
	NODE_CODE_OPTIMIZED,	/* compiled code not found from the function (deoptimized since,
				 * OSR, a builtin, V8 13's dispatch table): no offset */
};

/* One V8 frame, as the walk met it. */
struct node_frame {
	uint64_t fp;		/* the frame's frame pointer */
	uint64_t pc;		/* where it ran: the sample's ip (first frame) or the return
				 * address its callee saved at callee fp + 8 */
	uint64_t ret;		/* its own return address (fp + 8): where its caller resumes */
	uint64_t function;	/* tagged JSFunction (fp + fp_function); 0 for typed frames */
	uint64_t sfi;		/* tagged SharedFunctionInfo; 0 when it did not read as one */
	uint64_t code;		/* tagged BytecodeArray (interpreted, baseline) or Code (maglev,
				 * turbofan) the offset is in; else 0. A record may drop it:
				 * interpreted frames are then named through the SFI's bytecode */
	uint64_t ident;		/* the SharedFunctionInfo's identity (node_sfi_ident); 0 unknown */
	int32_t offset;		/* bytecode offset, or pc offset in code (of the call: a return
				 * address - 1), -1 when not known */
	uint8_t kind;		/* enum node_code_kind */
	uint8_t frame_type;	/* StackFrame::Type of a typed frame */
};

/* node_stack.status */
#define NODE_WALK_TRUNCATED 1	/* NODE_MAX_FRAMES frames: more were not walked */
#define NODE_WALK_FAULT 2	/* a frame's slot or object could not be read: the walk ended there */
#define NODE_WALK_LEFT_STACK 4	/* the chain left the stack copy (or went down): ended there */

/* The V8 frames of one sample, leaf first. Native frames between them are not in it. */
struct node_stack {
	uint32_t nr_frames;
	uint32_t status;
	uint32_t native_frames;	/* frames of the chain that were not V8's (C++ with fp) */
	struct node_frame frames[NODE_MAX_FRAMES];
};

/* A sample's user registers and its copy of the thread's stack from sp up. */
struct node_regs {
	uint64_t ip, sp, bp;
	const void *stack;
	size_t stack_size;
};

/*
 * Follows the frame-pointer chain from r->bp through the stack copy (every
 * slot read from it, bounds-checked: a chain leaving it ends the walk) and
 * classifies each frame by the layout: a typed frame's marker (type << 1
 * at fp + fp_marker, a frame type the layout knows), a JavaScript frame's
 * JSFunction at fp + fp_function (its map's instance type in the
 * JSFunction range, read through heap), its BytecodeArray and offset
 * (interpreted: a Smi; baseline: not), else compiled code; anything else is
 * a native frame, counted and left to the native unwinder. At most
 * NODE_MAX_FRAMES V8 frames, leaf first. 0 (status says how it ended), or
 * -EINVAL for a layout or registers that cannot be walked.
 */
int node_walk(const struct node_v8_layout *l, const struct node_regs *r,
	      const struct node_mem *heap, struct node_stack *st);

/*
 * The identity of a SharedFunctionInfo (tagged sfi): a word made of what
 * names it (its name-or-ScopeInfo and script slots), never 0; 0 when sfi is
 * not a SharedFunctionInfo. The walk stores it; the namer names a frame
 * only when the object read later still has it.
 */
uint64_t node_sfi_ident(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t sfi);

/* ---- Names ---------------------------------------------------------------- */

#define NODE_NAME_MAX 1024		/* bytes of a function name kept */
#define NODE_PATH_MAX 4096		/* bytes of a file name kept */
#define NODE_SOURCE_MAX (16u << 20)	/* code units of a script's source scanned for lines */

struct node_fn_info {
	char name[NODE_NAME_MAX];	/* valid UTF-8 (control characters kept: the output escapes);
					 * "<anonymous>" when V8's is empty */
	char file[NODE_PATH_MAX];	/* Script::name, "" when the function has none (builtins) */
	int line;			/* of the frame's position; 0 when not known */
	int first_line;			/* where the function starts; 0 when not known */
};

/*
 * Names a JavaScript frame of node_walk from the process's memory: the
 * SharedFunctionInfo is read again and must still be one with the frame's
 * identity (else -ESTALE); its name (a String, or the function name of its
 * ScopeInfo), its Script's name, the line of the frame's position
 * (interpreted: the bytecode offset through the BytecodeArray's source
 * position table; turbofan/maglev: the pc offset through its Code's, when
 * not inlined) through the Script's line ends or its source. 0, -EINVAL for
 * a typed frame or one without a SharedFunctionInfo, -ESTALE, or the
 * reader's error.
 */
int node_name_frame(const struct node_v8_layout *l, const struct node_mem *mem,
		    const struct node_frame *f, struct node_fn_info *out);

#endif
