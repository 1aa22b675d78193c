// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/shared_maps.h"

#include <bpf/libbpf.h>

int shared_maps__reuse(struct bpf_object *obj, const struct bpf_object *counting)
{
	struct bpf_map *map;

	bpf_object__for_each_map(map, obj) {
		const struct bpf_map *src = bpf_object__find_map_by_name(counting,
									 bpf_map__name(map));
		int err;

		if (!src)
			continue;
		err = bpf_map__reuse_fd(map, bpf_map__fd(src));
		if (err)
			return err;
	}
	return 0;
}
