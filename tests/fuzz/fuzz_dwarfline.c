// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: arbitrary bytes as an ELF file with DWARF, read for
 * source lines and inline chains (core/sym/dwarfline.c over libdw): unit
 * ranges, line tables, file tables (DWARF 4 and 5), inlined-subroutine
 * trees, a .gnu_debugaltlink naming a supplement that is not there. The
 * debug files of the binaries a root profiler reads are anyone's.
 *
 * The input is handed over as an fd (a memfd), as the product hands over
 * files it opened itself. Seeds: a workload with always_inline helpers
 * (its debug file, -O2 -g, clang's DWARF 5) and a small object.
 */
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core/sym/dwarfline.h"

static void touch(const char *s)
{
	volatile size_t sink;

	if (s)
		sink = strlen(s);
	(void)sink;
}

static void lookup(struct dwarf_lines *dl, uint64_t addr)
{
	struct src_frame fr[DWARF_MAX_FRAMES];
	unsigned int n = dwarf_lines__lookup(dl, addr, fr, 3);

	for (unsigned int i = 0; i < n; i++) {
		touch(fr[i].function);
		touch(fr[i].file);
		touch(fr[i].decl_file);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct dwarf_lines *dl;
	uint64_t addr;
	int fd;

	fd = memfd_create("fuzz-dwarf", MFD_CLOEXEC);
	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size || lseek(fd, 0, SEEK_SET)) {
		close(fd);
		return 0;
	}
	/* fd is taken; no supplement can be found under this root. */
	dl = dwarf_lines__open(fd, "/nonexistent/profile-fuzz");
	if (!dl)
		return 0;
	(void)dwarf_lines__units(dl);
	/* Addresses from the input itself (headers and DWARF hold many), and a sweep. */
	for (size_t i = 0; i + 8 <= size && i < 32 * 8; i += 8) {
		memcpy(&addr, data + i, 8);
		lookup(dl, addr);
		lookup(dl, addr & 0xffff);
	}
	for (addr = 0; addr < 0x4000; addr += 0x1f)
		lookup(dl, addr);
	lookup(dl, UINT64_MAX);
	dwarf_lines__free(dl);
	return 0;
}
