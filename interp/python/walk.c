// SPDX-License-Identifier: GPL-2.0
/*
 * A thread's Python frames read in user space by the rules the in-kernel
 * walk (bpf/python.bpf.c) follows, so that the perf backend and the tests
 * see what the bpf backend's samples hold: the same records, the same
 * bounds, the same statuses. Like the kernel's, this walk does not look
 * for loops: a frame chain that loops is cut at PY_MAX_FRAMES.
 */
#include <errno.h>
#include <string.h>

#include "interp/python/pyint.h"

/* The thread's newest frame: tstate->frame (<= 3.10, 3.13+) or tstate->cframe->current_frame. */
static int top_frame(const struct py_layout *l, const struct py_mem *mem, uint64_t tstate,
		     uint64_t *frame)
{
	int err = py_read_u64(mem, tstate + (uint64_t)l->tstate_frame, frame);

	if (err || l->cframe_current < 0 || !*frame)
		return err;
	return py_read_u64(mem, *frame + (uint64_t)l->cframe_current, frame);
}

/*
 * One frame's record from its bytes (l->frame_read of them), with its code
 * object's identity read through mem.
 */
static struct py_frame frame_record(const struct py_layout *l, const struct py_mem *mem,
				    const uint8_t *buf)
{
	struct py_frame f = { 0 };

	f.code = py_u64(buf, l->frame_code) & ~l->code_tag_bits;
	if (l->lasti_kind == PY_LASTI_BYTE_OFFSET || l->lasti_kind == PY_LASTI_INSN_INDEX)
		f.lasti = (uint64_t)(int64_t)(int32_t)py_u32(buf, l->frame_lasti);
	else
		f.lasti = py_u64(buf, l->frame_lasti);
	/* PY_FRAME_ENTRY is bit 0: code objects are aligned, and 3.14's tag bits are cleared. */
	f.code &= ~PY_FRAME_ENTRY;
	if (l->entry_kind == PY_ENTRY_IS_ENTRY && buf[l->frame_entry])
		f.code |= PY_FRAME_ENTRY;
	else if (l->entry_kind == PY_ENTRY_OWNER && buf[l->frame_entry] >= 3)
		f.code |= PY_FRAME_ENTRY;
	/* No identity for a shim (3.13: None) or where there is no code object (the walk's). */
	if ((f.code & ~PY_FRAME_ENTRY) && !py_frame__is_shim(l, &f)) {
		uint64_t ident;

		py_code__ident(l, mem, f.code & ~PY_FRAME_ENTRY, &ident);
		f.ident = ident;
	}
	return f;
}

/* Whether the layout's frame fields all lie within the bytes read of a frame. */
static bool frame_fits(const struct py_layout *l)
{
	int32_t lasti_size = l->lasti_kind <= PY_LASTI_INSN_INDEX ? 4 : 8;

	return l->frame_read > 0 && l->frame_read <= 512 && l->frame_code >= 0 &&
	       l->frame_code + 8 <= l->frame_read && l->frame_back >= 0 &&
	       l->frame_back + 8 <= l->frame_read && l->frame_lasti >= 0 &&
	       l->frame_lasti + lasti_size <= l->frame_read &&
	       (l->entry_kind == PY_ENTRY_NONE ||
		(l->frame_entry >= 0 && l->frame_entry < l->frame_read));
}

int py_walk(const struct py_layout *l, const struct py_mem *mem, uint64_t tstate,
	    struct py_stack *st)
{
	uint8_t buf[512];
	uint64_t frame;
	int err;

	st->nr_frames = 0;
	st->status = 0;
	if (!frame_fits(l))
		return -EINVAL;
	err = top_frame(l, mem, tstate, &frame);
	if (err)
		return err;
	while (frame) {
		if (st->nr_frames == PY_MAX_FRAMES) {
			st->status = PY_WALK_TRUNCATED;
			break;
		}
		if (py_mem__read(mem, frame, buf, l->frame_read)) {
			st->status = PY_WALK_FAULT;
			break;
		}
		st->frames[st->nr_frames++] = frame_record(l, mem, buf);
		frame = py_u64(buf, l->frame_back);
	}
	return 0;
}

int py_walk_leaf(const struct py_layout *l, const struct py_mem *mem, uint64_t tstate,
		 struct py_frame *f, uint64_t *addr)
{
	uint8_t buf[512];
	int err;

	memset(f, 0, sizeof(*f));
	*addr = 0;
	if (!frame_fits(l))
		return -EINVAL;
	err = top_frame(l, mem, tstate, addr);
	if (err || !*addr)
		return err;
	err = py_mem__read(mem, *addr, buf, l->frame_read);
	if (!err)
		*f = frame_record(l, mem, buf);
	return err;
}
