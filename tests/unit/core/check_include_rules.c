// SPDX-License-Identifier: GPL-2.0
/*
 * The include rules of the tree (scripts/check-includes.sh): the real tree
 * passes them, and a copy of it fails them as soon as one include points
 * up a floor (also between rooms of one floor), a rule points up, or a
 * folder is on no floor. The script runs on a copy in a temporary
 * directory, found there with find (not git).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support/tests.h"

static char tree[64];
static struct run_result r;

static const char *srcdir(void)
{
	const char *d = getenv("PROFILE_SRCDIR");

	return d ? d : ".";
}

/* sh -c script, with $S the source tree and $T the copy. */
static void sh(const char *script)
{
	char env[512], *cmd;

	run_result_free(&r);
	snprintf(env, sizeof(env), "S='%s'; T='%s'; ", srcdir(), tree);
	cmd = malloc(strlen(env) + strlen(script) + 1);
	ck_assert_ptr_nonnull(cmd);
	strcpy(cmd, env);
	strcat(cmd, script);
	run_cmd((char *[]){ "/bin/sh", "-c", cmd, NULL }, 60, 0, &r);
	free(cmd);
}

static void copy_tree(void)
{
	strcpy(tree, "/tmp/profile-includes-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(tree));
	sh("mkdir \"$T/scripts\" && cp \"$S/scripts/check-includes.sh\" \"$T/scripts/\" && "
	   "cd \"$S\" && cp -r app core backend-bpf backend-perfring unwind compat bpf interp "
	   "\"$T/\" && find \"$T\" -name '*.o' -delete");
	ck_assert_msg(r.exit_code == 0, "copy: %s", r.err);
}

static void remove_tree(void)
{
	sh("rm -rf \"$T\"");
	run_result_free(&r);
}

/* Runs the copy's check on the copy; its exit status. */
static int check_copy(void)
{
	sh("sh \"$T/scripts/check-includes.sh\" \"$T\"");
	return r.exit_code;
}

START_TEST(the_tree_passes)
{
	ck_assert_msg(check_copy() == 0, "%s", r.err);
	ck_assert_str_eq(r.err, "");
}
END_TEST

/* One include added to a file of the copy: refused, with this message. */
static const struct {
	const char *file;
	const char *include;
	const char *says;
} upward[] = {
	/* core/ using the top floor: the arrow issue 47 removed. */
	{ "core/model/resolve.c", "app/run/run.h", "points up, from core/model" },
	{ "core/lib/log.h", "compat/cgroup.h", "points up, from core/lib" },
	/* A backend's header in the interpreters' room, below the backends. */
	{ "interp/python/walk.c", "backend-bpf/bpfbackend.h", "points up, from interp/python" },
	/* Rooms of one floor do not include each other. */
	{ "unwind/walk.c", "interp/python/python.h", "points up, from unwind" },
	{ "core/output/folded.c", "core/input/read.h", "points up, from core/output" },
	/* Down a floor, but past what the room's rule allows. */
	{ "backend-bpf/drain.c", "backend-perfring/decode.h", "backend-bpf may include only" },
};

START_TEST(an_upward_include_is_refused)
{
	char script[512];

	snprintf(script, sizeof(script), "printf '#include \"%s\"\\n' >> \"$T/%s\"",
		 upward[_i].include, upward[_i].file);
	sh(script);
	ck_assert_int_eq(r.exit_code, 0);
	ck_assert_int_eq(check_copy(), 1);
	ck_assert_msg(strstr(r.err, upward[_i].says) && strstr(r.err, upward[_i].file),
		      "%s including %s: %s", upward[_i].file, upward[_i].include, r.err);
}
END_TEST

START_TEST(a_rule_pointing_up_is_refused)
{
	sh("sed -i 's|^core/agg: core/agg/|core/agg: app/run/opts.h core/agg/|' "
	   "\"$T/scripts/check-includes.sh\"");
	ck_assert_int_eq(check_copy(), 1);
	ck_assert_msg(strstr(r.err, "rules: core/agg may not include app/run/opts.h"), "%s", r.err);
}
END_TEST

START_TEST(a_folder_on_no_floor_is_refused)
{
	sh("mkdir \"$T/core/newroom\" && printf '#include \"core/lib/log.h\"\\n' > "
	   "\"$T/core/newroom/x.c\"");
	ck_assert_int_eq(check_copy(), 1);
	ck_assert_msg(strstr(r.err, "directory core/newroom is no room on a floor"), "%s", r.err);
}
END_TEST

Suite *include_rules_suite(void)
{
	Suite *s = suite_create("include_rules");
	TCase *tc = tcase_create("rules");

	tcase_add_checked_fixture(tc, copy_tree, remove_tree);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, the_tree_passes);
	tcase_add_loop_test(tc, an_upward_include_is_refused, 0, sizeof(upward) / sizeof(upward[0]));
	tcase_add_test(tc, a_rule_pointing_up_is_refused);
	tcase_add_test(tc, a_folder_on_no_floor_is_refused);
	suite_add_tcase(s, tc);
	return s;
}
