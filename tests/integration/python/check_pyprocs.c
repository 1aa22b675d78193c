// SPDX-License-Identifier: GPL-2.0
/*
 * A crowd of one user's processes cannot take the Python frames of
 * another's (issue 46 row 3). uid 65534 starts 1,100 processes that map
 * Debian's libpython3.11 (workloads/pyprocs.c): without running an
 * interpreter ("dlopen"), or each a fork of one that runs one ("init");
 * two seconds into a system-wide run, root starts a service (python3.11
 * copied as python-rootsvc) whose thread spins in rootsvc_spin(). Before,
 * every one of the crowd counted as a Python process and the bpf backend's
 * table of 1,024 was full before the service was seen: none of its samples
 * had Python frames. Now a process is one once it runs an interpreter, and
 * each owner's processes have an equal share of the table: the service
 * keeps its frames on both backends, and -v says who filled the table.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/clock.h"
#include "tests/integration/python/pyrun.h"

#define CROWD "1100"
#define LIBPYTHON "/usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0"
#define SERVICE "/usr/bin/python3.11"

static const char *const modes[] = { "dlopen", "init" };

/* Sum of the counts of folded lines of comm whose stack holds needle (any, if NULL). */
static uint64_t comm_count(const char *folded, const char *comm, const char *needle)
{
	size_t len = strlen(comm);
	uint64_t n = 0;

	for (const char *l = folded; l && *l;) {
		const char *end = strchr(l, '\n'), *sp;

		end = end ? end : l + strlen(l);
		sp = end;
		while (sp > l && sp[-1] != ' ')
			sp--;
		if ((size_t)(end - l) > len && !strncmp(l, comm, len) && l[len] == ';' && sp > l) {
			char line[4096];

			snprintf(line, sizeof(line), "%.*s", (int)(sp - l), l);
			if (!needle || strstr(line, needle))
				n += strtoull(sp, NULL, 10);
		}
		l = *end ? end + 1 : end;
	}
	return n;
}

/*
 * uid 65534's crowd of n processes of mode (workloads/pyprocs.c) into
 * crowd; root's service, python3.11 named python-rootsvc spinning in
 * rootsvc_spin() for 8 s from 2 s on, into svc. false: skipped.
 */
static bool start_crowd(struct bg_proc *crowd, struct bg_proc *svc, const char *mode,
			const char *n)
{
	char script[512], service[256], cmd[600], ready[32];

	if (access(LIBPYTHON, R_OK) || access(SERVICE, X_OK)) {
		fprintf(stderr, "pyprocs: %s or %s missing: skipped\n", LIBPYTHON, SERVICE);
		return false;
	}
	/* A name of its own: the suites' other interpreters are python3.11 too. */
	snprintf(service, sizeof(service), "%s/python-rootsvc", pyt_dir);
	snprintf(cmd, sizeof(cmd), "cp %s %s", SERVICE, service);
	ck_assert_int_eq(system(cmd), 0);
	bg_start(crowd, (char *[]){ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
				    "--clear-groups", (char *)workload("pyprocs"), LIBPYTHON,
				    (char *)mode, (char *)n, NULL });
	snprintf(ready, sizeof(ready), "ready %s", n);
	ck_assert_msg(!strcmp(crowd->first_line, ready), "pyprocs: %s", crowd->first_line);
	/* The service comes 2 s into the run: after the crowd was found, as a restarted one. */
	snprintf(script, sizeof(script),
		 "echo started; sleep 2; exec %s -c '\nimport time\ndef rootsvc_spin(end):\n"
		 "    while time.time() < end: pass\nrootsvc_spin(time.time() + 8)'",
		 service);
	bg_start(svc, (char *[]){ "/bin/sh", "-c", script, NULL });
	return true;
}

/* Whether most of the service's samples (at least 30 of them) have its Python frame. */
static void check_service(const char *folded, char *fails, size_t len)
{
	uint64_t all = comm_count(folded, "python-rootsvc", NULL);
	uint64_t framed = comm_count(folded, "python-rootsvc", "rootsvc_spin (<string>:");

	/*
	 * About 500 samples of 5-6 s of a spinning thread at 99 Hz; 45 beside
	 * a load average of 13 (on 2 CPUs), where the same run before the
	 * change saw none: the run started sampling after the service ended.
	 */
	if (all < 30)
		pyt_fail(fails, len, "only %llu samples of the service; ", (unsigned long long)all);
	/* Its first samples come before it is found (its interpreter starting). */
	if (framed * 100 < all * 70)
		pyt_fail(fails, len, "%llu of the service's %llu samples in rootsvc_spin; ",
			 (unsigned long long)framed, (unsigned long long)all);
	fprintf(stderr, "pyprocs: %llu of the service's %llu samples with its frames\n",
		(unsigned long long)framed, (unsigned long long)all);
}

START_TEST(a_crowd_of_python_processes_leaves_a_services_frames)
{
	const char *be = test_backends[_i / 2], *mode = modes[_i % 2];
	char fails[1024] = "";
	struct bg_proc crowd, svc;

	if (!start_crowd(&crowd, &svc, mode, "1100"))
		return;
	run_cmd(PYT_PROFILE("--backend", (char *)be, "-v", "-f", "-F", "99", "8"), 120, 0, &pyt_r);
	bg_stop(&svc);
	bg_stop(&crowd);
	ck_assert_msg(pyt_r.exit_code == 0, "exit %d: %.2000s", pyt_r.exit_code, pyt_r.err);
	check_service(pyt_r.out, fails, sizeof(fails));
	if (!strcmp(mode, "dlopen") && strstr(pyt_r.err, "uid 65534 ran"))
		pyt_fail(fails, sizeof(fails), "processes that run no interpreter took room; ");
	pyt_done("pyprocs", mode, be, "", fails);
}
END_TEST

/*
 * Issue 46 row 4: 500 processes of uid 65534, each with 4,096 thread
 * states (workloads/pyprocs.c "threads"). Before, the run read every one
 * of them before sampling started and again every second: a 9 s run took
 * 44 s (9.5 s of system time) beside a load of 8-20, and honoured SIGINT
 * late; the service started meanwhile had no frames. Now the run reads at
 * most 250 ms of them before the first sample and 20 ms a tick after,
 * each process's list again later the more it costs: a SIGINT 5 s into
 * the run ends it within seconds, and the service keeps its frames.
 */
START_TEST(a_crowd_of_thread_states_stalls_neither_sampling_nor_a_signal)
{
	const char *be = test_backends[_i];
	char fails[1024] = "";
	struct bg_proc crowd, svc;
	int64_t t0, took;

	if (!start_crowd(&crowd, &svc, "threads", "500"))
		return;
	t0 = mono_ms();
	run_cmd(PYT_PROFILE("--backend", (char *)be, "-v", "-f", "-F", "99", "30"), 120, 8,
		&pyt_r);
	took = mono_ms() - t0;
	bg_stop(&svc);
	bg_stop(&crowd);
	ck_assert_msg(pyt_r.exit_code == 0, "exit %d: %.2000s", pyt_r.exit_code, pyt_r.err);
	check_service(pyt_r.out, fails, sizeof(fails));
	/* SIGINT at 8 s; set-up (500 processes' maps read) and the report take 2-4 s here. */
	if (took > 14000)
		pyt_fail(fails, sizeof(fails), "SIGINT at 8 s, ended at %.1f s; ", took / 1000.0);
	fprintf(stderr, "pyprocs: %s, threads: SIGINT at 8 s, ended at %.1f s\n", be,
		took / 1000.0);
	pyt_done("pyprocs", "threads", be, "", fails);
}
END_TEST

Suite *pyprocs_suite(void)
{
	Suite *s = suite_create("pyprocs");
	TCase *tc = tcase_create("crowd");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, pyt_setup, pyt_teardown);
	tcase_add_loop_test(tc, a_crowd_of_python_processes_leaves_a_services_frames, 0, 4);
	tcase_add_loop_test(tc, a_crowd_of_thread_states_stalls_neither_sampling_nor_a_signal, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
