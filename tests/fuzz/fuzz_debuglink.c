// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the search for a separate debug file. The input is a
 * binary and a candidate debug file: two bytes giving the binary's length,
 * the binary (written as DIR/bin), the rest (written as DIR/bin.debug and
 * under the debug root by the binary's build-id). Then elf_debug_file and
 * elf_symtab__load on DIR/bin: .gnu_debuglink names and CRCs, build-id
 * paths and notes, the debug file's own tables, lookups.
 *
 * Seed: a stripped workload with a build-id and a debuglink to bin.debug
 * (CRC right), and its symbols from objcopy --only-keep-debug --strip-debug.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "core/sym/elfsym.h"

static char dir[] = "/tmp/profile-fuzz-debuglink-XXXXXX";
static char root[128], empty[128], bin[128], dbg[128];

static int remove_entry(const char *path, const struct stat *sb, int type, struct FTW *ftw)
{
	return remove(path);
}

static void remove_dir(void)
{
	nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	if (!mkdtemp(dir))
		return 1;
	atexit(remove_dir);
	snprintf(root, sizeof(root), "%s/root", dir);
	snprintf(empty, sizeof(empty), "%s/empty", dir);
	snprintf(bin, sizeof(bin), "%s/bin", dir);
	snprintf(dbg, sizeof(dbg), "%s/bin.debug", dir);
	if (mkdir(root, 0700) || mkdir(empty, 0700))
		return 1;
	return 0;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = size ? write(fd, data, size) : 0;
	close(fd);
	return n == (ssize_t)size ? 0 : -EIO;
}

/* DIR/root/.build-id/xx/rest.debug for the binary's build-id, or "". */
static void build_id_path(const uint8_t *data, size_t size, char *out, size_t len)
{
	struct elf_symtab *st;
	const char *hex;

	out[0] = '\0';
	elf_symtab__set_debug_root(empty);
	st = elf_symtab__load_mem(data, size);
	hex = st ? elf_symtab__build_id(st) : NULL;
	if (hex && strlen(hex) > 2) {
		char sub[160];

		snprintf(sub, sizeof(sub), "%s/.build-id/%.2s", root, hex);
		mkdir(sub, 0700);
		snprintf(out, len, "%s/%s.debug", sub, hex + 2);
	}
	elf_symtab__free(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char by_id[512], out[4096], buildid_dir[160];
	struct elf_symtab *st;
	volatile size_t sink;
	size_t bin_len;
	uint64_t off;

	if (size < 2)
		return 0;
	bin_len = (size_t)data[0] | (size_t)data[1] << 8;
	data += 2;
	size -= 2;
	if (bin_len > size)
		bin_len = size;
	snprintf(buildid_dir, sizeof(buildid_dir), "%s/.build-id", root);
	mkdir(buildid_dir, 0700);
	build_id_path(data, bin_len, by_id, sizeof(by_id));
	if (write_file(bin, data, bin_len) || write_file(dbg, data + bin_len, size - bin_len))
		return 0;
	if (by_id[0] && link(dbg, by_id))
		by_id[0] = '\0';

	elf_symtab__set_debug_root(root);
	if (!elf_debug_file(bin, bin, out, sizeof(out)))
		sink = strlen(out);
	st = elf_symtab__load(bin);
	if (st) {
		for (uint64_t addr = 0; addr < 0x8000; addr += 0x11) {
			const char *name = elf_symtab__lookup_vaddr(st, addr, &off);

			if (name)
				sink = strlen(name);
		}
		elf_symtab__free(st);
	}
	(void)sink;
	if (by_id[0])
		unlink(by_id);
	return 0;
}
