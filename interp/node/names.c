// SPDX-License-Identifier: GPL-2.0
/*
 * Names of JavaScript frames: the function's name from its
 * SharedFunctionInfo (a String, or the function name its ScopeInfo holds),
 * its Script's name, and lines: the frame's position (interpreted code:
 * the bytecode offset; optimized: the pc offset, when the position is not
 * an inlined function's) and where the function starts.
 *
 * ScopeInfo has no metadata past its first slots: flags, parameter count,
 * context local count (scopeinfo_idx_*), from V8 12.x the function's start
 * and end positions, then the context locals' names and infos, then the
 * optional fields the flags select, among them the function variable's
 * name (the function's own name, kept for every named function) and its
 * start and end positions. The name is read as the first String after the
 * locals and the positions as the first ascending pair of Smis, within
 * NODE_SCOPE_SLOTS slots: what V8 itself checks (a map of the right
 * type) is checked for each.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "interp/node/nodeint.h"

#define NODE_SCOPE_SLOTS 24
/* ScopeInfo keeps up to this many context local names inline, more in a hash table (one slot). */
#define NODE_SCOPE_INLINE_LOCALS 75

struct scope {
	uint64_t name;		/* the function name's String, or 0 */
	int64_t start, end;	/* the function's character offsets, or -1 */
};

static void scope_info(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t si,
		       struct scope *out)
{
	uint64_t slots[NODE_SCOPE_SLOTS + 8], base = node_field(l, si, l->heap_object_map) + 8;
	int64_t first = l->scope_info_first_vars, locals;
	uint64_t prev = 1;
	bool pair = false;

	out->name = 0;
	out->start = out->end = -1;
	if (first <= l->scope_info_ncontext_locals || first > 8 ||
	    node_mem__read(mem, base, slots, sizeof(uint64_t) * (size_t)(first + 1)))
		return;
	/* V8 12.x+ (idx_first_vars 5): the start and end positions sit before the locals. */
	if (first >= 5 && node_is_smi(l, slots[3]) && node_is_smi(l, slots[4]) &&
	    node_smi_value(l, slots[3]) >= 0 && node_smi_value(l, slots[3]) < node_smi_value(l, slots[4])) {
		out->start = node_smi_value(l, slots[3]);
		out->end = node_smi_value(l, slots[4]);
	}
	if (!node_is_smi(l, slots[l->scope_info_ncontext_locals]))
		return;
	locals = node_smi_value(l, slots[l->scope_info_ncontext_locals]);
	if (locals < 0 || locals > (1 << 20))
		return;
	first += locals < NODE_SCOPE_INLINE_LOCALS ? 2 * locals : 1 + locals;
	if (first > (1 << 22) ||
	    node_mem__read(mem, base + (uint64_t)first * 8, slots, sizeof(uint64_t) * NODE_SCOPE_SLOTS))
		return;
	for (unsigned int i = 0; i < NODE_SCOPE_SLOTS; i++) {
		uint64_t cur = slots[i];
		uint32_t len;
		uint16_t type;

		/*
		 * The function variable's name (empty for an anonymous function),
		 * then the inferred name ("Module._compile" for a function
		 * expression assigned there), then the positions: the first name
		 * that is not empty, before the positions.
		 */
		if (!out->name && !pair && node_is_heap(l, cur) &&
		    !node_obj_type(l, mem, cur, &type) && type < l->first_nonstring_type &&
		    !node_str_length(l, mem, cur, &len) && len)
			out->name = cur;
		if (!pair && node_is_smi(l, cur) && node_is_smi(l, prev) &&
		    node_smi_value(l, prev) >= 0 && node_smi_value(l, prev) < node_smi_value(l, cur)) {
			pair = true;
			if (out->start < 0) {
				out->start = node_smi_value(l, prev);
				out->end = node_smi_value(l, cur);
			}
		}
		if (out->name && pair)
			return;
		prev = cur;
	}
}

/* The frame's character offset in its script: 0 with *pos, or -ENOENT. */
static int frame_position(const struct node_v8_layout *l, const struct node_mem *mem,
			  const struct node_frame *f, int64_t *pos)
{
	uint64_t code = f->code;
	uint8_t *table;
	int err;
	int32_t field;
	unsigned int inlined;
	uint64_t t;
	size_t len;

	if (f->offset < 0)
		return -ENOENT;
	if (f->kind == NODE_CODE_INTERPRETED) {
		field = l->bytecode_array_source_positions;
		/* A frame kept without its array (code 0): the SFI's, if it still has bytecode. */
		if (!code && (node_read_field(l, mem, f->sfi, l->sfi_function_data, &code) ||
			      !node_obj_is(l, mem, code, l->type_bytecode_array)))
			return -ENOENT;
	} else if (f->kind == NODE_CODE_MAGLEV || f->kind == NODE_CODE_TURBOFAN) {
		field = l->code_source_positions;
	} else {
		return -ENOENT;
	}
	/* Built lazily: a function compiled without them has none until V8 needed one. */
	if (field <= 0 || !code || node_read_field(l, mem, code, field, &t))
		return -ENOENT;
	table = malloc(NODE_POSITIONS_MAX);
	if (!table)
		return -ENOMEM;
	err = node_byte_array(l, mem, t, table, NODE_POSITIONS_MAX, &len);
	if (!err)
		err = node_position_at(table, len, f->offset, pos, &inlined);
	free(table);
	if (err)
		return -ENOENT;
	/* Inlined code's position is in the inlined function's script: not this frame's line. */
	if (inlined || *pos < 0)
		return -ENOENT;
	return 0;
}

int node_name_frame(const struct node_v8_layout *l, const struct node_mem *mem,
		    const struct node_frame *f, struct node_fn_info *out)
{
	uint64_t nos, script, file;
	struct scope sc = { 0, -1, -1 };
	uint16_t type;
	int64_t pos;
	int err;

	out->name[0] = out->file[0] = '\0';
	out->line = out->first_line = 0;
	if (f->kind == NODE_CODE_TYPED || !f->sfi)
		return -EINVAL;
	/* Named only by the object the sample saw: still an SFI, still naming the same. */
	if (node_sfi_ident(l, mem, f->sfi) != f->ident || !f->ident)
		return -ESTALE;
	err = node_read_field(l, mem, f->sfi, l->sfi_name_or_scope_info, &nos);
	if (!err)
		err = node_read_field(l, mem, f->sfi, l->sfi_script, &script);
	if (err)
		return err;
	if (!node_obj_type(l, mem, nos, &type)) {
		if (type < l->first_nonstring_type)
			sc.name = nos;
		else if (type == l->type_scope_info)
			scope_info(l, mem, nos, &sc);
	}
	if (sc.name)
		node_str_utf8(l, mem, sc.name, out->name, sizeof(out->name));
	if (!out->name[0])
		snprintf(out->name, sizeof(out->name), "<anonymous>");
	if (!node_obj_is(l, mem, script, l->type_script))
		return 0;	/* builtins and native functions: no file */
	if (!node_read_field(l, mem, script, l->script_name, &file))
		node_str_utf8(l, mem, file, out->file, sizeof(out->file));
	if (sc.start >= 0)
		node_script_line(l, mem, script, sc.start, &out->first_line);
	if (!frame_position(l, mem, f, &pos))
		node_script_line(l, mem, script, pos, &out->line);
	return 0;
}
