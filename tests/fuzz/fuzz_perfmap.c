// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as /tmp/perf-PID.map, which any
 * process (any user's, under profile running as root) can write; parsed by
 * perfmap__load_file from a memfd, then looked up.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/sym/perfmap.h"

static int fd = -1;
static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fd = memfd_create("perf-map", MFD_CLOEXEC);
	if (fd < 0)
		return 1;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct perfmap *pm;
	uint64_t off, addr;
	volatile size_t sink;

	if (ftruncate(fd, 0) || pwrite(fd, data, size, 0) != (ssize_t)size)
		return 0;
	pm = perfmap__load_file(path);
	if (!pm)
		return 0;
	/* Addresses that the input's own hex numbers make likely to hit. */
	for (size_t i = 0; i + 8 <= size && i < 64 * 8; i += 8) {
		const char *name;

		memcpy(&addr, data + i, 8);
		name = perfmap__lookup(pm, addr, &off);
		if (name)
			sink = strlen(name);
	}
	for (addr = 0; addr < 0x100000; addr += 0x1001) {
		const char *name = perfmap__lookup(pm, addr, &off);

		if (name)
			sink = strlen(name);
	}
	(void)sink;
	perfmap__free(pm);
	return 0;
}
