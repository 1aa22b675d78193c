// SPDX-License-Identifier: GPL-2.0
/*
 * Memory and time of the symbol readers on hostile files, against harmless
 * files of the same size: written by the hostilelf workload (ELF files) or
 * here (perf maps), read in a child whose peak RSS is measured.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/sym/debugfile.h"
#include "core/sym/dwarfline.h"
#include "core/sym/elfsym.h"
#include "core/lib/clock.h"
#include "core/sym/perfmap.h"
#include "tests/support/measure.h"
#include "tests/support/tests.h"

/* Writes an ELF file with the hostilelf workload; returns its path (static). */
static const char *hostilelf(const char *mode)
{
	static char paths[4][64];
	static int next;
	char *path = paths[next++ % 4];
	char *argv[] = { (char *)workload("hostilelf"), (char *)mode, path, NULL };
	struct run_result r;

	snprintf(path, sizeof(paths[0]), "/tmp/profile-bounds-%s-%d.elf", mode, (int)getpid());
	run_ok(&r, argv, 60);
	run_result_free(&r);
	return path;
}

/* Loads the symbols of path; checks the names of the first and last functions. */
static long load_symbols(const void *arg)
{
	struct elf_symtab *st = elf_symtab__load(arg);
	uint64_t off;
	const char *first, *last;
	long ok;

	if (!st)
		return 10;
	first = elf_symtab__lookup_vaddr(st, 0x1000 + 4, &off);
	last = elf_symtab__lookup_vaddr(st, 0x1000 + 8191 * 16, &off);
	if (!first || !last)
		return 11;
	if (!strcmp(first, "fn_00000000000"))
		ok = !strcmp(last, "fn_00000008191") ? 0 : 12;
	else
		/* Suffixes of one long string, cut, but not to nothing. */
		ok = first[0] == 'f' && strlen(first) == 4096 && last[0] == 'f' ? 0 : 13;
	elf_symtab__free(st);
	return ok;
}

/*
 * 8192 functions named by suffixes of one 128 KiB string (0.45 MB of ELF)
 * took a copy of it each: 1 GB. Names are referenced in the string table.
 */
START_TEST(symbols_naming_one_long_string_cost_what_plain_ones_do)
{
	const char *plain = hostilelf("plain"), *hostile = hostilelf("names");
	struct cost p = measure(load_symbols, plain, 60);
	struct cost h = measure(load_symbols, hostile, 60);

	unlink(plain);
	unlink(hostile);
	ck_assert_msg(h.rss_kb < 2 * p.rss_kb + 16384, "hostile names: %ld KB, plain: %ld KB",
		      h.rss_kb, p.rss_kb);
	ck_assert_msg(h.seconds < 4 * p.seconds + 1, "hostile names: %.2f s, plain: %.2f s",
		      h.seconds, p.seconds);
	ck_assert_int_eq(p.result, 0);
	ck_assert_int_eq(h.result, 0);
}
END_TEST

/* A perf map of size bytes of lines like line (which ends in a newline); returns its path. */
static const char *write_map(const char *kind, size_t size, const char *line)
{
	static char path[2][64];
	static int next;
	char *p = path[next++ % 2], *buf = malloc(1 << 20);
	size_t len = strlen(line), fill = 0;
	FILE *f;

	snprintf(p, sizeof(path[0]), "/tmp/profile-bounds-%s-%d.map", kind, (int)getpid());
	f = fopen(p, "w");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(buf);
	while (fill + len <= (1 << 20)) {
		memcpy(buf + fill, line, len);
		fill += len;
	}
	for (size_t done = 0; done < size; done += fill)
		ck_assert_uint_eq(fwrite(buf, 1, size - done < fill ? size - done : fill, f),
				  size - done < fill ? size - done : fill);
	ck_assert_int_eq(fclose(f), 0);
	free(buf);
	return p;
}

static long load_map(const void *arg)
{
	struct perfmap *pm = perfmap__load_file(arg);
	uint64_t off;
	long ok;

	if (!pm)
		return 10;
	ok = perfmap__lookup(pm, 0x1000, &off) ? 0 : 11;
	perfmap__free(pm);
	return ok;
}

/*
 * 256 MiB of tiny lines took 2.3 GB and 17 s: an entry for each of their
 * 44 million. A map is read up to its first 1 Mi entries (and 64 MiB of
 * names), what a real map of the same size costs.
 */
START_TEST(a_map_of_tiny_lines_costs_what_a_real_one_does)
{
	const char *tiny = write_map("tiny", 256u << 20, "1000 1 a\n");
	struct cost t = measure(load_map, tiny, 100);
	const char *real = write_map("real", 256u << 20,
				     "1000 40 LazyCompile:~processRequest /srv/app/lib/handler.js:42\n");
	struct cost r = measure(load_map, real, 100);

	unlink(tiny);
	unlink(real);
	ck_assert_msg(t.rss_kb < 2 * r.rss_kb + 16384 && t.rss_kb < 256 * 1024,
		      "tiny lines: %ld KB, real ones: %ld KB", t.rss_kb, r.rss_kb);
	ck_assert_msg(t.seconds < 2 * r.seconds + 1, "tiny lines: %.2f s, real ones: %.2f s",
		      t.seconds, r.seconds);
	ck_assert_int_eq(t.result, 0);
	ck_assert_int_eq(r.result, 0);
}
END_TEST

static pid_t sleeper(void)
{
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		pause();
		_exit(0);
	}
	return pid;
}

static void end_sleeper(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* Hard links of one map under several pids were each loaded and kept: now once. */
START_TEST(hard_links_of_one_map_are_loaded_once)
{
	const char *file = write_map("linked", 4096, "1000 40 jitted\n");
	pid_t a = sleeper(), b = sleeper();
	char la[64], lb[64], path[128];
	struct perfmap *pa, *pb;
	const char *warning;
	uint64_t off;

	snprintf(la, sizeof(la), "/tmp/perf-%d.map", (int)a);
	snprintf(lb, sizeof(lb), "/tmp/perf-%d.map", (int)b);
	ck_assert_int_eq(link(file, la), 0);
	ck_assert_int_eq(link(file, lb), 0);
	pa = perfmap__load(a, &warning, path, sizeof(path));
	pb = perfmap__load(b, &warning, path, sizeof(path));
	unlink(la);
	unlink(lb);
	unlink(file);
	end_sleeper(a);
	end_sleeper(b);
	ck_assert_ptr_nonnull(pa);
	ck_assert_ptr_eq(pa, pb);
	ck_assert_str_eq(perfmap__lookup(pb, 0x1010, &off), "jitted");
	perfmap__free(pa);
	/* Still there for the other process. */
	ck_assert_str_eq(perfmap__lookup(pb, 0x1010, &off), "jitted");
	perfmap__free(pb);
}
END_TEST

/* The lifetime checks the symbolizer asks for: the owner it names, a file no older than it. */
START_TEST(a_map_is_checked_against_the_owner_and_start_given)
{
	pid_t a = sleeper();
	char map[64], path[128];
	struct perfmap *pm;
	const char *warning;
	struct timespec now;
	struct stat st;
	FILE *f;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)a);
	f = fopen(map, "w");
	ck_assert_ptr_nonnull(f);
	fputs("1000 40 jitted\n", f);
	/* Root may write any map: as root, the file is given to a test user. */
	if (!geteuid())
		ck_assert_int_eq(fchown(fileno(f), 4242, 4242), 0);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(stat(map, &st), 0);
	clock_gettime(CLOCK_REALTIME, &now);
	/* Another owner than the file's. */
	pm = perfmap__load_checked(a, st.st_uid + 1, 0, 0, &warning, path, sizeof(path));
	ck_assert_ptr_null(pm);
	ck_assert_str_eq(warning, "not owned by the process's user or root");
	/* A process that started after the file was made. */
	pm = perfmap__load_checked(a, st.st_uid, (int64_t)now.tv_sec * 1000000000 + 5000000000LL,
				   0, &warning, path, sizeof(path));
	ck_assert_ptr_null(pm);
	ck_assert_str_eq(warning, "older than the process");
	/* One that started before. */
	pm = perfmap__load_checked(a, st.st_uid, (int64_t)(now.tv_sec - 60) * 1000000000, 0,
				   &warning, path, sizeof(path));
	unlink(map);
	end_sleeper(a);
	ck_assert_ptr_nonnull(pm);
	perfmap__free(pm);
}
END_TEST

/*
 * Issue 32: a pid is read under /proc only while it is the process meant,
 * one that had begun when its image did; a process that began later took
 * the pid, and its root (a mount namespace of its own) is not that image's.
 */
START_TEST(a_map_is_read_under_the_root_of_the_process_meant_only)
{
	pid_t a = sleeper();
	char map[64], path[128], under[128];
	struct perfmap *pm;
	const char *warning;
	int64_t now = clock_ns(CLOCK_REALTIME);
	FILE *f;

	snprintf(map, sizeof(map), "/tmp/perf-%d.map", (int)a);
	snprintf(under, sizeof(under), "/proc/%d/root%s", (int)a, map);
	f = fopen(map, "w");
	ck_assert_ptr_nonnull(f);
	fputs("1000 40 jitted\n", f);
	ck_assert_int_eq(fclose(f), 0);
	/* Begun by now: the process meant. */
	pm = perfmap__load_checked(a, geteuid(), 0, now, &warning, path, sizeof(path));
	ck_assert_ptr_nonnull(pm);
	ck_assert_str_eq(path, under);
	perfmap__free(pm);
	/* Its image began a minute ago, the process at the pid later: not under its root. */
	pm = perfmap__load_checked(a, geteuid(), 0, now - 60000000000LL, &warning, path,
				   sizeof(path));
	ck_assert_str_eq(path, map);
	perfmap__free(pm);
	unlink(map);
	end_sleeper(a);
}
END_TEST

/* Opens the DWARF of path and looks up an address; 0 if it has none, 1 if it has. */
static long open_dwarf(const void *arg)
{
	int fd = elf_dwarf_fd(arg, arg);
	struct dwarf_lines *dl;
	struct src_frame f[DWARF_MAX_FRAMES];

	if (fd < 0)
		return 10;
	dl = dwarf_lines__open(fd, elf_symtab__debug_root());
	if (!dl)
		return 0;
	dwarf_lines__lookup(dl, 0x1000, f, DWARF_MAX_FRAMES);
	dwarf_lines__free(dl);
	return 1;
}

/*
 * 2 MB of ELF whose SHF_COMPRESSED .debug_info claims (and inflates to)
 * 2 GiB took 2 GB: it is refused before anything is inflated, as having no
 * DWARF, where a file of the same size inflating to 8 MiB is read.
 */
START_TEST(compressed_dwarf_inflates_only_within_a_bound)
{
	const char *plain = hostilelf("debug"), *hostile = hostilelf("zdebug");
	struct cost p = measure(open_dwarf, plain, 60);
	struct cost h = measure(open_dwarf, hostile, 60);
	struct stat sp, sh;

	ck_assert_int_eq(stat(plain, &sp), 0);
	ck_assert_int_eq(stat(hostile, &sh), 0);
	unlink(plain);
	unlink(hostile);
	ck_assert_msg(h.rss_kb < 2 * p.rss_kb + 16384,
		      "%lld bytes inflating to 2 GiB: %ld KB; %lld bytes to 8 MiB: %ld KB",
		      (long long)sh.st_size, h.rss_kb, (long long)sp.st_size, p.rss_kb);
	ck_assert_int_eq(h.result, 0);
	ck_assert_int_ne(p.result, 10);
}
END_TEST

/* Source lines of every 4 KiB of the profiler's own code, with the stack the caller has. */
static long lines_on_a_small_stack(const void *arg)
{
	struct rlimit rl = { 64 << 10, 64 << 10 };
	int fd = elf_dwarf_fd(arg, arg);
	struct dwarf_lines *dl;
	struct src_frame f[DWARF_MAX_FRAMES];
	unsigned int found = 0;

	if (fd < 0)
		return -1;
	/* As after ulimit -s 64: the main thread's stack grows no further. */
	if (setrlimit(RLIMIT_STACK, &rl))
		return -2;
	dl = dwarf_lines__open(fd, elf_symtab__debug_root());
	if (!dl)
		return -3;
	for (uint64_t a = 0; a < (4u << 20); a += 4096)
		found += dwarf_lines__lookup(dl, a, f, DWARF_MAX_FRAMES) > 0;
	dwarf_lines__free(dl);
	return found;
}

/* libdw's line-table reader keeps thousands of rows on the stack: ulimit -s 64 crashed it. */
START_TEST(libdw_runs_on_a_stack_of_its_own)
{
	struct cost c = measure(lines_on_a_small_stack, profile_bin(), 120);

	ck_assert_int_gt(c.result, 10);
}
END_TEST

Suite *symbounds_suite(void)
{
	Suite *s = suite_create("symbounds");
	TCase *te = tcase_create("elfnames");
	TCase *tp = tcase_create("perfmap");
	TCase *td = tcase_create("dwarf");

	tcase_set_timeout(te, 120);
	tcase_add_test(te, symbols_naming_one_long_string_cost_what_plain_ones_do);
	suite_add_tcase(s, te);
	tcase_set_timeout(tp, 300);
	tcase_add_test(tp, a_map_of_tiny_lines_costs_what_a_real_one_does);
	tcase_add_test(tp, hard_links_of_one_map_are_loaded_once);
	tcase_add_test(tp, a_map_is_checked_against_the_owner_and_start_given);
	tcase_add_test(tp, a_map_is_read_under_the_root_of_the_process_meant_only);
	suite_add_tcase(s, tp);
	tcase_set_timeout(td, 200);
	tcase_add_test(td, compressed_dwarf_inflates_only_within_a_bound);
	tcase_add_test(td, libdw_runs_on_a_stack_of_its_own);
	suite_add_tcase(s, td);
	return s;
}
