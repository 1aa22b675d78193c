// SPDX-License-Identifier: GPL-2.0
/*
 * Frames are named from the very file that was mapped (issue 20, "identity,
 * not paths"): a binary replaced at its path (renamed over, as an upgrade
 * does) after its process ran must not lend its symbols to that process's
 * samples. The profiler's fd budget is exhausted on purpose (a small
 * RLIMIT_NOFILE: the binaries of the processes already running take it),
 * so that the file is looked for again by path at the end.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-identity-XXXXXX";
static const char *backend;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[128];

	run_result_free(&r);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-identity-XXXXXX");
}

/* Whether name is a defined function symbol of the ELF file at path (nm). */
static bool has_symbol(const char *path, const char *name)
{
	char cmd[512], line[512];
	bool found = false;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm --defined-only '%s' 2>/dev/null", path);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		char *sym = strrchr(line, ' ');

		line[strcspn(line, "\n")] = '\0';
		if (sym && !strcmp(sym + 1, name))
			found = true;
	}
	pclose(f);
	return found;
}

/*
 * Every frame of the lines of comm "prog" that names a function of the
 * replacement (and not of the original) is a forged frame.
 */
static unsigned int forged_frames(const char *out, const char *orig, const char *repl,
				  unsigned long *prog_samples)
{
	unsigned int forged = 0;
	char *copy = strdup(out), *save = NULL;

	*prog_samples = 0;
	for (char *line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char *sp = strrchr(line, ' '), *fsave = NULL;

		if (strncmp(line, "prog;", 5) || !sp)
			continue;
		*sp = '\0';
		*prog_samples += strtoul(sp + 1, NULL, 10);
		for (char *f = strtok_r(line + 5, ";", &fsave); f; f = strtok_r(NULL, ";", &fsave))
			if (has_symbol(repl, f) && !has_symbol(orig, f)) {
				fprintf(stderr, "identity: forged frame %s\n", f);
				forged++;
			}
	}
	free(copy);
	return forged;
}

START_TEST(a_binary_renamed_over_lends_no_names)
{
	char prog[128], orig[128], repl[128], script[1024];
	unsigned long samples;
	struct bg_proc bg;

	backend = test_backends[_i];
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	snprintf(orig, sizeof(orig), "%s/orig", dir);
	snprintf(repl, sizeof(repl), "%s/prog.new", dir);
	/* A copy of the original kept to read its names. */
	snprintf(script, sizeof(script), "cp '%s' '%s'", workload("busy"), orig);
	ck_assert_int_eq(system(script), 0);
	/*
	 * Ten times: prog runs for 50 ms while sampled, exits, and is replaced
	 * at once at its path (before the profiler has named its frames).
	 */
	snprintf(script, sizeof(script),
		 "echo ready; sleep 0.5; for i in 1 2 3 4 5 6 7 8 9 10; do "
		 "cp '%s' '%s' && cp '%s' '%s' && '%s' 2 0.05 && mv '%s' '%s' || exit 1; done",
		 workload("busy"), prog, workload("ratio31"), repl, prog, repl, prog);
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", script, NULL });
	run_cmd((char *[]){ "/usr/bin/prlimit", "--nofile=40:40", (char *)profile_bin(), "--backend",
			    (char *)backend, "-U", "-F", "999", "-f", "3", NULL },
		60, 0, &r);
	bg_stop(&bg);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_uint_eq(forged_frames(r.out, orig, prog, &samples), 0);
	ck_assert_msg(samples >= 50, "prog was sampled %lu times", samples);
	/* Named while it ran, or [unknown] with a warning once replaced: never the new names. */
	ck_assert_msg(strstr(r.out, "burn_") || strstr(r.err, "replaced or removed"),
		      "neither names nor a warning: %s", r.err);
}
END_TEST

/*
 * A process execs another program, which renames itself to the first
 * one's comm; without ASLR (setarch -R) both images sit at the same
 * addresses. The second image's samples are its own (second_spin), or
 * [unknown] where the bpf backend cannot tell the two images apart in one
 * drain interval: never the first image's names (first_spin, half the run).
 */
START_TEST(a_renamed_exec_is_not_resolved_in_the_old_image)
{
	uint64_t total, first, second, unknown;

	backend = test_backends[_i];
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-U", "-F", "499",
			    "-f", "--", "/usr/bin/setarch", "x86_64", "-R",
			    (char *)workload("execfirst"), "700", (char *)workload("execsecond"),
			    NULL },
		60, 0, &r);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	total = folded_count_prefix(r.out, "execfirst;");
	first = folded_count(r.out, ";first_spin");
	second = folded_count(r.out, ";second_spin");
	unknown = total - first - second;
	fprintf(stderr, "identity: %s: %lu samples, first_spin %lu, second_spin %lu, unknown %lu\n",
		backend, (unsigned long)total, (unsigned long)first, (unsigned long)second,
		(unsigned long)unknown);
	ck_assert_uint_ge(total, 100);
	ck_assert_msg(first * 100 <= total * 65, "first_spin %lu of %lu: forged", (unsigned long)first,
		      (unsigned long)total);
	if (!strcmp(backend, "perf"))	/* each sample has its time */
		ck_assert_uint_ge(second * 100, total * 35);
}
END_TEST

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/*
 * Issue 20: a process with 32,000 executable mappings (about what
 * vm.max_map_count allows with gaps) made a one-second profile of it take
 * 20-30 s to start (each mapping copied the list and sorted it again).
 */
START_TEST(many_mappings_start_quickly)
{
	char pid[16];
	struct bg_proc bg;
	double t0, took;

	backend = test_backends[_i];
	bg_start(&bg, (char *[]){ (char *)workload("manymaps"), "32000", "30", "0", dir, NULL });
	ck_assert_str_eq(bg.first_line, "ready");
	snprintf(pid, sizeof(pid), "%d", (int)bg.pid);
	t0 = mono_s();
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-F", "99", "-f",
			    "-p", pid, "1", NULL },
		60, 0, &r);
	took = mono_s() - t0;
	bg_stop(&bg);
	fprintf(stderr, "identity: %s: 1 s profile of 32000 mappings took %.2f s\n", backend, took);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(took < 6, "took %.1f s", took);
}
END_TEST

/* Peak RSS in KB of a profile run while manymaps forks `forks` times (GNU time). */
static long profile_rss_with_forks(const char *forks)
{
	char script[1024];
	struct bg_proc bg;
	FILE *f;
	long kb = -1;
	char path[160];

	snprintf(path, sizeof(path), "%s/rss", dir);
	snprintf(script, sizeof(script), "echo ready; sleep 0.5; exec '%s' 5000 2 %s '%s'",
		 workload("manymaps"), forks, dir);
	bg_start(&bg, (char *[]){ "/bin/sh", "-c", script, NULL });
	run_cmd((char *[]){ "/usr/bin/time", "-f", "%M", "-o", path, (char *)profile_bin(),
			    "--backend", (char *)backend, "-F", "49", "-f", "3", NULL },
		60, 0, &r);
	bg_stop(&bg);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fscanf(f, "%ld", &kb), 1);
	fclose(f);
	run_result_free(&r);
	return kb;
}

/*
 * Issue 20: 5,000 mappings with long paths, then fork: each child cost
 * 8-11 MB of copies. Children share their parent's list until they change it.
 */
START_TEST(forks_share_their_mappings)
{
	long none, many;

	backend = test_backends[_i];
	none = profile_rss_with_forks("0");
	many = profile_rss_with_forks("200");
	fprintf(stderr, "identity: %s: peak RSS %ld KB without forks, %ld KB with 200\n", backend,
		none, many);
	ck_assert_msg(many < none + 20 * 1024, "200 forks added %ld KB", many - none);
}
END_TEST

/*
 * Issue 20: a JIT process of one user (65534, no perf map of its own)
 * exits; another user (12345) writes /tmp/perf-PID.map for its pid and
 * forks until the pid is theirs. The map must not name the first
 * process's JIT frames: it is checked against the user the process ran
 * as, not whoever has the pid at report time.
 */
START_TEST(a_reused_pid_lends_no_perf_map)
{
	char script[2048], pidfile[160], v[32] = "";
	FILE *f;

	backend = test_backends[_i];
	snprintf(pidfile, sizeof(pidfile), "%s/victim", dir);
	/* The profile ends when the pid is the other user's: the report is made then. */
	snprintf(script, sizeof(script),
		 "setpriv --reuid 65534 --regid 65534 --clear-groups '%s' 2 nomap > '%s'; "
		 "V=$(sed -n 's/pid=//p' '%s'); "
		 "setpriv --reuid 12345 --regid 12345 --clear-groups sh -c "
		 "\"printf '0 7fffffffffff forged_jit_name\\n' > /tmp/perf-$V.map\"; "
		 "setpriv --reuid 12345 --regid 12345 --clear-groups '%s' $V 60 >&2",
		 workload("jit"), pidfile, pidfile, workload("pidtaker"));
	run_cmd((char *[]){ (char *)profile_bin(), "--backend", (char *)backend, "-F", "199", "-f",
			    "--", "/bin/sh", "-c", script, NULL },
		120, 0, &r);
	f = fopen(pidfile, "r");
	if (f) {
		if (fscanf(f, "pid=%31s", v) == 1) {
			char cmd[96];

			snprintf(cmd, sizeof(cmd), "rm -f /tmp/perf-%s.map; pkill -9 -f 'pidtaker %s '",
				 v, v);
			ck_assert_int_ge(system(cmd), 0);
		}
		fclose(f);
	}
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_msg(strstr(r.err, "took "), "the pid was not reused: %s", r.err);
	ck_assert_msg(folded_count_prefix(r.out, "jit;") > 5, "jit was not sampled");
	ck_assert_msg(!strstr(r.out, "forged_jit_name"), "a forged JIT name: %s",
		      strstr(r.out, "forged_jit_name") - 100);
}
END_TEST

Suite *identity_suite(void)
{
	Suite *s = suite_create("identity");
	TCase *tc = tcase_create("identity");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_binary_renamed_over_lends_no_names, 0, 2);
	tcase_add_loop_test(tc, a_renamed_exec_is_not_resolved_in_the_old_image, 0, 2);
	tcase_add_loop_test(tc, many_mappings_start_quickly, 0, 2);
	tcase_add_loop_test(tc, forks_share_their_mappings, 0, 2);
	tcase_add_loop_test(tc, a_reused_pid_lends_no_perf_map, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
