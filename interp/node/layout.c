// SPDX-License-Identifier: GPL-2.0
/*
 * V8's layout from a Node binary's v8dbg_ constants. V8 generates them
 * (tools/gen-postmortem-metadata.py) by reading its own sources, and each
 * release loses a few to refactors the script does not follow: Node 20
 * has no JSFunction::code, Node 22 and 24 no Code::source_position_table,
 * none has BytecodeArray::source_position_table (README.md has the table).
 * What is missing is derived from neighbouring constants by rules checked
 * against the versions that do export it, only for the V8 versions the
 * rule was checked on: a newer V8 without a constant is refused with its
 * name rather than read with a guess.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "interp/node/nodeint.h"

/* What a value is, for its sanity bounds: a file may say anything. */
enum kind {
	K_VAL,		/* a small number: tags, masks, shifts, sizes, indexes */
	K_FP,		/* an offset from fp: a multiple of 8 near it */
	K_TYPE,		/* an instance type or frame type: 16 bits */
	K_OFF,		/* an offset into an object */
};

struct field_desc {
	const char *names[4];	/* v8dbg_ names (without the prefix), by release, newest last */
	uint8_t kind;
	bool required;		/* the walker needs it to name a frame's function, file and line */
};

#define R true
#define O false
static const struct field_desc fields[NODE_V8_NR_FIELDS] = {
	[NODE_V8_heap_object_tag] = { { "HeapObjectTag" }, K_VAL, R },
	[NODE_V8_heap_object_tag_mask] = { { "HeapObjectTagMask" }, K_VAL, R },
	[NODE_V8_smi_tag] = { { "SmiTag" }, K_VAL, R },
	[NODE_V8_smi_tag_mask] = { { "SmiTagMask" }, K_VAL, R },
	[NODE_V8_smi_shift_size] = { { "SmiShiftSize" }, K_VAL, R },
	[NODE_V8_smi_value_shift] = { { "SmiValueShift" }, K_VAL, R },
	[NODE_V8_pointer_size] = { { "SystemPointerSize" }, K_VAL, R },
	[NODE_V8_tagged_size] = { { "TaggedSize" }, K_VAL, R },
	[NODE_V8_fp_function] = { { "off_fp_function" }, K_FP, R },
	[NODE_V8_fp_context] = { { "off_fp_context" }, K_FP, R },
	[NODE_V8_fp_marker] = { { "off_fp_context_or_frame_type" }, K_FP, R },
	[NODE_V8_fp_bytecode_array] = { { "off_fp_bytecode_array" }, K_FP, R },
	[NODE_V8_fp_bytecode_offset] = { { "off_fp_bytecode_offset" }, K_FP, R },
	[NODE_V8_fp_args] = { { "off_fp_args" }, K_FP, O },
	[NODE_V8_ft_entry] = { { "frametype_EntryFrame" }, K_TYPE, R },
	[NODE_V8_ft_construct_entry] = { { "frametype_ConstructEntryFrame" }, K_TYPE, R },
	[NODE_V8_ft_exit] = { { "frametype_ExitFrame" }, K_TYPE, R },
	[NODE_V8_ft_interpreted] = { { "frametype_InterpretedFrame" }, K_TYPE, R },
	[NODE_V8_ft_baseline] = { { "frametype_BaselineFrame" }, K_TYPE, R },
	/* Maglev came with V8 10.8 (Node 20): Node 18 has no such frames. */
	[NODE_V8_ft_maglev] = { { "frametype_MaglevFrame" }, K_TYPE, O },
	[NODE_V8_ft_turbofan] = { { "frametype_OptimizedFrame", "frametype_TurbofanFrame",
				    "frametype_TurbofanJSFrame" }, K_TYPE, R },
	[NODE_V8_ft_stub] = { { "frametype_StubFrame" }, K_TYPE, R },
	[NODE_V8_ft_builtin] = { { "frametype_BuiltinFrame" }, K_TYPE, R },
	[NODE_V8_ft_builtin_exit] = { { "frametype_BuiltinExitFrame" }, K_TYPE, R },
	[NODE_V8_ft_internal] = { { "frametype_InternalFrame" }, K_TYPE, R },
	[NODE_V8_ft_construct] = { { "frametype_ConstructFrame" }, K_TYPE, R },
	[NODE_V8_ft_native] = { { "frametype_NativeFrame" }, K_TYPE, O },
	[NODE_V8_first_nonstring_type] = { { "FirstNonstringType" }, K_TYPE, R },
	[NODE_V8_string_repr_mask] = { { "StringRepresentationMask" }, K_VAL, R },
	[NODE_V8_string_encoding_mask] = { { "StringEncodingMask" }, K_VAL, R },
	[NODE_V8_seq_string_tag] = { { "SeqStringTag" }, K_VAL, R },
	[NODE_V8_cons_string_tag] = { { "ConsStringTag" }, K_VAL, R },
	[NODE_V8_sliced_string_tag] = { { "SlicedStringTag" }, K_VAL, R },
	[NODE_V8_thin_string_tag] = { { "ThinStringTag" }, K_VAL, R },
	[NODE_V8_external_string_tag] = { { "ExternalStringTag" }, K_VAL, O },
	[NODE_V8_one_byte_string_tag] = { { "OneByteStringTag" }, K_VAL, R },
	[NODE_V8_two_byte_string_tag] = { { "TwoByteStringTag" }, K_VAL, R },
	[NODE_V8_type_js_function] = { { "type_JSFunction__JS_FUNCTION_TYPE" }, K_TYPE, R },
	[NODE_V8_first_js_function_type] = { { "FirstJSFunctionType" }, K_TYPE, R },
	[NODE_V8_last_js_function_type] = { { "LastJSFunctionType" }, K_TYPE, R },
	[NODE_V8_type_shared_function_info] = {
		{ "type_SharedFunctionInfo__SHARED_FUNCTION_INFO_TYPE" }, K_TYPE, R },
	[NODE_V8_type_script] = { { "type_Script__SCRIPT_TYPE" }, K_TYPE, R },
	[NODE_V8_type_code] = { { "type_Code__CODE_TYPE" }, K_TYPE, R },
	[NODE_V8_type_bytecode_array] = { { "type_BytecodeArray__BYTECODE_ARRAY_TYPE" }, K_TYPE, R },
	[NODE_V8_type_scope_info] = { { "type_ScopeInfo__SCOPE_INFO_TYPE" }, K_TYPE, R },
	[NODE_V8_type_fixed_array] = { { "type_FixedArray__FIXED_ARRAY_TYPE" }, K_TYPE, R },
	[NODE_V8_type_byte_array] = { { "type_ByteArray__BYTE_ARRAY_TYPE" }, K_TYPE, R },
	/* Trusted space (V8 12.3+): source position tables moved there. */
	[NODE_V8_type_trusted_byte_array] = {
		{ "type_TrustedByteArray__TRUSTED_BYTE_ARRAY_TYPE" }, K_TYPE, O },
	[NODE_V8_type_instruction_stream] = {
		{ "type_InstructionStream__INSTRUCTION_STREAM_TYPE" }, K_TYPE, O },
	[NODE_V8_type_code_wrapper] = { { "type_CodeWrapper__CODE_WRAPPER_TYPE" }, K_TYPE, O },
	[NODE_V8_type_sfi_wrapper] = {
		{ "type_SharedFunctionInfoWrapper__SHARED_FUNCTION_INFO_WRAPPER_TYPE" }, K_TYPE, O },
	[NODE_V8_type_interpreter_data] = {
		{ "type_InterpreterData__INTERPRETER_DATA_TYPE" }, K_TYPE, O },
	[NODE_V8_heap_object_map] = { { "class_HeapObject__map__Map" }, K_OFF, R },
	[NODE_V8_map_instance_type] = { { "class_Map__instance_type__uint16_t" }, K_OFF, R },
	[NODE_V8_fixed_array_length] = { { "class_FixedArrayBase__length__SMI" }, K_OFF, R },
	[NODE_V8_fixed_array_data] = { { "class_FixedArray__data__uintptr_t" }, K_OFF, R },
	[NODE_V8_string_length] = { { "class_String__length__int32_t" }, K_OFF, R },
	[NODE_V8_seq_one_byte_chars] = { { "class_SeqOneByteString__chars__char" }, K_OFF, R },
	[NODE_V8_seq_two_byte_chars] = { { "class_SeqTwoByteString__chars__char" }, K_OFF, R },
	[NODE_V8_cons_first] = { { "class_ConsString__first__String" }, K_OFF, R },
	[NODE_V8_cons_second] = { { "class_ConsString__second__String" }, K_OFF, R },
	[NODE_V8_thin_actual] = { { "class_ThinString__actual__String" }, K_OFF, R },
	[NODE_V8_sliced_parent] = { { "class_SlicedString__parent__String" }, K_OFF, R },
	[NODE_V8_sliced_offset] = { { "class_SlicedString__offset__SMI" }, K_OFF, R },
	[NODE_V8_jsfunction_shared] = { { "class_JSFunction__shared__SharedFunctionInfo",
					  "class_JSFunction__shared__Tagged_SharedFunctionInfo_" },
					K_OFF, R },
	[NODE_V8_jsfunction_code] = { { "class_JSFunction__code__CodeT", "class_JSFunction__code__Code",
					"class_JSFunction__code__Tagged_Code_" }, K_OFF, O },
	/* V8 13 (leaptiering): a JSFunction holds a JSDispatchTable handle, not its code. */
	[NODE_V8_jsfunction_dispatch_handle] = { { "class_JSFunction__dispatch_handle__JSDispatchHandle" },
						 K_OFF, O },
	[NODE_V8_sfi_name_or_scope_info] = {
		{ "class_SharedFunctionInfo__name_or_scope_info__Object",
		  "class_SharedFunctionInfo__name_or_scope_info__Tagged_Object_",
		  "class_SharedFunctionInfo__name_or_scope_info__Tagged_NameOrScopeInfoT_" }, K_OFF, R },
	[NODE_V8_sfi_function_data] = { { "class_SharedFunctionInfo__function_data__Object",
					  "class_SharedFunctionInfo__function_data__Tagged_Object_" },
					K_OFF, O },
	[NODE_V8_sfi_script] = { { "class_SharedFunctionInfo__script_or_debug_info__HeapObject",
				   "class_SharedFunctionInfo__script_or_debug_info__Object",
				   "class_SharedFunctionInfo__script__Tagged_HeapObject_",
				   "class_SharedFunctionInfo__raw_script__Tagged_Object_" }, K_OFF, R },
	[NODE_V8_script_name] = { { "class_Script__name__Object", "class_Script__name__Tagged_Object_" },
				  K_OFF, R },
	[NODE_V8_script_source] = { { "class_Script__source__Object",
				      "class_Script__source__Tagged_Object_" }, K_OFF, O },
	[NODE_V8_script_line_ends] = { { "class_Script__line_ends__Object",
					 "class_Script__line_ends__Tagged_Object_" }, K_OFF, R },
	[NODE_V8_bytecode_array_length] = { { "class_BytecodeArray__length__SMI" }, K_OFF, R },
	[NODE_V8_bytecode_array_data] = { { "class_BytecodeArray__data__uintptr_t" }, K_OFF, R },
	[NODE_V8_bytecode_array_source_positions] = {
		{ "class_BytecodeArray__source_position_table__Object",
		  "class_BytecodeArray__source_position_table__Tagged_HeapObject_" }, K_OFF, R },
	[NODE_V8_code_instruction_start] = { { "class_Code__instruction_start__uintptr_t",
					       "class_Code__instruction_start__Address" }, K_OFF, R },
	[NODE_V8_code_instruction_size] = { { "class_Code__instruction_size__int" }, K_OFF, R },
	[NODE_V8_code_flags] = { { "class_Code__flags__uint32_t" }, K_OFF, R },
	[NODE_V8_code_source_positions] = { { "class_Code__source_position_table__ByteArray",
					      "class_Code__source_position_table__Tagged_ByteArray_" },
					    K_OFF, R },
	[NODE_V8_code_deopt_data] = { { "class_Code__deoptimization_data__FixedArray",
					"class_Code__deoptimization_data__Tagged_FixedArray_" },
				      K_OFF, O },
	[NODE_V8_code_kind_mask] = { { "CodeKindFieldMask" }, K_VAL, R },
	[NODE_V8_code_kind_shift] = { { "CodeKindFieldShift" }, K_VAL, R },
	[NODE_V8_code_kind_baseline] = { { "CodeKindBaseline" }, K_VAL, R },
	[NODE_V8_code_kind_interpreted] = { { "CodeKindInterpretedFunction" }, K_VAL, R },
	[NODE_V8_scope_info_first_vars] = { { "scopeinfo_idx_first_vars" }, K_VAL, O },
	[NODE_V8_scope_info_ncontext_locals] = { { "scopeinfo_idx_ncontextlocals" }, K_VAL, O },
	[NODE_V8_scope_info_nparams] = { { "scopeinfo_idx_nparams" }, K_VAL, O },
	[NODE_V8_deopt_inlined_count] = { { "DeoptimizationDataInlinedFunctionCountIndex" }, K_VAL, O },
	[NODE_V8_deopt_literal_array] = { { "DeoptimizationDataLiteralArrayIndex" }, K_VAL, O },
	[NODE_V8_deopt_sfi] = { { "DeoptimizationDataSharedFunctionInfoIndex",
				  "DeoptimizationDataWrappedSharedFunctionInfoIndex" }, K_VAL, O },
	[NODE_V8_deopt_inlining_positions] = { { "DeoptimizationDataInliningPositionsIndex" }, K_VAL,
					       O },
};
#undef R
#undef O

static const char *const field_names[NODE_V8_NR_FIELDS] = {
#define NODE_X_NAME(f) #f,
	NODE_V8_FIELDS(NODE_X_NAME)
#undef NODE_X_NAME
};

const char *node_v8_field__name(unsigned int field)
{
	return field < NODE_V8_NR_FIELDS ? field_names[field] : NULL;
}

const char *node_v8_field__symbol(unsigned int field)
{
	return field < NODE_V8_NR_FIELDS ? fields[field].names[0] : NULL;
}

bool node_v8_field__required(unsigned int field)
{
	return field < NODE_V8_NR_FIELDS && fields[field].required;
}

static int32_t *slot(struct node_v8_layout *l, unsigned int field)
{
	static const size_t offs[NODE_V8_NR_FIELDS] = {
#define NODE_X_OFF(f) offsetof(struct node_v8_layout, f),
		NODE_V8_FIELDS(NODE_X_OFF)
#undef NODE_X_OFF
	};

	return (int32_t *)((char *)l + offs[field]);
}

static bool lookup(const struct node_consts *c, const char *name, int32_t *v)
{
	char full[160];

	snprintf(full, sizeof(full), "v8dbg_%s", name);
	return node_consts__get(c, full, v);
}

/* V8 versions as one number, for the ranges the rules below were checked on. */
#define V8(a, b, c) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c))

struct ctx {
	struct node_v8_layout *l;
	const struct node_consts *c;
	uint32_t ver;
};

static bool have(const struct ctx *x, unsigned int f)
{
	return x->l->src[f] != NODE_SRC_MISSING;
}

/* Sets a missing field: from a rule (DERIVED) or a value V8 kept (FIXED). */
static void set(struct ctx *x, unsigned int f, int64_t v, enum node_src src)
{
	if (have(x, f) || v < INT32_MIN || v > INT32_MAX)
		return;
	*slot(x->l, f) = (int32_t)v;
	x->l->src[f] = src;
}

/*
 * The rules, each for the V8 versions on which it holds: the release that
 * lost the constant, back to where the relation began (the OpenTelemetry
 * profiler's interpreter/nodev8 keeps the same history), checked here on
 * the neighbours that export both sides (README.md).
 */
static void derive(struct ctx *x)
{
	struct node_v8_layout *l = x->l;
	const uint32_t ver = x->ver;
	int32_t dummy;

	/* Past the versions checked, a missing constant stays missing: no guess. */
	if (ver < V8(9, 6, 138) || ver >= V8(14, 0, 0))
		return;
	/* JSFunction and its 14 constructor subtypes, ordered from it (V8 9.6.138). */
	if (have(x, NODE_V8_type_js_function)) {
		set(x, NODE_V8_first_js_function_type, l->type_js_function, NODE_SRC_DERIVED);
		if (ver < V8(12, 0, 0))
			set(x, NODE_V8_last_js_function_type, l->type_js_function + 14,
			    NODE_SRC_DERIVED);
	}
	/*
	 * JSFunction::code sits after shared, context and feedback cell
	 * (Node 18: shared 24, code 48); from 11.7.368 right before shared
	 * (Node 22: code 24, shared 32). V8 13 put the function's dispatch
	 * handle there instead (Node 24: the handle its Code holds too).
	 */
	if (have(x, NODE_V8_jsfunction_shared) && ver < V8(13, 0, 0))
		set(x, NODE_V8_jsfunction_code,
		    l->jsfunction_shared + (ver >= V8(11, 7, 368) ? -8 : 24), NODE_SRC_DERIVED);
	else if (have(x, NODE_V8_jsfunction_shared))
		set(x, NODE_V8_jsfunction_dispatch_handle, l->jsfunction_shared - 8,
		    NODE_SRC_DERIVED);
	/* BytecodeArray was a FixedArrayBase until V8 12: its length is theirs. */
	if (lookup(x->c, "parent_BytecodeArray__FixedArrayBase", &dummy) &&
	    have(x, NODE_V8_fixed_array_length)) {
		set(x, NODE_V8_bytecode_array_length, l->fixed_array_length, NODE_SRC_DERIVED);
		/* length, constant_pool, handler_table, source_position_table. */
		set(x, NODE_V8_bytecode_array_source_positions, l->fixed_array_length + 24,
		    NODE_SRC_DERIVED);
	} else if (lookup(x->c, "class_BytecodeArray__wrapper__Tagged_BytecodeWrapper_", &dummy)) {
		/* V8 12+: length, wrapper, source_position_table. */
		set(x, NODE_V8_bytecode_array_source_positions, dummy + 8, NODE_SRC_DERIVED);
	}
	if (have(x, NODE_V8_code_instruction_size)) {
		/* Code: deopt data, position table, [wrapper (12.x),] instruction stream, start. */
		if (have(x, NODE_V8_type_code_wrapper) && have(x, NODE_V8_code_instruction_start))
			set(x, NODE_V8_code_source_positions, l->code_instruction_start - 24,
			    NODE_SRC_DERIVED);
		else if (!have(x, NODE_V8_type_code_wrapper))
			set(x, NODE_V8_code_source_positions, l->code_instruction_size - 16,
			    NODE_SRC_DERIVED);
		set(x, NODE_V8_code_flags, l->code_instruction_size + 8, NODE_SRC_DERIVED);
	} else if (have(x, NODE_V8_code_source_positions) && ver >= V8(11, 0, 0)) {
		/*
		 * V8 11.x lost Code's metadata (Node 20): position table, code
		 * (the InstructionStream), instruction start, flags, then the
		 * size, after builtin id and kind-specific flags before 11.4.59.
		 */
		set(x, NODE_V8_code_instruction_start, l->code_source_positions + 16,
		    NODE_SRC_DERIVED);
		set(x, NODE_V8_code_flags, l->code_instruction_start + 8, NODE_SRC_DERIVED);
		set(x, NODE_V8_code_instruction_size,
		    l->code_flags + 4 + (ver < V8(11, 4, 59) ? 4 : 0), NODE_SRC_DERIVED);
	}
	if (have(x, NODE_V8_code_source_positions))
		set(x, NODE_V8_code_deopt_data, l->code_source_positions - 8, NODE_SRC_DERIVED);
	if (have(x, NODE_V8_script_name))
		set(x, NODE_V8_script_source, l->script_name - 8, NODE_SRC_DERIVED);
	/*
	 * function_data right before name_or_scope_info (Node 18, 20, 22);
	 * 13.x split it in two, the trusted half (the BytecodeArray) still
	 * right after the map (Node 24).
	 */
	if (ver < V8(13, 0, 0) && have(x, NODE_V8_sfi_name_or_scope_info))
		set(x, NODE_V8_sfi_function_data, l->sfi_name_or_scope_info - 8, NODE_SRC_DERIVED);
	else
		set(x, NODE_V8_sfi_function_data, 8, NODE_SRC_FIXED);
	/* DeoptimizationData's indexes before V8 10.8 exported them (Node 20, 22 say the same). */
	if (ver < V8(13, 0, 0)) {
		set(x, NODE_V8_deopt_inlined_count, 1, NODE_SRC_FIXED);
		set(x, NODE_V8_deopt_literal_array, 2, NODE_SRC_FIXED);
		set(x, NODE_V8_deopt_sfi, 6, NODE_SRC_FIXED);
		set(x, NODE_V8_deopt_inlining_positions, 7, NODE_SRC_FIXED);
	}
}

static bool in_bounds(unsigned int f, int32_t v)
{
	switch (fields[f].kind) {
	case K_FP:
		return v >= -256 && v <= 256 && !(v % 8);
	case K_TYPE:
		return v >= 0 && v <= 0xffff;
	case K_OFF:
		return v >= 0 && v < 4096;
	default:
		return v >= -1024 && v < (1 << 24);
	}
}

/* The tagging every offset above assumes: x86-64 without pointer compression. */
static int check_tagging(const struct node_v8_layout *l, struct errmsg *why)
{
	if (l->tagged_size == 4) {
		errmsg__set(why, "pointer compression (TaggedSize 4): not read here");
		return -ENOTSUP;
	}
	if (l->pointer_size != 8 || l->tagged_size != 8 || l->heap_object_tag != 1 ||
	    l->heap_object_tag_mask != 3 || l->smi_tag != 0 || l->smi_tag_mask != 1 ||
	    l->smi_value_shift != 1 || l->smi_shift_size != 31) {
		errmsg__set(why, "tagging other than 64-bit V8's (pointer %d, tagged %d, Smi shift %d+%d)",
			    l->pointer_size, l->tagged_size, l->smi_value_shift, l->smi_shift_size);
		return -ENOTSUP;
	}
	return 0;
}

int node_v8_layout__fill(struct node_v8_layout *l, const struct node_consts *c, int major,
			 int minor, int build, struct errmsg *why)
{
	struct ctx x = { l, c, V8(major & 0xff, minor & 0xff, build & 0xffff) };
	size_t used = 0, nr_missing = 0;
	char missing[384] = "";
	int32_t v;

	memset(l, 0, sizeof(*l));
	for (unsigned int f = 0; f < NODE_V8_NR_FIELDS; f++) {
		for (size_t n = 0; n < 4 && fields[f].names[n]; n++) {
			if (!lookup(c, fields[f].names[n], &v))
				continue;
			if (!in_bounds(f, v)) {
				errmsg__set(why, "v8dbg_%s is %d: no %s", fields[f].names[n], v,
					    fields[f].kind == K_TYPE ? "type" : "offset");
				return -ENOTSUP;
			}
			*slot(l, f) = v;
			l->src[f] = NODE_SRC_CONST;
			if (f == NODE_V8_deopt_sfi && n == 1)
				l->deopt_sfi_wrapped = true;
			break;
		}
	}
	derive(&x);
	/* Instructions inline in Code, after its header, until the InstructionStream split (V8 11). */
	l->code_inline = !have(&x, NODE_V8_type_instruction_stream);
	for (unsigned int f = 0; f < NODE_V8_NR_FIELDS; f++) {
		if (!fields[f].required || have(&x, f))
			continue;
		if (nr_missing++ < 4 && used < sizeof(missing))
			used += (size_t)snprintf(missing + used, sizeof(missing) - used, "%sv8dbg_%s",
						 used ? ", " : "", fields[f].names[0]);
	}
	if (nr_missing) {
		errmsg__set(why, "no %s%s (%zu constant%s the walker needs)", missing,
			    nr_missing > 4 ? ", ..." : "", nr_missing, nr_missing == 1 ? "" : "s");
		return -ENOTSUP;
	}
	return check_tagging(l, why);
}

size_t node_v8_layout__not_const(const struct node_v8_layout *l, char *buf, size_t len)
{
	static const struct {
		uint8_t src;
		const char *label;
	} groups[] = { { NODE_SRC_DERIVED, "derived" }, { NODE_SRC_FIXED, "fixed" },
		       { NODE_SRC_MISSING, "missing" } };
	size_t used = 0, count = 0;

	if (len)
		buf[0] = '\0';
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++) {
		bool first = true;

		for (unsigned int f = 0; f < NODE_V8_NR_FIELDS; f++) {
			if (l->src[f] != groups[g].src)
				continue;
			count++;
			if (used < len && first)
				used += (size_t)snprintf(buf + used, len - used, "%s%s: %s",
							 used ? "; " : "", groups[g].label,
							 field_names[f]);
			else if (used < len)
				used += (size_t)snprintf(buf + used, len - used, " %s", field_names[f]);
			first = false;
		}
	}
	return count;
}
