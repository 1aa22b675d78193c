/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The programs that stand in for the counting one (dwarf, pid namespace)
 * declare the maps they share with it under the same names.
 */
#ifndef BPFBACKEND_SHARED_MAPS_H
#define BPFBACKEND_SHARED_MAPS_H

struct bpf_object;

/*
 * Before obj is loaded: each of its maps that counting (loaded) has under
 * the same name uses counting's map instead of a new one. Returns 0 or -errno.
 */
int shared_maps__reuse(struct bpf_object *obj, const struct bpf_object *counting);

#endif
