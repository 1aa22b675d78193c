// SPDX-License-Identifier: GPL-2.0
/*
 * Issue 46 row 2: what a hostile Python process can make root's profile
 * hold. User 65534 makes 8,192 code objects sharing one 65,000-byte line
 * table (tests/workloads/python/linetables.py, 16 MB of its own memory) and
 * runs them all; root profiles it beside an honest victim (user 1500,
 * deep.py's chain of 40 functions). A table copied per code object made
 * root's profile 517-530 MB; held once per content it is 9-11 MB, as for
 * ordinary tables. The victim's stacks come out exact, the attacker's
 * frames keep their lines. With a distinct table each (8,192 x 65,000
 * bytes), the process's budget of names and line tables (32 MiB) holds,
 * and -v names the pid and uid that filled it. Debian's python3.11: user
 * 65534 cannot read pyenv's under /root.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/integration/python/pyrun.h"
#include "tests/support/measure.h"

/*
 * Root's profile of the two, at most: measured 9-11 MB with the table held
 * once (each backend), 530 MB when copied per code object, 41 MB with
 * 8,192 distinct tables (32 MiB of them held).
 */
#define SHARED_MAX_KB (40L << 10)
#define DISTINCT_MAX_KB (72L << 10)

#define AS_USER(uid) "/usr/bin/setpriv", "--reuid=" uid, "--regid=" uid, "--clear-groups"

/* The workloads copied where users 65534 and 1500 read them, and the directory theirs to write. */
static void copy_workloads(void)
{
	static const char *const files[] = { "linetables.py", "deep.py", "truth.py" };
	char cmd[1024];

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(cmd, sizeof(cmd), "cp '%s' '%s/'", pyt_workload(files[i]), pyt_dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	ck_assert_int_eq(chmod(pyt_dir, 0777), 0);
}

static void run_attack(int backend, bool distinct)
{
	const char *be = test_backends[backend];
	char py[256], script[128], deep[128], truth[128], victim_cmd[1024], pids[64];
	char fails[4096] = "";
	struct bg_proc attacker, victim;
	struct pyt_stack t[4];
	struct pyt_match m;
	long max_kb = distinct ? DISTINCT_MAX_KB : SHARED_MAX_KB;
	pid_t attacker_pid;
	int nr;

	if (!pyt_interpreter("pylinetables", "debian", py, sizeof(py)))
		return;
	copy_workloads();
	snprintf(script, sizeof(script), "%s/linetables.py", pyt_dir);
	snprintf(deep, sizeof(deep), "%s/deep.py", pyt_dir);
	snprintf(truth, sizeof(truth), "%s/deep.truth", pyt_dir);
	bg_start(&attacker, (char *[]){ AS_USER("65534"), py, script, "20", "8192", "65000",
					distinct ? "distinct" : "shared", NULL });
	ck_assert_str_eq(attacker.first_line, "ready");
	snprintf(victim_cmd, sizeof(victim_cmd),
		 "echo ready; PROFILE_TRUTH='%s' exec /usr/bin/setpriv --reuid=1500 --regid=1500 "
		 "--clear-groups '%s' '%s' 20 40 chain", truth, py, deep);
	bg_start(&victim, (char *[]){ "/bin/sh", "-c", victim_cmd, NULL });
	attacker_pid = attacker.pid;
	snprintf(pids, sizeof(pids), "%d,%d", (int)attacker_pid, (int)victim.pid);
	run_cmd((char *[]){ (char *)profile_bin(), "-v", "--backend", (char *)be, "-f", "-F",
			    "499", "-p", pids, "6", NULL }, 60, 0, &pyt_r);
	bg_stop(&attacker);
	bg_stop(&victim);
	fprintf(stderr, "pylinetables %s %s: profile's peak RSS %ld KB (at most %ld)\n", be,
		distinct ? "distinct" : "shared", pyt_r.rss_kb, max_kb);
	if (pyt_r.exit_code)
		pyt_fail(fails, sizeof(fails), "profile exited %d\n", pyt_r.exit_code);
	/*
	 * Under AddressSanitizer each table read and dropped waits in its
	 * quarantine, beside the shadow memory: 370-410 MB measured whatever
	 * is held, so the bound says nothing there; the other checks stand.
	 */
	if (!TESTS_UNDER_ASAN && pyt_r.rss_kb > max_kb)
		pyt_fail(fails, sizeof(fails), "root's profile peaked at %ld KB (at most %ld)\n",
			 pyt_r.rss_kb, max_kb);

	/* The victim's chain of 40, exact, beside the attack. */
	nr = pyt_read_truth(truth, t, 4);
	if (nr <= 0 || !pyt_find(t, (size_t)nr, "chain_leaf")) {
		pyt_fail(fails, sizeof(fails), "the victim recorded no chain_leaf\n");
	} else {
		pyt_match(pyt_r.out, pyt_find(t, (size_t)nr, "chain_leaf"), &m);
		fprintf(stderr, "pylinetables %s: victim's chain_leaf: %llu of %llu exact\n", be,
			(unsigned long long)m.exact, (unsigned long long)m.candidates);
		if (!m.exact || m.exact * 10 < m.candidates * 9)
			pyt_fail(fails, sizeof(fails), "victim's chain_leaf: %llu of %llu exact\n",
				 (unsigned long long)m.exact, (unsigned long long)m.candidates);
	}
	if (nr > 0)
		pyt_truth_free(t, (size_t)nr);

	if (!distinct) {
		/* One table held serves every code object: the attacker's frames keep lines. */
		if (!folded_count(pyt_r.out, "hop (linetables.py:17);hop (linetables.py:17)"))
			pyt_fail(fails, sizeof(fails), "no attacker's stack with its lines\n");
	} else {
		/* Who filled the budget, by pid and uid. */
		char want[96];

		snprintf(want, sizeof(want), "python: pid %d (uid 65534): ", (int)attacker_pid);
		if (!strstr(pyt_r.err, want))
			pyt_fail(fails, sizeof(fails), "-v does not say \"%s...\"\n", want);
	}
	pyt_done("pylinetables", distinct ? "distinct" : "shared", be, be, fails);
}

START_TEST(shared_line_table_is_held_once)
{
	run_attack(_i, false);
}
END_TEST

START_TEST(distinct_line_tables_stop_at_the_budget)
{
	run_attack(_i, true);
}
END_TEST

Suite *pylinetables_suite(void)
{
	Suite *s = suite_create("pylinetables");
	TCase *tc = tcase_create("attack");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, pyt_setup, pyt_teardown);
	tcase_add_loop_test(tc, shared_line_table_is_held_once, 0, 2);
	tcase_add_loop_test(tc, distinct_line_tables_stop_at_the_budget, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
