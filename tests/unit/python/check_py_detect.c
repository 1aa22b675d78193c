// SPDX-License-Identifier: GPL-2.0
/*
 * Detection on real files: every installed libpython and Debian's static
 * python3.11 are interpreters of their version; executables that link
 * libpython, other libraries and non-ELF files are not; builds named
 * free-threaded or debug are refused with the reason. Also glibc's tid
 * offset and the NSpid map.
 */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "interp/python/elfscan.h"
#include "interp/python/python.h"
#include "tests/unit/python/pyenv.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static int detect_path(const char *open_path, const char *name, struct py_interp *pi,
		       struct errmsg *why)
{
	int fd = open(open_path, O_RDONLY | O_CLOEXEC), ret;

	ck_assert_int_ge(fd, 0);
	why->text[0] = '\0';
	ret = py_detect(fd, name, 0x7f0000000000ULL, pi, why);
	/* The caller's descriptor is left open, where it was. */
	ck_assert_int_eq(lseek(fd, 0, SEEK_CUR), 0);
	close(fd);
	return ret;
}

START_TEST(interpreters_of_each_version_are_found)
{
	const char *minor = py_test_minors[_i];
	char exe_buf[512], lib[1024];
	const char *exe = py_test_interpreter(minor, exe_buf, sizeof(exe_buf));
	struct errmsg why;
	struct py_interp pi;
	int want_minor;

	if (!exe) {
		fprintf(stderr, "py_detect: no Python %s here: skipped\n", minor);
		return;
	}
	want_minor = strcmp(minor, "debian") ? atoi(minor + 2) : 11;
	if (strcmp(minor, "debian")) {
		/* pyenv's executable runs libpython: it is not the interpreter, its library is. */
		ck_assert_int_eq(detect_path(exe, exe, &pi, &why), 0);
		ck_assert(py_test_library(exe, lib, sizeof(lib)));
	} else {
		snprintf(lib, sizeof(lib), "%s", exe);
	}
	ck_assert_msg(detect_path(lib, lib, &pi, &why) == 1, "%s: %s", lib, why.text);
	ck_assert_int_eq(pi.major, minor[0] == '2' ? 2 : 3);
	ck_assert_int_eq(pi.minor, want_minor);
	ck_assert_ptr_eq(pi.layout, py_layout__for_version(pi.major, pi.minor));
	ck_assert(pi.shared == !!strcmp(minor, "debian"));
	ck_assert_uint_ne(pi.code_type, 0);
	ck_assert_uint_ne(pi.str_type, 0);
	ck_assert_uint_ne(pi.bytes_type, 0);
	if (pi.layout->runtime_interp_head >= 0) {
		ck_assert_uint_ne(pi.runtime, 0);
	} else {
		ck_assert_uint_ne(pi.interp_head, 0);
		ck_assert_uint_ne(pi.tstate_current, 0);
	}
	if (pi.minor >= 11) {
		ck_assert_int_eq(pi.version_from, PY_VERSION_FROM_PY_VERSION);
		ck_assert_uint_eq(pi.hexversion >> 16, 0x300u | pi.minor);
		ck_assert_int_ge(pi.micro, 0);
	}
	/* The eval loop: a range in the process (bias added), its cold part where GCC split one. */
	ck_assert_uint_ge(pi.nr_eval, 1);
	ck_assert_uint_gt(pi.eval[0].start, 0x7f0000000000ULL);
	ck_assert(py_interp__in_eval(&pi, pi.eval[0].start));
	ck_assert(!py_interp__in_eval(&pi, pi.eval[0].end));
	if (strcmp(minor, "debian") && (pi.minor == 11 || pi.minor == 12))
		ck_assert_uint_eq(pi.nr_eval, 2);
}
END_TEST

START_TEST(builds_that_cannot_be_read_are_refused_with_the_reason)
{
	char exe_buf[512];
	const char *exe = py_test_interpreter("debian", exe_buf, sizeof(exe_buf));
	struct py_interp pi;
	struct errmsg why;
	Elf *elf;
	int fd, major, minor, micro;

	if (!exe) {
		fprintf(stderr, "py_detect: no Debian python3.11 here: skipped\n");
		return;
	}
	/* An executable has no soname: its file name is its name. */
	ck_assert_int_eq(detect_path(exe, "/opt/py/bin/python3.11t", &pi, &why), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why.text, "free-threaded"));
	ck_assert_int_eq(detect_path(exe, "/usr/bin/python3.11d", &pi, &why), -ENOTSUP);
	ck_assert_ptr_nonnull(strstr(why.text, "debug build"));
	/* Its name says little, Py_Version all. */
	ck_assert_int_eq(detect_path(exe, "/usr/bin/python", &pi, &why), 1);
	ck_assert_int_eq(pi.minor, 11);
	/* The last resort, a lone version string in .rodata. */
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	ck_assert(elf_version(EV_CURRENT) != EV_NONE);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_int_eq(py_elf__rodata_version(elf, &major, &minor, &micro), 0);
	ck_assert_int_eq(major * 100 + minor, 311);
	ck_assert_int_eq(micro, pi.micro);
	elf_end(elf);
	close(fd);
}
END_TEST

START_TEST(other_files_are_not_interpreters)
{
	char path[64];
	struct py_interp pi;
	struct errmsg why;
	int fd;

	ck_assert_int_eq(detect_path(LIBC, LIBC, &pi, &why), 0);
	ck_assert_int_eq(detect_path("/bin/true", "/bin/true", &pi, &why), 0);
	snprintf(path, sizeof(path), "/tmp/profile-py-notelf-%d", (int)getpid());
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
	ck_assert_int_eq(write(fd, "#!/bin/sh\n", 10), 10);
	close(fd);
	ck_assert_int_eq(detect_path(path, "libpython3.12.so.1.0", &pi, &why), -ENOEXEC);
	unlink(path);
}
END_TEST

START_TEST(glibc_tid_offset_and_nspid)
{
	struct py_nstid ids[64];
	uint32_t off = 0;
	int fd = open(LIBC, O_RDONLY | O_CLOEXEC), n;
	bool found = false;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(py_glibc_tid_offset(fd, &off), 0);
	ck_assert_uint_eq(off, PY_GLIBC_TID_OFFSET);
	close(fd);
	fd = open("/bin/true", O_RDONLY | O_CLOEXEC);
	ck_assert_int_eq(py_glibc_tid_offset(fd, &off), -ENOENT);
	close(fd);
	n = py_nstids(getpid(), ids, 64);
	ck_assert_int_ge(n, 1);
	for (int i = 0; i < n; i++)
		if (ids[i].host_tid == (uint32_t)syscall(SYS_gettid))
			found = true;
	ck_assert(found);
	ck_assert_int_lt(py_nstids(0x7ffffff0, ids, 64), 0);
}
END_TEST

Suite *py_detect_suite(void)
{
	Suite *s = suite_create("py_detect");
	TCase *tc = tcase_create("files");

	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, interpreters_of_each_version_are_found, 0, PY_TEST_NR_MINORS);
	tcase_add_test(tc, builds_that_cannot_be_read_are_refused_with_the_reason);
	tcase_add_test(tc, other_files_are_not_interpreters);
	tcase_add_test(tc, glibc_tid_offset_and_nspid);
	suite_add_tcase(s, tc);
	return s;
}
