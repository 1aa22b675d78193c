// SPDX-License-Identifier: GPL-2.0
/*
 * No error message without its reason (issue 20): a backend plan or a
 * module's errmsg that carries only an errno still prints that errno,
 * never "cannot run here: " with nothing after it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app/run/choose.h"
#include "core/lib/log.h"
#include "tests/support/tests.h"

/* A backend whose probe fails with ENOMEM and writes no reason, as one out of memory may. */
static void probe_without_why(const struct backend_config *cfg, struct backend_plan *plan)
{
	plan->err = -ENOMEM;
}

static const struct backend_ops silent = { .name = "silent", .probe = probe_without_why };

/* What fn(arg) writes on stderr. */
static char *stderr_of(void (*fn)(const char *), const char *arg)
{
	FILE *tmp = tmpfile();
	int saved = dup(2);
	char *text = calloc(1, 4096);

	ck_assert_ptr_nonnull(tmp);
	fflush(stderr);
	dup2(fileno(tmp), 2);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	rewind(tmp);
	ck_assert_int_ge(fread(text, 1, 4095, tmp), 0);
	fclose(tmp);
	return text;
}

static void choose(const char *name)
{
	const struct backend_ops *const backends[] = { &silent, NULL };
	struct backend_config cfg = { 0 };
	struct backend_plan plan;

	ck_assert_ptr_null(choose_backend(name, backends, &cfg, &plan));
}

START_TEST(a_plan_without_why_prints_its_errno)
{
	char *named = stderr_of(choose, "silent"), *any = stderr_of(choose, NULL);

	ck_assert_str_eq(named, "profile: backend silent cannot run here: Cannot allocate memory\n");
	ck_assert_str_eq(any, "profile: no backend can run here: silent: Cannot allocate memory\n");
	free(named);
	free(any);
}
END_TEST

START_TEST(an_errmsg_without_text_gives_the_errno)
{
	struct errmsg em = { "" };

	ck_assert_str_eq(errmsg__reason(&em, -ENOSPC), "No space left on device");
	ck_assert_str_eq(errmsg__reason(NULL, -EIO), "Input/output error");
	ck_assert_str_eq(errmsg__reason(&em, 0), "no reason given");
	errmsg__set(&em, "the reason");
	ck_assert_str_eq(errmsg__reason(&em, -EIO), "the reason");
}
END_TEST

static void warn_about(const char *path)
{
	pr_warn("warning: ignoring %s: not owned by the process's user or root\n", path);
}

static void warn_long(const char *path)
{
	pr_warn("%s%s\n", path, "\x1b[2J");
}

/*
 * Messages name files others control (issue 32): a path's controls, C0 but
 * for newlines and tabs and C1, reach the terminal escaped, however long
 * the message.
 */
START_TEST(a_message_names_files_with_their_controls_escaped)
{
	char *text = stderr_of(warn_about, "/tmp/perf-1.map\x1b]0;x\x07\xc2\x9b" "2J\tz");
	char longpath[3000];

	ck_assert_str_eq(text, "profile: warning: ignoring /tmp/perf-1.map\\x1b]0;x\\x07\\xc2\\x9b2J\tz: "
			       "not owned by the process's user or root\n");
	free(text);
	memset(longpath, 'a', sizeof(longpath) - 1);
	longpath[sizeof(longpath) - 1] = '\0';
	longpath[2000] = '\x1b';
	text = stderr_of(warn_long, longpath);
	ck_assert_uint_eq(strlen(text), strlen("profile: ") + 2999 + 3 + strlen("\\x1b[2J\n"));
	ck_assert_ptr_null(strchr(text, '\x1b'));
	free(text);
}
END_TEST

Suite *reasons_suite(void)
{
	Suite *s = suite_create("reasons");
	TCase *tc = tcase_create("reasons");

	tcase_add_test(tc, a_plan_without_why_prints_its_errno);
	tcase_add_test(tc, an_errmsg_without_text_gives_the_errno);
	tcase_add_test(tc, a_message_names_files_with_their_controls_escaped);
	suite_add_tcase(s, tc);
	return s;
}
