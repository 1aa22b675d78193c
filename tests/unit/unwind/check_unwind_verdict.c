// SPDX-License-Identifier: GPL-2.0
/*
 * --unwind auto's verdicts (unwind/tables/verdict.c, app/run/unwind_verdict.c):
 * what a binary's fp share makes of it, -v's words, one compile per file,
 * and the backend config each mode asks for.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "app/run/unwind_verdict.h"
#include "tests/support/tests.h"

static struct unwind_verdict binary(int err, uint32_t rbp_frames, uint32_t functions, bool keeps)
{
	return (struct unwind_verdict){
		.err = err,
		.share = { .rbp_frames = rbp_frames, .functions = functions, .keeps = keeps },
		.rows = 14662,
		.bytes = 72528,
	};
}

START_TEST(what_a_binary_needs)
{
	struct unwind_verdict keeps = binary(0, 52, 53, true), nofp = binary(0, 181, 3713, false);
	struct unwind_verdict none = binary(-ENOENT, 0, 0, false), bad = binary(-EBADMSG, 0, 0, false);
	struct unwind_verdict unread = binary(-EACCES, 0, 0, false);

	ck_assert(!unwind_verdict__needs_tables(&keeps));
	ck_assert(unwind_verdict__needs_tables(&nofp));
	/* Copies of a binary without tables would be walked by frame pointers anyway. */
	ck_assert(!unwind_verdict__needs_tables(&none));
	ck_assert(!unwind_verdict__needs_tables(&bad));
	/* Unread: copies are never wrong. */
	ck_assert(unwind_verdict__needs_tables(&unread));
}
END_TEST

START_TEST(the_words_of_v)
{
	struct unwind_verdict keeps = binary(0, 52, 53, true), nofp = binary(0, 181, 3713, false);
	struct unwind_verdict none = binary(-ENOENT, 0, 0, false);
	char buf[256];

	unwind_verdict__describe(&keeps, UNWIND_WAY_FP, buf, sizeof(buf));
	ck_assert_str_eq(buf, "frame pointers (52 of 53 functions set up rbp)");
	unwind_verdict__describe(&nofp, UNWIND_WAY_COPIES, buf, sizeof(buf));
	ck_assert_str_eq(buf, "copies (.eh_frame over each sample's stack copy; 181 of 3713 "
			      "functions set up rbp)");
	unwind_verdict__describe(&keeps, UNWIND_WAY_COPIES, buf, sizeof(buf));
	ck_assert_str_eq(buf, "copies (.eh_frame over each sample's stack copy; 52 of 53 functions "
			      "set up rbp)");
	unwind_verdict__describe(&nofp, UNWIND_WAY_TABLES, buf, sizeof(buf));
	ck_assert_str_eq(buf, ".eh_frame tables (14662 rows, 72528 bytes; 181 of 3713 functions "
			      "set up rbp)");
	unwind_verdict__describe(&none, UNWIND_WAY_COPIES, buf, sizeof(buf));
	ck_assert_str_eq(buf, "frame pointers (no .eh_frame or .debug_frame)");
}
END_TEST

static const struct unwind_binary *of_file(struct unwind_verdicts *v, const char *path)
{
	const struct unwind_binary *b;
	struct stat st;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fstat(fd, &st), 0);
	b = unwind_verdicts__binary(v, fd, path, st.st_dev, st.st_ino);
	close(fd);
	ck_assert_ptr_nonnull(b);
	return b;
}

START_TEST(each_file_is_compiled_once_and_judged_by_its_frames)
{
	struct unwind_verdicts *v = unwind_verdicts__new();
	const struct unwind_binary *fp, *nofp, *libc;

	ck_assert_ptr_nonnull(v);
	fp = of_file(v, workload("fpfree"));
	ck_assert_int_eq(fp->v.err, 0);
	ck_assert(fp->v.share.keeps);
	nofp = of_file(v, workload("nofpsort"));
	ck_assert_int_eq(nofp->v.err, 0);
	ck_assert(!nofp->v.share.keeps);
	libc = of_file(v, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	ck_assert(!libc->v.share.keeps && unwind_verdict__needs_tables(&libc->v));
	/* The same file again: the same verdict, not a new compile. */
	ck_assert_ptr_eq(of_file(v, "/usr/lib/x86_64-linux-gnu/libc.so.6"), libc);
	/* Our own process maps libc: it needs copies. */
	ck_assert(unwind_verdicts__needs_copies(v, getpid()));
	unwind_verdicts__free(v);
}
END_TEST

START_TEST(the_config_of_each_mode)
{
	struct run_opts o = { .unwind = UNWIND_FP };
	struct backend_config c = { 0 };
	struct unwind_verdicts *v = unwind_verdicts__new();

	unwind_choice__config(&o, &c);
	ck_assert(!c.dwarf && !c.native_unwind);
	o.unwind = UNWIND_DWARF;
	unwind_choice__config(&o, &c);
	ck_assert(c.dwarf && !c.native_unwind);
	unwind_verdicts__config(v, &o, &c);
	ck_assert_ptr_null(c.needs_copies);
	/* auto: copies where the tables are not unwound in the kernel, per process where it can. */
	o.unwind = UNWIND_AUTO;
	o.node = NODE_OFF;
	unwind_choice__config(&o, &c);
	ck_assert(c.dwarf && c.native_unwind);
	unwind_verdicts__config(v, &o, &c);
	ck_assert_ptr_nonnull(c.needs_copies);
	/* Node's processes are asked about where JavaScript frames are wanted (--node). */
	ck_assert_ptr_null(c.copies_for_interp);
	o.node = NODE_MIXED;
	unwind_choice__config(&o, &c);
	unwind_verdicts__config(v, &o, &c);
	ck_assert_ptr_nonnull(c.copies_for_interp);
	/* This test runs no Node; a pid that is no process is no Node's either. */
	ck_assert(!c.copies_for_interp(c.copies_for_interp_ctx, getpid()));
	ck_assert(!c.copies_for_interp(c.copies_for_interp_ctx, 0));
	ck_assert(!c.copies_for_interp(c.copies_for_interp_ctx, 0x3fffffff));
	/* -K: no user stacks to unwind. */
	o.kernel_only = true;
	unwind_choice__config(&o, &c);
	ck_assert(!c.dwarf && !c.native_unwind && !c.needs_copies && !c.copies_for_interp);
	unwind_verdicts__free(v);
}
END_TEST

Suite *unwind_verdict_suite(void)
{
	Suite *s = suite_create("unwind_verdict");
	TCase *tc = tcase_create("verdict");

	tcase_add_test(tc, what_a_binary_needs);
	tcase_add_test(tc, the_words_of_v);
	tcase_add_test(tc, each_file_is_compiled_once_and_judged_by_its_frames);
	tcase_add_test(tc, the_config_of_each_mode);
	suite_add_tcase(s, tc);
	return s;
}
