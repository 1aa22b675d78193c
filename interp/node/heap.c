// SPDX-License-Identifier: GPL-2.0
/*
 * Reads of another process's V8 heap: words, fields of tagged objects,
 * their instance types (through their maps), byte arrays. Every read goes
 * through node_mem__read's checks; nothing read is believed past its
 * type check.
 */
#include <errno.h>
#include <string.h>

#include "core/lib/usermem.h"
#include "interp/node/nodeint.h"

int node_mem__read(const struct node_mem *mem, uint64_t addr, void *buf, size_t len)
{
	return user_mem__read(mem->read, mem->ctx, addr, buf, len, NODE_MEM_MAX_READ);
}

int node_read_word(const struct node_mem *mem, uint64_t addr, uint64_t *w)
{
	return node_mem__read(mem, addr, w, sizeof(*w));
}

int node_read_field(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t obj,
		    int32_t off, uint64_t *w)
{
	if (!node_is_heap(l, obj))
		return -EINVAL;
	return node_read_word(mem, node_field(l, obj, off), w);
}

int node_obj_type(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		  uint16_t *type)
{
	uint64_t map;
	int err;

	err = node_read_field(l, mem, v, l->heap_object_map, &map);
	if (err)
		return err;
	if (!node_is_heap(l, map))
		return -EINVAL;
	return node_mem__read(mem, node_field(l, map, l->map_instance_type), type, sizeof(*type));
}

bool node_obj_is(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		 int32_t want)
{
	uint16_t type;

	return want > 0 && !node_obj_type(l, mem, v, &type) && type == want;
}

int node_byte_array(const struct node_v8_layout *l, const struct node_mem *mem, uint64_t v,
		    uint8_t *buf, size_t max, size_t *len)
{
	uint16_t type;
	uint64_t w;
	int64_t n;
	int err;

	err = node_obj_type(l, mem, v, &type);
	if (err)
		return err;
	if (type != l->type_byte_array &&
	    !(l->type_trusted_byte_array > 0 && type == l->type_trusted_byte_array))
		return -EINVAL;
	/* A ByteArray is a FixedArrayBase: a Smi length, then its bytes. */
	err = node_read_field(l, mem, v, l->fixed_array_length, &w);
	if (err)
		return err;
	if (!node_is_smi(l, w))
		return -EINVAL;
	n = node_smi_value(l, w);
	if (n < 0)
		return -EINVAL;
	if ((uint64_t)n > max)
		return -E2BIG;
	*len = (size_t)n;
	return node_mem__read(mem, node_field(l, v, l->fixed_array_data), buf, (size_t)n);
}
