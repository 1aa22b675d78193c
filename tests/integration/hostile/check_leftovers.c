// SPDX-License-Identifier: GPL-2.0
/*
 * Memory bounded by what is live (issue 32, trust round 3): what an exited
 * process left in the profiler (its mappings' paths, the room its records
 * took) goes with its grace. A user's process mapped 200,000 files once
 * each under 3.8 KB paths in under a second; root's profile held 760 MB
 * more for the rest of the run (the path pool was never pruned, and the
 * record batches kept the size of the burst).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-leftovers-XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-leftovers-XXXXXX");
}

/* The resident KB the scenario printed as "NAME=KB" (-1 if not). */
static long rss_of(const char *name)
{
	char key[32];
	const char *at;

	snprintf(key, sizeof(key), "%s=", name);
	at = strstr(r.out, key);
	return at ? atol(at + strlen(key)) : -1;
}

/*
 * Two profiles at once, each of a command that maps 20,000 files once
 * each (one over the other) and sleeps till told: under 3.8 KB paths
 * (user 12345's deep directory), or under 16-byte ones (the harmless
 * run). Their resident sizes 9 s after the mapping ended, past the grace,
 * made 5 s for the test (profile-seams; 30 s otherwise) and settled
 * within a sixth of it. Paths kept would be 75 MB, several times the
 * harmless profile's whole size.
 * Under AddressSanitizer, what is freed waits in its quarantine (256 MB)
 * and the pages stay resident: the profiles run without quarantine and
 * with freed pages given back, so that the sizes mean what they do
 * without the sanitizer (other builds ignore ASAN_OPTIONS).
 */
START_TEST(an_exited_processs_long_paths_are_let_go)
{
	const char *backend = test_backends[_i];
	char script[2048];
	long hostile, harmless;

	snprintf(script, sizeof(script),
		 "cd %s && mkdir long short && chown 12345 long short || exit 1; "
		 "export ASAN_OPTIONS=\"$ASAN_OPTIONS:quarantine_size_mb=0:"
		 "allocator_release_to_os_interval_ms=100\"; "
		 "run() { PROFILE_TEST_SETTLE_GRACE_MS=5000 %s --backend %s -F 49 -f -- "
		 "setpriv --reuid 12345 --regid 12345 --clear-groups "
		 "sh -c \"%s 20000 %s/$1 $2; sleep 60 & echo \\$! > %s/$1/sleep; "
		 "touch %s/$1/done; wait\" > $1.out 2> $1.err & }; "
		 "run long; L=$!; run short short; S=$!; "
		 "while [ ! -e long/done ] || [ ! -e short/done ]; do sleep 0.2; done; sleep 9; "
		 "echo hostile=$(awk '/VmRSS/{print $2}' /proc/$L/status); "
		 "echo harmless=$(awk '/VmRSS/{print $2}' /proc/$S/status); "
		 /* The reports are written at the signal; the commands end when their sleeps do. */
		 "kill -INT $L $S; kill $(cat long/sleep short/sleep); wait $L; echo exit=$?; "
		 "cat long.err",
		 dir, seams_bin(), backend, workload("manypaths"), dir, dir, dir);
	run_cmd((char *[]){ "/bin/sh", "-c", script, NULL }, 150, 0, &r);
	fprintf(stderr, "leftovers: %s: %s%s", backend, r.out, r.err);
	hostile = rss_of("hostile");
	harmless = rss_of("harmless");
	ck_assert_msg(hostile > 0 && harmless > 0, "no sizes: %s %s", r.out, r.err);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", r.out);
	ck_assert_msg(hostile <= 2 * harmless, "%ld KB held after the grace, %ld KB harmless",
		      hostile, harmless);
}
END_TEST

Suite *leftovers_suite(void)
{
	Suite *s = suite_create("leftovers");
	TCase *tc = tcase_create("leftovers");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 200);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, an_exited_processs_long_paths_are_let_go, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
