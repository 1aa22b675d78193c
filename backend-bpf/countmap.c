// SPDX-License-Identifier: GPL-2.0
#include "backend-bpf/countmap.h"

#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/lib/log.h"

/* Entries moved per batch system call (5.6+). */
#define BATCH_ENTRIES 4096
/* The kernel's batch cursor is at most a key's size; keys here are small. */
#define MAX_KEY_SIZE 256

/* Linux 5.6+: thousands of entries per system call. Returns -EOPNOTSUPP before that. */
static int drain_batch(const struct countmap *cm, countmap_entry_fn fn, void *ctx)
{
	unsigned char *keys = calloc(BATCH_ENTRIES, cm->key_size), token[MAX_KEY_SIZE];
	uint64_t *values = calloc(BATCH_ENTRIES, sizeof(*values));
	bool first = true, done = false;
	int err = 0;

	if (!keys || !values || cm->key_size > MAX_KEY_SIZE) {
		err = -ENOMEM;
		goto out;
	}
	while (!done && !err) {
		__u32 count = BATCH_ENTRIES;

		err = bpf_map_lookup_and_delete_batch(cm->fd, first ? NULL : token, token, keys,
						      values, &count, NULL);
		if (err == -ENOENT) {
			done = true;	/* the last batch, possibly empty */
			err = 0;
		} else if (err) {
			/* -524 is the kernel-internal ENOTSUPP that bpf() leaks. */
			if (first && (err == -EINVAL || err == -ENOTSUP || err == -EOPNOTSUPP ||
				      err == -524))
				err = -EOPNOTSUPP;
			break;
		}
		first = false;
		for (__u32 i = 0; i < count && !err; i++)
			err = fn(ctx, keys + i * cm->key_size, values[i]);
	}
out:
	free(keys);
	free(values);
	return err;
}

/*
 * Linux 4.9: walk from a key no program can write (every key ends in a
 * comm, which the kernel always terminates: an all-0xff key is none), look
 * up, then delete.
 */
static int drain_walk(const struct countmap *cm, countmap_entry_fn fn, void *ctx)
{
	unsigned char start[MAX_KEY_SIZE], *keys = NULL;
	size_t nr = 0, cap = 0, ks = cm->key_size;
	int err = 0;

	if (ks > MAX_KEY_SIZE)
		return -EINVAL;
	memset(start, 0xff, ks);
	for (;;) {
		if (nr == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			unsigned char *tmp = realloc(keys, ncap * ks);

			if (!tmp) {
				free(keys);
				return -ENOMEM;
			}
			keys = tmp;
			cap = ncap;
		}
		if (bpf_map_get_next_key(cm->fd, nr ? keys + (nr - 1) * ks : start, keys + nr * ks))
			break;
		nr++;
	}
	for (size_t i = 0; i < nr && !err; i++) {
		uint64_t value;

		if (!bpf_map_lookup_elem(cm->fd, keys + i * ks, &value))
			err = fn(ctx, keys + i * ks, value);
	}
	for (size_t i = 0; i < nr; i++)
		bpf_map_delete_elem(cm->fd, keys + i * ks);
	free(keys);
	return err;
}

int countmap__drain(const struct countmap *cm, countmap_entry_fn fn, void *ctx)
{
	int err;

	if (!*cm->no_batch) {
		err = drain_batch(cm, fn, ctx);
		if (err != -EOPNOTSUPP)
			return err;
		*cm->no_batch = true;
		pr_info("bpf: no batch map operations (Linux < 5.6): draining key by key\n");
	}
	return drain_walk(cm, fn, ctx);
}

int percpu_values(int fd, uint32_t slot, int nr_cpus, uint64_t *vals)
{
	return bpf_map_lookup_elem(fd, &slot, vals) ? -errno : 0;
}

uint64_t percpu_stat(int fd, uint32_t slot, int nr_cpus)
{
	uint64_t *vals = calloc(nr_cpus > 0 ? nr_cpus : 1, sizeof(*vals)), sum = 0;

	if (vals && !percpu_values(fd, slot, nr_cpus, vals))
		for (int i = 0; i < nr_cpus; i++)
			sum += vals[i];
	free(vals);
	return sum;
}
