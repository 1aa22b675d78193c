// SPDX-License-Identifier: GPL-2.0
/* Inodes for PERF_RECORD_MMAP (kernels before 3.16) from /proc/PID/maps. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backend-perfring/mapinode.h"
#include "tests/support/tests.h"

START_TEST(finds_a_live_processs_file)
{
	struct map_inode_cache c;
	char line[4200], path[4096];
	uint64_t start, end, pgoff, ino, got_dev, got_ino;
	unsigned int maj, min;
	bool found = false;
	struct stat st;
	FILE *f = fopen("/proc/self/maps", "r");

	ck_assert_ptr_nonnull(f);
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %x:%x %" SCNu64
				     " %4095s", &start, &end, &pgoff, &maj, &min, &ino, path) == 7 &&
			ino && path[0] == '/' && strstr(line, "r-xp");
	fclose(f);
	ck_assert(found);
	ck_assert_int_eq(stat(path, &st), 0);

	map_inode__init(&c);
	ck_assert_int_eq(map_inode__lookup(&c, getpid(), start, pgoff, path, &got_dev, &got_ino),
			 0);
	ck_assert_uint_eq(got_ino, st.st_ino);
	ck_assert_uint_eq(got_dev, makedev(maj, min));
	/* Another offset or path is another mapping: not guessed. */
	ck_assert_int_eq(map_inode__lookup(&c, getpid(), start, pgoff + 4096, path, &got_dev,
					   &got_ino), -ENOENT);
	ck_assert_int_eq(map_inode__lookup(&c, getpid(), start, pgoff, "/nonexistent", &got_dev,
					   &got_ino), -ENOENT);
	map_inode__fini(&c);
}
END_TEST

START_TEST(a_process_gone_gives_no_inode)
{
	struct map_inode_cache c;
	uint64_t dev, ino;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (!pid)
		_exit(0);
	ck_assert_int_eq(waitpid(pid, NULL, 0), pid);
	map_inode__init(&c);
	/* The file is there, but nothing says it is the one the process mapped. */
	ck_assert_int_eq(map_inode__lookup(&c, pid, 0x400000, 0, "/bin/sh", &dev, &ino), -ENOENT);
	map_inode__fini(&c);
}
END_TEST

START_TEST(parses_deleted_files_and_hostile_lines)
{
	static const char maps[] =
		"garbage line\n"
		"00400000-00452000 r-xp 00000000 08:02 0 /bin/zero-inode\n"
		"7f0000000000-7f0000001000 r-xp 00001000 fd:01 4242 /tmp/a b (deleted)\n"
		"7f0000002000-7f0000003000 r-xp 00002000 fd:01 77 /tmp/a b\n"
		"7f0000004000-7f0000005000 r-xp 00000000 fd:01 99 /tmp/last";	/* no newline */
	uint64_t dev, ino;

	ck_assert_int_eq(map_inode__find(maps, sizeof(maps) - 1, 0x7f0000000000, 0x1000,
					 "/tmp/a b", &dev, &ino), 0);
	ck_assert_uint_eq(ino, 4242);
	ck_assert_uint_eq(dev, makedev(0xfd, 1));
	ck_assert_int_eq(map_inode__find(maps, sizeof(maps) - 1, 0x7f0000002000, 0x2000,
					 "/tmp/a b", &dev, &ino), 0);
	ck_assert_uint_eq(ino, 77);
	ck_assert_int_eq(map_inode__find(maps, sizeof(maps) - 1, 0x7f0000004000, 0, "/tmp/last",
					 &dev, &ino), 0);
	ck_assert_uint_eq(ino, 99);
	/* Inode 0 is no answer; a path that is a prefix is another file. */
	ck_assert_int_eq(map_inode__find(maps, sizeof(maps) - 1, 0x400000, 0, "/bin/zero-inode",
					 &dev, &ino), -ENOENT);
	ck_assert_int_eq(map_inode__find(maps, sizeof(maps) - 1, 0x7f0000004000, 0, "/tmp/las",
					 &dev, &ino), -ENOENT);
}
END_TEST

Suite *mapinode_suite(void)
{
	Suite *s = suite_create("mapinode");
	TCase *tc = tcase_create("maps");

	tcase_add_test(tc, finds_a_live_processs_file);
	tcase_add_test(tc, a_process_gone_gives_no_inode);
	tcase_add_test(tc, parses_deleted_files_and_hostile_lines);
	suite_add_tcase(s, tc);
	return s;
}
