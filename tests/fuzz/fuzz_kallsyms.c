// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as /proc/kallsyms (a path the command
 * line can name), parsed by ksyms__load from a memfd, then looked up.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/sym/ksym.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("kallsyms", MFD_CLOEXEC);
	if (fd < 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

static void lookup(const struct ksyms *ks, uint64_t addr)
{
	const char *name, *module;
	volatile size_t sink;
	uint64_t off;

	name = ksyms__lookup(ks, addr, &off, &module);
	if (name)
		sink = strlen(name);
	if (name && module)
		sink = strlen(module);
	(void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ksyms *ks;
	uint64_t addr;

	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	ks = ksyms__load(path);
	if (!ks)
		return 0;
	(void)ksyms__restricted(ks);
	for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		memcpy(&addr, data + i, 8);
		lookup(ks, addr);
	}
	for (addr = 0xffffffff81000000ULL; addr < 0xffffffff81100000ULL; addr += 0x1001)
		lookup(ks, addr);
	lookup(ks, 0);
	lookup(ks, UINT64_MAX);
	ksyms__free(ks);
	return 0;
}
