// SPDX-License-Identifier: GPL-2.0
/*
 * V8's frames of one sample, from its registers and its copy of the stack.
 * V8's generated code (interpreter, baseline, optimized, builtins) keeps
 * rbp frames: [fp] the caller's fp, [fp + 8] the return address, [fp - 8]
 * a typed frame's marker (StackFrame::Type << 1) or a JavaScript frame's
 * context, [fp - 16] the JSFunction, and in interpreted and baseline
 * frames [fp - 32] the BytecodeArray and [fp - 40] the bytecode offset (a
 * Smi; baseline frames keep their feedback cell there instead). The slots
 * come from the stack copy only, bounds-checked; the objects they point to
 * through the heap reader, type-checked before anything in them is used.
 */
#include <errno.h>
#include <string.h>

#include "interp/node/nodeint.h"

struct stackcopy {
	uint64_t lo, hi;	/* [sp, sp + size) */
	const uint8_t *data;
};

static int slot(const struct stackcopy *s, uint64_t addr, uint64_t *w)
{
	if (addr < s->lo || addr > s->hi - 8 || s->hi - s->lo < 8)
		return -EFAULT;
	memcpy(w, s->data + (addr - s->lo), 8);
	return 0;
}

uint64_t node_sfi_ident(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t sfi)
{
	uint64_t name, script, id;

	if (!node_obj_is(l, mem, sfi, l->type_shared_function_info) ||
	    node_read_field(l, mem, sfi, l->sfi_name_or_scope_info, &name) ||
	    node_read_field(l, mem, sfi, l->sfi_script, &script))
		return 0;
	/* Another function's SFI in the same memory has another name or script (or is the same). */
	id = name * 0x9e3779b97f4a7c15ULL ^ (script + (script >> 29));
	return id ? id : 1;
}

/* Whether marker is a frame type this walk reports (a native frame's word rarely is). */
static bool typed_marker(const struct node_v8_layout *l, uint64_t marker, uint8_t *type)
{
	const int32_t known[] = { l->ft_entry, l->ft_construct_entry, l->ft_exit, l->ft_stub,
				  l->ft_builtin, l->ft_builtin_exit, l->ft_internal,
				  l->ft_construct, l->ft_native };
	uint64_t t;

	if (marker & 1 || marker >= 128)
		return false;
	t = marker >> 1;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i] > 0 && (uint64_t)known[i] == t) {
			*type = (uint8_t)t;
			return true;
		}
	return false;
}

/*
 * Compiled code of the JSFunction f holding pc: its kind and pc offset. V8
 * 13 (Node 24) keeps a dispatch handle instead of the Code: not found.
 */
static void compiled(const struct node_v8_layout *l, const struct node_mem *heap, uint64_t f,
		     uint64_t pc, bool is_return, struct node_frame *out)
{
	uint64_t code, start, size = 0;
	uint32_t flags, kind;

	out->kind = NODE_CODE_OPTIMIZED;
	if (l->src[NODE_V8_jsfunction_code] == NODE_SRC_MISSING || l->jsfunction_code <= 0 ||
	    node_read_field(l, heap, f, l->jsfunction_code, &code) ||
	    !node_obj_is(l, heap, code, l->type_code) ||
	    node_mem__read(heap, node_field(l, code, l->code_instruction_size), &size, 4) ||
	    node_mem__read(heap, node_field(l, code, l->code_flags), &flags, 4))
		return;
	if (l->code_inline)
		start = node_field(l, code, l->code_instruction_start);
	else if (node_read_field(l, heap, code, l->code_instruction_start, &start))
		return;
	if (pc < start || pc - start >= size)
		return;
	kind = (flags >> l->code_kind_shift) & (uint32_t)l->code_kind_mask;
	/* CodeKind: ..., INTERPRETED_FUNCTION, BASELINE, MAGLEV, TURBOFAN in every V8 read here. */
	if (kind == (uint32_t)l->code_kind_baseline + 1)
		out->kind = NODE_CODE_MAGLEV;
	else if (kind == (uint32_t)l->code_kind_baseline + 2)
		out->kind = NODE_CODE_TURBOFAN;
	else
		return;
	out->code = code;
	/* A return address is one past its call: the call is where the frame is. */
	out->offset = (int32_t)(pc - start) - (is_return && pc > start);
}

/* A JavaScript frame at fp: its function, code kind and offset. False for a native frame. */
static bool js_frame(const struct node_v8_layout *l, const struct stackcopy *s,
		     const struct node_mem *heap, bool is_return, struct node_frame *out)
{
	uint64_t f, ba, off, len;
	uint16_t type;

	if (slot(s, out->fp + (uint64_t)(int64_t)l->fp_function, &f) ||
	    node_obj_type(l, heap, f, &type) || type < l->first_js_function_type ||
	    type > l->last_js_function_type)
		return false;
	out->function = f;
	out->offset = -1;
	if (!node_read_field(l, heap, f, l->jsfunction_shared, &out->sfi)) {
		out->ident = node_sfi_ident(l, heap, out->sfi);
		if (!out->ident)
			out->sfi = 0;
	} else {
		out->sfi = 0;
	}
	if (!slot(s, out->fp + (uint64_t)(int64_t)l->fp_bytecode_array, &ba) &&
	    node_obj_is(l, heap, ba, l->type_bytecode_array) &&
	    !slot(s, out->fp + (uint64_t)(int64_t)l->fp_bytecode_offset, &off)) {
		out->code = ba;
		if (!node_is_smi(l, off)) {
			out->kind = NODE_CODE_BASELINE;
			return true;
		}
		out->kind = NODE_CODE_INTERPRETED;
		/* The offset counts from the tagged array; the bytecodes start at bytecode_array_data. */
		int64_t o = node_smi_value(l, off) - (l->bytecode_array_data - l->heap_object_tag);

		if (o >= 0 && !node_read_field(l, heap, ba, l->bytecode_array_length, &len) &&
		    node_is_smi(l, len) && o < node_smi_value(l, len))
			out->offset = (int32_t)o;
		return true;
	}
	compiled(l, heap, f, out->pc, is_return, out);
	return true;
}

int node_walk(const struct node_v8_layout *l, const struct node_regs *r,
	      const struct node_mem *heap, struct node_stack *st)
{
	struct stackcopy s = { .lo = r->sp, .hi = r->sp + r->stack_size, .data = r->stack };
	uint64_t fp = r->bp, pc = r->ip;

	st->nr_frames = 0;
	st->status = 0;
	st->native_frames = 0;
	if (!l->tagged_size || l->pointer_size != 8 || !r->stack || s.hi < s.lo)
		return -EINVAL;
	/* Each step goes up the stack by at least 16 bytes: the copy bounds the loop too. */
	for (unsigned int steps = 0; fp; steps++) {
		struct node_frame f = { .fp = fp, .pc = pc };
		uint64_t marker, next;

		if (fp & 7 || fp < s.lo || slot(&s, fp, &next) || slot(&s, fp + 8, &f.ret)) {
			st->status |= NODE_WALK_LEFT_STACK;
			break;
		}
		if (!slot(&s, fp + (uint64_t)(int64_t)l->fp_marker, &marker) &&
		    typed_marker(l, marker, &f.frame_type)) {
			f.kind = NODE_CODE_TYPED;
		} else if (!js_frame(l, &s, heap, steps > 0, &f)) {
			st->native_frames++;
			goto up;
		}
		if (st->nr_frames == NODE_MAX_FRAMES) {
			st->status |= NODE_WALK_TRUNCATED;
			break;
		}
		st->frames[st->nr_frames++] = f;
up:
		/* The chain ends at 0 (the thread's first frame); it only ever goes up. */
		if (next && next < fp + 16) {
			st->status |= NODE_WALK_LEFT_STACK;
			break;
		}
		pc = f.ret;
		fp = next;
	}
	return 0;
}
