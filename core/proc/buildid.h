/* SPDX-License-Identifier: GPL-2.0 */
/*
 * GNU build-ids (NT_GNU_BUILD_ID): what names a binary's contents. Read
 * from an ELF file's PT_NOTE segments, as the kernel reads it for its
 * mmap records (5.12+): a few bounded reads, not a parse of the whole
 * file. The file may be anyone's: every offset, size and alignment is
 * checked against what was read.
 */
#ifndef CORE_PROC_BUILDID_H
#define CORE_PROC_BUILDID_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ld writes 16 (md5, uuid) or 20 (sha1) bytes; --build-id=0xHEX any length. */
#define BUILD_ID_MAX 64

struct build_id {
	uint8_t size;		/* 0: none */
	uint8_t data[BUILD_ID_MAX];
};

/*
 * The build-id of the ELF file open as fd (pread: the offset is not
 * moved). 1 when found, 0 when the file has none (or is not a native-endian
 * ELF file), -errno when it could not be read.
 */
int build_id__read_fd(int fd, struct build_id *out);
/* The same for an ELF image in memory (tests, fuzzing). */
int build_id__read_mem(const void *image, size_t size, struct build_id *out);

bool build_id__equal(const struct build_id *a, const struct build_id *b);
/* Lower-case hex into hex (2 * size + 1 bytes at least, else cut); "" for none. */
void build_id__hex(const struct build_id *b, char *hex, size_t len);

#endif
