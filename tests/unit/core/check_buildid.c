// SPDX-License-Identifier: GPL-2.0
/*
 * The build-id reader of the process tracker (core/proc/buildid.h): the
 * same build-ids as binutils' readelf on real binaries, none where a file
 * has none, and nothing read outside a file that lies about its layout.
 */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/proc/buildid.h"
#include "tests/support/tests.h"

/* What readelf -n says the build-id of path is, "" if none. */
static void readelf_build_id(const char *path, char *hex, size_t len)
{
	char cmd[512], line[512];
	FILE *f;

	hex[0] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		const char *p = strstr(line, "Build ID: ");

		if (p)
			snprintf(hex, len, "%.*s", (int)strcspn(p + 10, "\n"), p + 10);
	}
	pclose(f);
}

static int read_path(const char *path, struct build_id *bid)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret;

	ck_assert_int_ge(fd, 0);
	ret = build_id__read_fd(fd, bid);
	close(fd);
	return ret;
}

START_TEST(the_build_ids_readelf_reads)
{
	const char *paths[] = { workload("busy"), workload("libspin.so"), "/bin/true",
				"/lib/x86_64-linux-gnu/libc.so.6", "/lib64/ld-linux-x86-64.so.2" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++) {
		char want[160], got[2 * BUILD_ID_MAX + 1];
		struct build_id bid;

		readelf_build_id(paths[i], want, sizeof(want));
		ck_assert_msg(want[0], "%s: readelf shows no build-id", paths[i]);
		ck_assert_int_eq(read_path(paths[i], &bid), 1);
		build_id__hex(&bid, got, sizeof(got));
		ck_assert_str_eq(got, want);
	}
}
END_TEST

START_TEST(files_without_one_have_none)
{
	char dir[] = "/tmp/profile-buildid-XXXXXX", path[128], cmd[512];
	struct build_id bid;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/nonote", dir);
	snprintf(cmd, sizeof(cmd), "objcopy --remove-section .note.gnu.build-id '%s' '%s'",
		 workload("busy"), path);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(read_path(path, &bid), 0);
	ck_assert_uint_eq(bid.size, 0);
	ck_assert_int_eq(read_path("/etc/passwd", &bid), 0);	/* not ELF */
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* The headers of an ELF64 image: one PT_NOTE segment at 0x100 of note_len bytes. */
static size_t note_image(unsigned char *img, uint64_t note_len, uint64_t align)
{
	Elf64_Ehdr eh = { .e_phoff = sizeof(Elf64_Ehdr),
			  .e_phentsize = sizeof(Elf64_Phdr),
			  .e_phnum = 1,
			  .e_ehsize = sizeof(Elf64_Ehdr) };
	Elf64_Phdr ph = { .p_type = PT_NOTE, .p_offset = 0x100, .p_filesz = note_len,
			  .p_align = align };

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + sizeof(eh), &ph, sizeof(ph));
	return 0x100;
}

static size_t put_note(unsigned char *p, uint32_t namesz, uint32_t descsz, uint32_t type,
		       const char *name, uint8_t fill, size_t align)
{
	Elf64_Nhdr nh = { namesz, descsz, type };
	size_t off = (sizeof(nh) + namesz + align - 1) & ~(align - 1);

	memcpy(p, &nh, sizeof(nh));
	memcpy(p + sizeof(nh), name, strlen(name) + 1);
	memset(p + off, fill, descsz);
	return (off + descsz + align - 1) & ~(align - 1);
}

/* Exactly size bytes on the heap: AddressSanitizer sees any read past the image. */
static int read_exact(const unsigned char *img, size_t size, struct build_id *bid)
{
	unsigned char *copy = malloc(size ? size : 1);
	int ret;

	memcpy(copy, img, size);
	ret = build_id__read_mem(copy, size, bid);
	free(copy);
	return ret;
}

START_TEST(notes_are_walked_within_the_segment)
{
	unsigned char img[0x400] = { 0 };
	struct build_id bid;
	size_t at, n;

	/* Another note first, then the build-id, in a segment aligned to 8 (GNU properties). */
	at = note_image(img, 0, 8);
	n = put_note(img + at, 4, 12, 5 /* NT_GNU_PROPERTY_TYPE_0 */, "GNU", 0xee, 8);
	n += put_note(img + at + n, 4, 20, NT_GNU_BUILD_ID, "GNU", 0xab, 8);
	note_image(img, n, 8);
	ck_assert_int_eq(read_exact(img, at + n, &bid), 1);
	ck_assert_uint_eq(bid.size, 20);
	ck_assert_uint_eq(bid.data[19], 0xab);
	/* The padding after it cut: found; its last byte cut: none, nothing read past the end. */
	ck_assert_int_eq(read_exact(img, at + n - 4, &bid), 1);
	ck_assert_int_eq(read_exact(img, at + n - 5, &bid), 0);
	/* A description longer than a build-id: none. */
	at = note_image(img, 0, 4);
	n = put_note(img + at, 4, 65, NT_GNU_BUILD_ID, "GNU", 1, 4);
	note_image(img, n, 4);
	ck_assert_int_eq(read_exact(img, at + n, &bid), 0);
	/* Sizes that would wrap an offset: none. */
	note_image(img, 0x200, 4);
	memcpy(img + at, &(Elf64_Nhdr){ 0xfffffffcu, 20, NT_GNU_BUILD_ID }, sizeof(Elf64_Nhdr));
	memcpy(img + at + sizeof(Elf64_Nhdr), "GNU", 4);
	ck_assert_int_eq(read_exact(img, sizeof(img), &bid), 0);
	memcpy(img + at, &(Elf64_Nhdr){ 4, 0xffffffffu, NT_GNU_BUILD_ID }, sizeof(Elf64_Nhdr));
	ck_assert_int_eq(read_exact(img, sizeof(img), &bid), 0);
	/* Another owner's note of the same type: not a GNU build-id. */
	n = put_note(img + at, 4, 20, NT_GNU_BUILD_ID, "GNV", 1, 4);
	note_image(img, n, 4);
	ck_assert_int_eq(read_exact(img, at + n, &bid), 0);
	/* A segment that starts past the end of the file: none. */
	note_image(img, 0x40, 4);
	ck_assert_int_eq(read_exact(img, 0xc0, &bid), 0);
}
END_TEST

/* Every prefix of a real binary: the build-id or none, never a read past the prefix. */
START_TEST(every_cut_of_a_binary_reads_within_it)
{
	unsigned char *img = malloc(8192);
	struct build_id whole, bid;
	int fd = open(workload("busy"), O_RDONLY | O_CLOEXEC);
	ssize_t n;

	ck_assert_int_ge(fd, 0);
	n = pread(fd, img, 8192, 0);
	close(fd);
	ck_assert_int_eq(build_id__read_mem(img, (size_t)n, &whole), 1);
	for (ssize_t len = 0; len <= n; len++) {
		int ret = read_exact(img, (size_t)len, &bid);

		ck_assert(ret == 0 || (ret == 1 && build_id__equal(&bid, &whole)));
	}
	free(img);
}
END_TEST

Suite *buildid_suite(void)
{
	Suite *s = suite_create("buildid");
	TCase *tc = tcase_create("buildid");

	tcase_add_test(tc, the_build_ids_readelf_reads);
	tcase_add_test(tc, files_without_one_have_none);
	tcase_add_test(tc, notes_are_walked_within_the_segment);
	tcase_add_test(tc, every_cut_of_a_binary_reads_within_it);
	suite_add_tcase(s, tc);
	return s;
}
