/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The checks every read of another process's memory shares, whatever
 * reads it (interp/python's and interp/node's readers): a length within
 * the reader's bound, nothing at page 0 (a NULL pointer is not a read),
 * no range that wraps around.
 */
#ifndef CORE_LIB_USERMEM_H
#define CORE_LIB_USERMEM_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

typedef int (*user_mem_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* read(ctx, addr, buf, len) once the checks pass; -E2BIG past max, -EFAULT, or 0 for len 0. */
static inline int user_mem__read(user_mem_read_fn read, void *ctx, uint64_t addr, void *buf,
				 size_t len, size_t max)
{
	if (len > max)
		return -E2BIG;
	if (!len)
		return 0;
	if (addr < 4096 || addr + len < addr)
		return -EFAULT;
	return read(ctx, addr, buf, len);
}

#endif
