// SPDX-License-Identifier: GPL-2.0
/*
 * The native store on real maps and real processes (issue 45): the rule
 * the in-kernel unwinder will find for a pc of a process's libc, read from
 * the maps as the program reads them (tests/support/native_read.c), is the
 * one unwind_table__lookup finds in libc's compiled table; removing a
 * process frees its rows and index entries; a library two processes map
 * is loaded once. Root: bpf_map_create.
 */
#include <bpf/bpf.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/mapped_array.h"
#include "backend-bpf/native_store.h"
#include "core/proc/proctrack.h"
#include "tests/support/native_read.h"
#include "tests/support/tests.h"
#include "unwind/image.h"
#include "unwind/tables/tables.h"

static unsigned int count_keys(int fd, size_t key_size)
{
	unsigned char key[64], next[64];
	unsigned int n = 0;

	memset(key, 0xff, sizeof(key));
	while (!bpf_map_get_next_key(fd, key, next) && n < 10000000) {
		memcpy(key, next, key_size);
		n++;
	}
	return n;
}

/* Tables go with the last process that maps them here (check_native_grace.c keeps them). */
static const struct native_store_opts no_grace = { .grace_ms = -1 };

struct ours {
	uint64_t bias;
	bool found;
};

static int our_libc(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct ours *o = arg;

	(void)size;
	if (info->dlpi_name && strstr(info->dlpi_name, "libc.so.6")) {
		o->bias = info->dlpi_addr;
		o->found = true;
		return 1;
	}
	return 0;
}

/* Compare the maps' rule with the compiled table's at pid's pc (libc vaddr). */
static void same_rule(const struct native_maps_fds *fds, pid_t pid, const struct unwind_table *t,
		      uint64_t bias, uint64_t vaddr, unsigned int *compared)
{
	struct unwind_rule want;
	struct native_read got;
	int err;

	unwind_table__lookup(t, vaddr, &want);
	err = native_read__lookup(fds, (uint32_t)pid, vaddr + bias, &got);
	ck_assert_msg(!err, "pc 0x%" PRIx64 ": %d", vaddr + bias, err);
	ck_assert_uint_eq(got.page.kind, NATIVE_PAGE_TABLE);
	ck_assert_uint_eq(got.vaddr, vaddr);
	ck_assert_msg(!memcmp(&got.rule, &want, sizeof(want)),
		      "vaddr 0x%" PRIx64 ": maps cfa %u%+d rbp %u%+d, table cfa %u%+d rbp %u%+d",
		      vaddr, got.rule.cfa, got.rule.cfa_off, got.rule.rbp, got.rule.rbp_off,
		      want.cfa, want.cfa_off, want.rbp, want.rbp_off);
	(*compared)++;
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

static void print_binary(void *arg, const char *path, const struct native_binary_info *b)
{
	(void)arg;
	fprintf(stderr, "native_store:   %s: %s (%s), rows %u, rules %u, %" PRIu64
			" bytes, %u processes, compile %.2f ms\n",
		path, b->way == NATIVE_WAY_TABLE ? "table" : b->way == NATIVE_WAY_FP ? "fp" : "none",
		b->why, b->rows, b->rules, b->bytes, b->processes, b->compile_ns / 1e6);
}

static void measure(struct native_store *s, const char *what, pid_t pid)
{
	struct native_store_stats st, before;
	struct timespec t0;
	double ms;

	native_store__stats(s, &before);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(native_store__add_process(s, pid), 0);
	ms = ms_since(&t0);
	native_store__stats(s, &st);
	fprintf(stderr, "native_store: %s: add_process %.1f ms (compiling %.1f); %u tables (%u loaded), %" PRIu64
			" rows, %u rules, %u index, %u pages, %" PRIu64 " bytes\n",
		what, ms, (st.compile_ns - before.compile_ns) / 1e6, st.tables, st.tables_loaded, st.rows, st.rules, st.index, st.pages,
		st.bytes);
}

/* _i 1: rows and rules written through the maps' mapping (BPF_F_MMAPABLE), 0: by syscalls. */
START_TEST(libc_rules_from_the_maps_equal_the_table)
{
	static const char *const fns[] = { "malloc", "free", "memcpy", "strlen", "printf",
					   "nanosleep", "clock_gettime", "pthread_create", "qsort",
					   "fopen", "read", "write", "getpid", "__libc_start_main" };
	uint64_t start, end, pgoff, bias;
	struct native_store_stats st, st1, st2;
	struct native_maps_fds fds;
	struct unwind_table *t = NULL;
	struct unwind_image img;
	struct native_store *s;
	struct native_read got;
	unsigned int compared = 0;
	struct ours ours = { 0 };
	char file[4096], mf[128];
	void *libc;
	pid_t a, b;
	int fd;

	native_read__make_maps(&fds, _i == 1);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ (char *)workload("nofp"), "chain", "30", NULL }, "/nofp");
	measure(s, "nofp", a);
	native_store__stats(s, &st1);
	ck_assert_int_eq(st1.mapped, _i == 1);

	/* libc's table, compiled here from the very file a maps. */
	libc_mapping(a, &start, &end, &pgoff, file, sizeof(file));
	snprintf(mf, sizeof(mf), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)a, start, end);
	fd = open(mf, O_RDONLY | O_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(unwind_image__open_fd(&img, fd), 0);
	close(fd);
	ck_assert_int_eq(unwind_image__bias(&img, start, pgoff, &bias), 0);
	ck_assert_int_eq(unwind_table__compile(&img, &t), 0);

	/*
	 * Exported functions and the bytes after their starts (prologues:
	 * folds, pushes): libc's own, not a sanitizer's interceptors.
	 */
	dl_iterate_phdr(our_libc, &ours);
	ck_assert(ours.found);
	libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	ck_assert_ptr_nonnull(libc);
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *p = dlsym(libc, fns[i]);

		ck_assert_msg(p, "%s", fns[i]);
		for (uint64_t off = 0; off < 96; off++)
			same_rule(&fds, a, t, bias, (uint64_t)(uintptr_t)p - ours.bias + off,
				  &compared);
	}
	/* And all over libc's code, both sides of every page border among them. */
	for (uint64_t pc = start; pc < end; pc += 251)
		same_rule(&fds, a, t, bias, pc - bias, &compared);
	for (uint64_t pc = (start + 0xffff) & ~0xffffull; pc < end; pc += 0x10000) {
		same_rule(&fds, a, t, bias, pc - bias, &compared);
		if (pc > start)	/* a mapping that starts on a 64 KiB border (ASLR: 1 in 16) */
			same_rule(&fds, a, t, bias, pc - 1 - bias, &compared);
	}
	fprintf(stderr, "native_store: %u libc pcs compared with unwind_table__lookup\n", compared);

	/* A second process: libc's table is shared (one more reference, no new rows for it). */
	b = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	measure(s, "/bin/sleep", b);
	native_store__stats(s, &st2);
	ck_assert_uint_eq(st2.processes, 2);
	native_store__each_binary(s, print_binary, NULL);

	/* a gone: its pages and entry go, libc stays for b, nofp's own table goes. */
	native_store__remove_process(s, a);
	ck_assert_int_eq(native_read__lookup(&fds, (uint32_t)a, start, &got), -ENOENT);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_uint_lt(st.rows, st2.rows);
	ck_assert_uint_eq(st.pages, count_keys(fds.pages, sizeof(struct native_page_key)));
	ck_assert_uint_eq(st.index, count_keys(fds.index, sizeof(struct native_index_key)));
	libc_mapping(b, &start, &end, &pgoff, file, sizeof(file));
	ck_assert_int_eq(unwind_image__bias(&img, start, pgoff, &bias), 0);
	for (uint64_t pc = start; pc < end; pc += 4099)
		same_rule(&fds, b, t, bias, pc - bias, &compared);

	/* a again: its table is loaded into the rows it had, libc's stays where it is. */
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	{
		struct native_store_stats again;

		native_store__stats(s, &again);
		ck_assert_uint_eq(again.rows, st2.rows);
		ck_assert_uint_eq(again.tables, st2.tables);
	}
	libc_mapping(a, &start, &end, &pgoff, file, sizeof(file));
	ck_assert_int_eq(unwind_image__bias(&img, start, pgoff, &bias), 0);
	for (uint64_t pc = start; pc < end; pc += 4099)
		same_rule(&fds, a, t, bias, pc - bias, &compared);
	native_store__remove_process(s, a);
	native_store__remove_process(s, b);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.rows, 0);
	ck_assert_uint_eq(st.index, 0);
	ck_assert_uint_eq(st.pages, 0);
	ck_assert_uint_eq(st.rules, 1);
	ck_assert_uint_eq(st.tables, 0);
	ck_assert_uint_eq(count_keys(fds.index, sizeof(struct native_index_key)), 0);
	ck_assert_uint_eq(count_keys(fds.pages, sizeof(struct native_page_key)), 0);
	ck_assert_uint_eq(count_keys(fds.procs, 4), 0);

	stop_child(a);
	stop_child(b);
	dlclose(libc);
	unwind_table__free(t);
	unwind_image__close(&img);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

/* native_epoch's value: what the program's cached rules must carry to stand. */
static uint32_t epoch_of(const struct native_maps_fds *fds)
{
	uint32_t zero = 0, v = 0;

	ck_assert_int_eq(bpf_map_lookup_elem(fds->epoch, &zero, &v), 0);
	return v;
}

/*
 * A sweep drops a process that exited (its tables go with it, nothing left
 * in the maps) and reads again one that ran exec: a shell that execs sleep
 * once the test has read it maps sleep's table afterwards. The epoch moves
 * with every change of native_pages (the cached rules of the old pages go)
 * and only then: a new process's pages, or a read that finds the same,
 * keep every process's cached rules.
 */
START_TEST(sweep_drops_the_exited_and_reads_the_execed_again)
{
	uint32_t e0, e1;
	struct native_maps_fds fds;
	struct native_store_stats st;
	char *sleeper[] = { "sleep", "30", NULL };
	char *later[] = { "sh", "-c", "read x; exec sleep 30", NULL };
	struct native_store *s;
	int pipefd[2];
	pid_t a, b;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped(sleeper, "sleep");
	e0 = epoch_of(&fds);
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	ck_assert_int_eq(native_store__sweep(s), 0);
	ck_assert_int_eq(native_store__refresh_process(s, a), 0);
	ck_assert_uint_eq(epoch_of(&fds), e0);

	/* b: a shell that waits for a line on its stdin, then becomes sleep. */
	ck_assert_int_eq(pipe(pipefd), 0);
	b = fork();
	ck_assert_int_ge(b, 0);
	if (!b) {
		dup2(pipefd[0], 0);
		close(pipefd[1]);
		execvp(later[0], later);
		_exit(126);
	}
	close(pipefd[0]);
	for (int i = 0; i < 500 && native_store__add_process(s, b); i++)
		usleep(10000);
	usleep(100000);	/* its shell's mappings, not fork's copy of the test's */
	ck_assert_int_eq(native_store__refresh_process(s, b), 0);

	e1 = epoch_of(&fds);
	stop_child(a);
	ck_assert_int_eq(native_store__sweep(s), 1);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.swept, 1);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_uint_gt(epoch_of(&fds), e1);
	e1 = epoch_of(&fds);

	ck_assert_int_eq(write(pipefd[1], "\n", 1), 1);
	for (int i = 0; i < 500; i++) {
		char exe[64] = "";
		char path[32];

		snprintf(path, sizeof(path), "/proc/%d/exe", (int)b);
		if (readlink(path, exe, sizeof(exe) - 1) > 0 && strstr(exe, "sleep"))
			break;
		usleep(10000);
	}
	usleep(100000);	/* sleep's own mappings in place */
	ck_assert_int_eq(native_store__sweep(s), 1);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.execs, 1);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_uint_gt(epoch_of(&fds), e1);

	stop_child(b);
	close(pipefd[1]);
	ck_assert_int_eq(native_store__sweep(s), 1);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.rows, 0);
	ck_assert_uint_eq(st.tables, 0);
	ck_assert_uint_eq(count_keys(fds.pages, sizeof(struct native_page_key)), 0);
	ck_assert_uint_eq(count_keys(fds.procs, 4), 0);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

START_TEST(python_and_poll_unknown)
{
	struct native_maps_fds fds;
	struct native_store_stats st;
	struct native_store *s;
	__u32 key, one = 1;
	struct bg_proc bg;
	pid_t py;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	/* Debian's; started once it has imported what it will (no dlopen after the read). */
	bg_start(&bg, (char *[]){ "/usr/bin/python3", "-c",
				  "import json, re, time; print('go', flush=True); time.sleep(30)",
				  NULL });
	ck_assert_str_eq(bg.first_line, "go");
	py = bg.pid;
	measure(s, "python3", py);
	native_store__each_binary(s, print_binary, NULL);
	/* Read again with nothing changed: the same pages. */
	native_store__stats(s, &st);
	ck_assert_int_eq(native_store__refresh_process(s, py), 0);
	{
		struct native_store_stats again;

		native_store__stats(s, &again);
		ck_assert_uint_eq(again.pages, st.pages);
		ck_assert_uint_eq(again.rows, st.rows);
		ck_assert_uint_eq(again.tables, st.tables);
	}
	native_store__remove_process(s, py);

	/* The program asks for py: one read; asked again at once: put off. */
	key = (__u32)py;
	ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
	ck_assert_int_eq(native_store__poll_unknown(s), 1);
	ck_assert_int_eq(count_keys(fds.unknown, 4), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
	ck_assert_int_eq(native_store__poll_unknown(s), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.rate_limited, 1);
	/* Later (NATIVE_REREAD_MS, or NATIVE_REREAD_COST times what its read cost): read again. */
	{
		int got = 0;

		for (int i = 0; i < 50 && !got; i++) {
			usleep((NATIVE_REREAD_MS + 20) * 1000);
			ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
			got = native_store__poll_unknown(s);
		}
		ck_assert_int_eq(got, 1);
	}

	/* Gone: -ESRCH, and nothing of it stays. */
	bg_stop(&bg);
	ck_assert_int_eq(native_store__refresh_process(s, py), -ESRCH);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.rows, 0);
	ck_assert_uint_eq(count_keys(fds.pages, sizeof(struct native_page_key)), 0);
	ck_assert_int_eq(native_store__add_process(s, py), -ESRCH);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

struct libc_way {
	enum native_way way;
	char why[96];
	bool seen;
};

static void find_libc(void *arg, const char *path, const struct native_binary_info *b)
{
	struct libc_way *w = arg;

	if (!strstr(path, "libc.so.6"))
		return;
	w->seen = true;
	w->way = b->way;
	snprintf(w->why, sizeof(w->why), "%s", b->why);
}

START_TEST(over_the_budget_no_table_and_the_tracker_opens)
{
	struct native_store_opts o = { .budget_bytes = 40000, .max_rows = 4000, .grace_ms = -1 };
	struct proctrack *pt = proctrack__new();
	struct libc_way w = { 0 };
	struct native_store_stats st;
	struct native_maps_fds fds;
	uint64_t start, end, pgoff;
	struct native_read got;
	struct native_store *s;
	char file[4096];
	pid_t a;

	ck_assert_ptr_nonnull(pt);
	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &o, pt);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	/* Through the tracker: its files opened at first sight under its rules. */
	measure(s, "/bin/sleep (tracker, 40 KB budget)", a);
	native_store__each_binary(s, print_binary, NULL);
	native_store__each_binary(s, find_libc, &w);
	ck_assert(w.seen);
	/* libc's 14,662 rows fit neither: not loaded at all, its code NO_TABLE, said why. */
	ck_assert_int_eq(w.way, NATIVE_WAY_NONE);
	ck_assert_msg(strstr(w.why, "budget") || strstr(w.why, "no room"), "%s", w.why);
	native_store__stats(s, &st);
	ck_assert_uint_ge(st.budget_refusals, 1);
	ck_assert_uint_le(st.bytes, o.budget_bytes);
	ck_assert_uint_le(st.rows, o.max_rows);
	ck_assert_uint_ge(st.tables_loaded, 1);		/* sleep, ld.so */
	ck_assert_uint_eq(st.trust_refusals, 0);
	libc_mapping(a, &start, &end, &pgoff, file, sizeof(file));
	ck_assert_int_eq(native_read__lookup(&fds, (uint32_t)a, start + 0x1000, &got), 0);
	ck_assert_uint_eq(got.page.kind, NATIVE_PAGE_NO_TABLE);
	native_store__remove_process(s, a);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.rows, 0);
	ck_assert_uint_eq(st.tables, 0);
	stop_child(a);
	native_store__free(s);
	proctrack__free(pt);
	native_read__close_maps(&fds);
}
END_TEST

/*
 * A user's copy of libc (owned by nobody) does not fit that user's share
 * of rows (a quarter of 40,000: libc has 14,662), where root's libc, the
 * same bytes, does: copies of large libraries cannot fill the maps for
 * everyone. Run by ld.so with the copy's directory first.
 */
START_TEST(a_users_files_keep_to_their_share)
{
	struct native_store_opts o = { .max_rows = 40000, .grace_ms = -1 };
	struct native_store_stats st;
	struct native_maps_fds fds;
	struct native_store *s;
	struct libc_way w = { 0 };
	char dir[] = "/tmp/native-share-XXXXXX", copy[64], cmd[256];
	pid_t a, b;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(copy, sizeof(copy), "%s/libc.so.6", dir);
	snprintf(cmd, sizeof(cmd), "cp /lib/x86_64-linux-gnu/libc.so.6 %s", copy);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(chown(copy, 65534, 65534), 0);
	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &o, NULL);
	ck_assert_ptr_nonnull(s);

	a = spawn_mapped((char *[]){ "/lib64/ld-linux-x86-64.so.2", "--library-path", dir, "/bin/sleep",
			      "30", NULL },
		  "/sleep");
	measure(s, "sleep with nobody's libc", a);
	native_store__each_binary(s, print_binary, NULL);
	native_store__each_binary(s, find_libc, &w);
	ck_assert(w.seen);
	ck_assert_int_eq(w.way, NATIVE_WAY_NONE);
	ck_assert_msg(strstr(w.why, "owner's share"), "%s", w.why);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.owner_refusals, 1);
	native_store__remove_process(s, a);
	stop_child(a);

	/* Root's libc: loaded. */
	b = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	measure(s, "sleep", b);
	memset(&w, 0, sizeof(w));
	native_store__each_binary(s, find_libc, &w);
	ck_assert(w.seen);
	ck_assert_int_eq(w.way, NATIVE_WAY_TABLE);
	native_store__remove_process(s, b);
	stop_child(b);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.rows, 0);
	native_store__free(s);
	native_read__close_maps(&fds);
	unlink(copy);
	rmdir(dir);
}
END_TEST

/* Many small executable mappings: SPLIT pages, each file opened once; too many: -E2BIG, nothing left. */
START_TEST(many_mappings_bounded)
{
	struct native_store_stats st;
	struct native_maps_fds fds;
	struct native_store *s;
	struct bg_proc few, many;
	struct timespec t0;
	unsigned int split = 0;
	double ms;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	bg_start(&few, (char *[]){ (char *)workload("manymaps"), "3000", "30", NULL });
	ck_assert_str_eq(few.first_line, "ready");
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ck_assert_int_eq(native_store__add_process(s, few.pid), 0);
	ms = ms_since(&t0);
	native_store__stats(s, &st);
	fprintf(stderr, "native_store: manymaps 3000: add_process %.1f ms, %u pages, %u tables\n",
		ms, st.pages, st.tables);
	ck_assert_uint_ge(st.pages, 3000);
	ck_assert_uint_le(st.tables, 12);	/* 8 files, the binary, libc, ld.so, vdso */
	{
		struct native_page_key k, next;
		struct native_page v;

		memset(&k, 0xff, sizeof(k));
		while (!bpf_map_get_next_key(fds.pages, &k, &next)) {
			ck_assert_int_eq(bpf_map_lookup_elem(fds.pages, &next, &v), 0);
			split += v.kind == NATIVE_PAGE_SPLIT;
			k = next;
		}
	}
	ck_assert_uint_gt(split, 0);
	native_store__remove_process(s, few.pid);
	bg_stop(&few);

	bg_start(&many, (char *[]){ (char *)workload("manymaps"), "20000", "30", NULL });
	ck_assert_str_eq(many.first_line, "ready");
	ck_assert_int_eq(native_store__add_process(s, many.pid), -E2BIG);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.tables, 0);
	ck_assert_uint_eq(st.too_big, 1);	/* counted (-v), not silent */
	ck_assert_uint_eq(count_keys(fds.pages, sizeof(struct native_page_key)), 0);

	/*
	 * Noted at every sample (it is never in native_procs): each refused
	 * read costs its whole /proc/PID/maps, so it is not read again at
	 * every poll past NATIVE_REREAD_MS, but after NATIVE_REREAD_COST times
	 * what the read cost.
	 */
	{
		__u32 key = (__u32)many.pid, one = 1;
		unsigned int reads = 0, polls = 0;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
		ck_assert_int_eq(native_store__poll_unknown(s), 1);
		ms = ms_since(&t0);
		fprintf(stderr, "native_store: manymaps 20000: refused in %.1f ms\n", ms);
		ck_assert_msg(ms * NATIVE_REREAD_COST > 2 * (NATIVE_REREAD_MS + 20),
			      "a refused read too cheap (%.1f ms) to tell", ms);
		for (int i = 0; i < 3; i++) {
			usleep((NATIVE_REREAD_MS + 20) * 1000);
			ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
			reads += native_store__poll_unknown(s);
			polls++;
		}
		fprintf(stderr, "native_store: manymaps 20000: %u reads in %u polls %d ms apart\n",
			reads, polls, NATIVE_REREAD_MS + 20);
		ck_assert_uint_eq(reads, 0);
		native_store__stats(s, &st);
		ck_assert_uint_eq(st.rate_limited, 3);
		ck_assert_uint_eq(st.too_big, 2);
	}
	bg_stop(&many);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

/*
 * A storm of dear pids noted at once (each with more mappings than a
 * process may have: refused after reading them all): a poll stops at its
 * budget, the rest stay noted, pending, for a later poll.
 */
START_TEST(poll_keeps_to_its_budget)
{
	struct native_store_stats st;
	struct native_maps_fds fds;
	struct native_store *s;
	struct bg_proc many[3];
	struct timespec t0;
	unsigned int total = 0;
	__u32 one = 1;
	double ms;
	int got;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	for (int i = 0; i < 3; i++) {
		__u32 key;

		bg_start(&many[i], (char *[]){ (char *)workload("manymaps"), "20000", "30", NULL });
		ck_assert_str_eq(many[i].first_line, "ready");
		key = (__u32)many[i].pid;
		ck_assert_int_eq(bpf_map_update_elem(fds.unknown, &key, &one, BPF_ANY), 0);
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	got = native_store__poll_unknown(s);
	ms = ms_since(&t0);
	fprintf(stderr, "native_store: 3 x manymaps 20000 noted: %d read in %.1f ms\n", got, ms);
	ck_assert_int_ge(got, 1);
	ck_assert_int_lt(got, 3);
	ck_assert_uint_eq(count_keys(fds.unknown, 4), 3 - (unsigned int)got);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.deferred, 3 - (unsigned int)got);
	/* Not due at once; due later, and every pid read in the end. */
	ck_assert(!native_store__pending(s));
	ck_assert_int_eq(native_store__poll_unknown(s), 0);
	total = (unsigned int)got;
	for (int i = 0; i < 100 && total < 3; i++) {
		usleep(20000);
		if (native_store__pending(s))
			total += (unsigned int)native_store__poll_unknown(s);
	}
	ck_assert_uint_eq(total, 3);
	ck_assert_uint_eq(count_keys(fds.unknown, 4), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.too_big, 3);
	for (int i = 0; i < 3; i++)
		bg_stop(&many[i]);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

/* Values written through a window of the map's memory land where a lookup finds them. */
START_TEST(mapped_array_writes_through_a_window)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	uint32_t keys[] = { 2999, 5, 1000, 512 }, vals[] = { 11, 22, 33, 44 }, run[700], got;
	struct mapped_array m, plain;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mapped", 4, 4, 3000, &mm);
	int pfd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "plain", 4, 4, 3000, NULL);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(pfd, 0);
	mapped_array__init(&plain, pfd, 4, 3000);
	ck_assert(!plain.ok);
	mapped_array__init(&m, fd, 8, 3000);	/* not its value size */
	ck_assert(!m.ok);
	mapped_array__init(&m, fd, 4, 3000);
	ck_assert(m.ok);
	ck_assert_uint_eq(m.stride, 8);
	/* Scattered keys (one window from page 0 to the last), then a run across pages. */
	ck_assert_int_eq(mapped_array__write(&m, keys, 0, vals, 4, 4), 0);
	for (uint32_t i = 0; i < 700; i++)
		run[i] = 0x10000 + i;
	ck_assert_int_eq(mapped_array__write(&m, NULL, 1500, run, 4, 700), 0);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(bpf_map_lookup_elem(fd, &keys[i], &got), 0);
		ck_assert_uint_eq(got, vals[i]);
	}
	for (uint32_t k = 1499; k <= 2200; k++) {
		ck_assert_int_eq(bpf_map_lookup_elem(fd, &k, &got), 0);
		ck_assert_uint_eq(got, k >= 1500 && k < 2200 ? 0x10000 + (k - 1500) : 0);
	}
	/* Past the map: nothing written. */
	keys[0] = 3000;
	ck_assert_int_eq(mapped_array__write(&m, keys, 0, vals, 4, 1), -E2BIG);
	ck_assert_int_eq(mapped_array__write(&m, NULL, 2990, run, 4, 11), -E2BIG);
	close(fd);
	close(pfd);
}
END_TEST

/*
 * A run longer than a window (256 KiB: 32,768 values at 8 bytes) and keys
 * that jump back and forth between windows land where lookups find them,
 * at every window's edges too.
 */
START_TEST(mapped_array_writes_a_large_run_in_windows)
{
	LIBBPF_OPTS(bpf_map_create_opts, mm, .map_flags = BPF_F_MMAPABLE);
	enum { MAX = 200000, FIRST = 1000, N = 150000 };
	uint32_t keys[] = { MAX - 1, 3, 100000, 32767, 32768, 0 }, vals[] = { 1, 2, 3, 4, 5, 6 };
	uint32_t *run = malloc(N * sizeof(*run)), got;
	struct mapped_array m;
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "mapped_big", 4, 4, MAX, &mm);

	ck_assert_ptr_nonnull(run);
	ck_assert_int_ge(fd, 0);
	mapped_array__init(&m, fd, 4, MAX);
	ck_assert(m.ok);
	for (uint32_t i = 0; i < N; i++)
		run[i] = 0xa0000000u + i;
	ck_assert_int_eq(mapped_array__write(&m, NULL, FIRST, run, 4, N), 0);
	for (uint32_t k = 0; k < FIRST + N + 10; k++) {
		ck_assert_int_eq(bpf_map_lookup_elem(fd, &k, &got), 0);
		ck_assert_uint_eq(got, k >= FIRST && k < FIRST + N ? 0xa0000000u + (k - FIRST) : 0);
	}
	ck_assert_int_eq(mapped_array__write(&m, keys, 0, vals, 4, 6), 0);
	for (int i = 0; i < 6; i++) {
		ck_assert_int_eq(bpf_map_lookup_elem(fd, &keys[i], &got), 0);
		ck_assert_uint_eq(got, vals[i]);
	}
	close(fd);
	free(run);
}
END_TEST

static pid_t copies_pid;

static bool copies_for(void *ctx, pid_t tgid)
{
	(void)ctx;
	return tgid == copies_pid;
}

/*
 * A process the run says is left to stack copies (Node.js's, whose
 * JavaScript frames are read from the copy) is never loaded: its
 * native_procs entry says copies_only (the program sends its every sample
 * as a copy, and notes it no more), with no pages; one loaded before is
 * dropped at its next read (it ran exec into node), and the entry goes
 * with the process.
 */
START_TEST(a_process_left_to_copies_is_never_loaded)
{
	struct native_maps_fds fds;
	struct native_store_stats st;
	struct native_proc val;
	char *sleeper[] = { "sleep", "30", NULL };
	struct native_store *s;
	__u32 key, one;
	pid_t a, b;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &no_grace, NULL);
	ck_assert_ptr_nonnull(s);
	native_store__copies_only(s, copies_for, NULL);
	a = spawn_mapped(sleeper, "sleep");
	b = spawn_mapped(sleeper, "sleep");
	copies_pid = b;
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	ck_assert_int_eq(native_store__add_process(s, b), 0);
	key = (__u32)a;
	ck_assert_int_eq(bpf_map_lookup_elem(fds.procs, &key, &val), 0);
	ck_assert_uint_eq(val.copies_only, 0);
	ck_assert_uint_gt(val.nr_pages, 0);
	key = (__u32)b;
	ck_assert_int_eq(bpf_map_lookup_elem(fds.procs, &key, &val), 0);
	ck_assert_uint_eq(val.copies_only, 1);
	ck_assert_uint_eq(val.nr_pages, 0);
	ck_assert_int_ne(bpf_map_lookup_elem(fds.unknown, &key, &one), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 1);
	ck_assert_uint_eq(st.copies_only, 1);
	copies_pid = a;
	ck_assert_int_eq(native_store__refresh_process(s, a), 0);
	key = (__u32)a;
	ck_assert_int_eq(bpf_map_lookup_elem(fds.procs, &key, &val), 0);
	ck_assert_uint_eq(val.copies_only, 1);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.pages, 0);
	ck_assert_uint_eq(st.copies_only, 2);
	/* Gone: its entry goes with it at the sweep. */
	stop_child(b);
	ck_assert_int_ge(native_store__sweep(s), 1);
	key = (__u32)b;
	ck_assert_int_ne(bpf_map_lookup_elem(fds.procs, &key, &val), 0);
	stop_child(a);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

Suite *native_store_suite(void)
{
	Suite *s = suite_create("native_store");
	TCase *tc = tcase_create("maps");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, libc_rules_from_the_maps_equal_the_table, 0, 2);
	tcase_add_test(tc, mapped_array_writes_through_a_window);
	tcase_add_test(tc, python_and_poll_unknown);
	tcase_add_test(tc, over_the_budget_no_table_and_the_tracker_opens);
	tcase_add_test(tc, many_mappings_bounded);
	tcase_add_test(tc, poll_keeps_to_its_budget);
	tcase_add_test(tc, a_users_files_keep_to_their_share);
	tcase_add_test(tc, sweep_drops_the_exited_and_reads_the_execed_again);
	tcase_add_test(tc, a_process_left_to_copies_is_never_loaded);
	tcase_add_test(tc, mapped_array_writes_a_large_run_in_windows);
	suite_add_tcase(s, tc);
	return s;
}
