/* SPDX-License-Identifier: GPL-2.0 */
/* Kernel text symbols from /proc/kallsyms. */
#ifndef CORE_SYM_KSYM_H
#define CORE_SYM_KSYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ksyms;

/* Returns NULL with errno set if the file cannot be read. */
struct ksyms *ksyms__load(const char *path);
void ksyms__free(struct ksyms *ks);
/* Bytes its table and names hold (-v's account of memory). */
size_t ksyms__bytes(const struct ksyms *ks);

/* True when every address read as zero (kptr_restrict, or not privileged). */
bool ksyms__restricted(const struct ksyms *ks);

/* The symbol at or below addr; *module is NULL for the core kernel. */
const char *ksyms__lookup(const struct ksyms *ks, uint64_t addr, uint64_t *sym_off,
			  const char **module);

#endif
