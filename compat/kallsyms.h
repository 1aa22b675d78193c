/* SPDX-License-Identifier: GPL-2.0 */
/* One kernel function's address range, from /proc/kallsyms. */
#ifndef COMPAT_KALLSYMS_H
#define COMPAT_KALLSYMS_H

#include <stdint.h>

/*
 * [start, end) of the text symbol called name: end is the next text
 * symbol's address. Returns 0, -ENOENT (no such symbol, or addresses hidden
 * by kptr_restrict), or -errno reading the file.
 */
int kallsyms__range(const char *path, const char *name, uint64_t *start, uint64_t *end);

#endif
