// SPDX-License-Identifier: GPL-2.0
/*
 * The native store's grace for tables no process maps (issue 45): kept and
 * taken again by the next process without a compile, dropped by a sweep
 * once the grace is over, and dropped at once where a new table needs
 * their room. Real processes, real BPF maps, as check_native_store.c.
 */
#include <bpf/bpf.h>
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "backend-bpf/native_store.h"
#include "tests/support/native_read.h"
#include "tests/support/tests.h"

struct way_of {
	const char *name;	/* a part of the path */
	bool seen;
	enum native_way way;
	unsigned int processes;
};

static void find(void *arg, const char *path, const struct native_binary_info *b)
{
	struct way_of *w = arg;

	if (!strstr(path, w->name))
		return;
	w->seen = true;
	w->way = b->way;
	w->processes = b->processes;
}

/* pid's libc has rows: its entry leads to a table, not to frame pointers. */
static void libc_loaded(const struct native_maps_fds *fds, pid_t pid)
{
	uint64_t start, end, pgoff;
	struct native_read got;
	char file[4096];

	libc_mapping(pid, &start, &end, &pgoff, file, sizeof(file));
	ck_assert_int_eq(native_read__lookup(fds, (uint32_t)pid, start + 0x1000, &got), 0);
	ck_assert_int_ge(got.row, 0);
}

START_TEST(kept_taken_again_then_swept)
{
	struct native_store_opts o = { .grace_ms = 300 };
	struct native_store_stats first, st;
	struct native_maps_fds fds;
	struct native_store *s;
	pid_t a, b;

	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &o, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	native_store__stats(s, &first);
	ck_assert_uint_ge(first.tables_loaded, 3);	/* sleep, libc, ld.so (and the vdso) */
	ck_assert_uint_eq(first.compiled, first.tables);

	/* Its last process gone: every loaded table stays, rows and index entries with it. */
	native_store__remove_process(s, a);
	stop_child(a);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.processes, 0);
	ck_assert_uint_eq(st.tables_idle, first.tables_loaded);
	ck_assert_uint_eq(st.rows, first.rows);
	ck_assert_uint_eq(st.index, first.index);
	ck_assert_uint_eq(st.pages, 0);

	/* The next sleep takes them again: nothing compiled, the same rows, and they read. */
	b = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	ck_assert_int_eq(native_store__add_process(s, b), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.compiled, first.compiled);
	ck_assert_uint_eq(st.taken_again, first.tables_loaded);
	ck_assert_uint_eq(st.tables_idle, 0);
	ck_assert_uint_eq(st.rows, first.rows);
	libc_loaded(&fds, b);

	/* Within the grace a sweep keeps them; after it, they go. */
	native_store__remove_process(s, b);
	stop_child(b);
	native_store__sweep(s);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.tables_idle, first.tables_loaded);
	usleep(400 * 1000);
	native_store__sweep(s);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.tables, 0);
	ck_assert_uint_eq(st.tables_idle, 0);
	ck_assert_uint_eq(st.rows, 0);
	ck_assert_uint_eq(st.index, 0);
	ck_assert_uint_eq(st.rules, 1);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

/*
 * native_rows sized to sleep's tables exactly: a kept sleep table is
 * dropped for the next program's own, which would otherwise find no room.
 */
START_TEST(kept_tables_give_way)
{
	struct native_store_opts o = { .grace_ms = 60000 };
	struct native_store_stats first, st;
	struct native_maps_fds fds;
	struct native_store *s;
	struct way_of nofp = { .name = "/nofp" }, sleep_way = { .name = "/sleep" };
	pid_t a, b;

	/* sleep's rows, measured in a store of the default sizes */
	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &o, NULL);
	ck_assert_ptr_nonnull(s);
	a = spawn_mapped((char *[]){ "/bin/sleep", "30", NULL }, "/sleep");
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	native_store__stats(s, &first);
	native_store__free(s);
	native_read__close_maps(&fds);

	o.max_rows = (unsigned int)first.rows;
	native_read__make_maps(&fds, false);
	s = native_store__new(&fds, &o, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(native_store__add_process(s, a), 0);
	native_store__stats(s, &st);
	ck_assert_uint_eq(st.rows, first.rows);
	ck_assert_uint_eq(st.budget_refusals, 0);
	native_store__remove_process(s, a);
	stop_child(a);

	b = spawn_mapped((char *[]){ (char *)workload("nofp"), "chain", "30", NULL }, "/nofp");
	ck_assert_int_eq(native_store__add_process(s, b), 0);
	native_store__stats(s, &st);
	native_store__each_binary(s, find, &nofp);
	native_store__each_binary(s, find, &sleep_way);
	ck_assert(nofp.seen);
	ck_assert_int_eq(nofp.way, NATIVE_WAY_TABLE);
	ck_assert(!sleep_way.seen);		/* dropped for it */
	ck_assert_uint_eq(st.tables_idle, 0);
	ck_assert_uint_eq(st.budget_refusals, 0);
	ck_assert_uint_ge(st.taken_again, 2);	/* libc and ld.so: not compiled again */
	ck_assert_uint_le(st.rows, first.rows);
	libc_loaded(&fds, b);
	stop_child(b);
	native_store__free(s);
	native_read__close_maps(&fds);
}
END_TEST

Suite *native_grace_suite(void)
{
	Suite *s = suite_create("native_grace");
	TCase *tc = tcase_create("grace");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, kept_taken_again_then_swept);
	tcase_add_test(tc, kept_tables_give_way);
	suite_add_tcase(s, tc);
	return s;
}
