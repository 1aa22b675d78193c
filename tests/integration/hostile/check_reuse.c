// SPDX-License-Identifier: GPL-2.0
/*
 * A pid is not a process (issue 32, trust round 3): a process is its pid
 * and its start, and nothing learnt of one (its membership of -p or of a
 * launched command's tree, its comm, its perf map) may go to the process
 * that takes its pid after it. Root profiles; user 65534 runs the victim,
 * user 12345 takes its pid once it has exited (pidtaker, asking the kernel
 * for the pid rather than cycling through them: what a user does in
 * seconds on an idle host, done at once).
 *
 * Each case runs a shell scenario: @PROFILE@, @JIT@ and the like are
 * replaced by paths, @D@ by the test's directory (readable by all), @B@ by
 * the backend. The profile's report goes to @D@/out, its messages to
 * @D@/err; the scenario prints what the test checks besides. Processes it
 * leaves running hold no descriptor of its output, and their pids are in
 * @D@/pids.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/support/tests.h"

static struct run_result r;
static char dir[] = "/tmp/profile-reuse-XXXXXX";
static char *report, *messages;

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chmod(dir, 0755), 0);
}

/* The pids a scenario left running, one per line of @D@/pids: ended here, by their id. */
static void stop_leftovers(void)
{
	char path[128];
	FILE *f;
	int pid;

	snprintf(path, sizeof(path), "%s/pids", dir);
	f = fopen(path, "r");
	if (!f)
		return;
	while (fscanf(f, "%d", &pid) == 1)
		if (pid > 1)
			kill(pid, SIGKILL);
	fclose(f);
}

static void teardown(void)
{
	char cmd[128];

	stop_leftovers();
	run_result_free(&r);
	free(report);
	free(messages);
	report = messages = NULL;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/profile-reuse-XXXXXX");
}

/* s with every @KEY@ of the table replaced; to free. */
static char *expand(const char *s, const char *const (*subst)[2])
{
	size_t cap = strlen(s) * 4 + 4096, len = 0;
	char *out = malloc(cap);

	ck_assert_ptr_nonnull(out);
	while (*s) {
		bool done = false;

		for (size_t i = 0; *s == '@' && subst[i][0]; i++) {
			size_t k = strlen(subst[i][0]);

			if (strncmp(s + 1, subst[i][0], k) || s[1 + k] != '@')
				continue;
			ck_assert_uint_lt(len + strlen(subst[i][1]), cap - 1);
			len += (size_t)sprintf(out + len, "%s", subst[i][1]);
			s += k + 2;
			done = true;
			break;
		}
		if (!done) {
			ck_assert_uint_lt(len, cap - 1);
			out[len++] = *s++;
		}
	}
	out[len] = '\0';
	return out;
}

static char *read_text(const char *name)
{
	char path[160], *buf = NULL;
	size_t len = 0;
	FILE *f, *m = open_memstream(&buf, &len);
	int c;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(m);
	while (f && (c = fgetc(f)) != EOF)
		fputc(c, m);
	if (f)
		fclose(f);
	fclose(m);
	return buf;
}

/* Run the scenario on backend; its report and messages in report and messages. */
static void scenario(const char *script, const char *backend)
{
	const char *const subst[][2] = {
		{ "PROFILE", profile_bin() },	    { "JIT", workload("jit") },
		{ "BLOCKING", workload("blocking") }, { "UNDUMPABLE", workload("undumpable") },
		{ "PIDTAKER", workload("pidtaker") }, { "BUSY", workload("busy") },
		{ "RATIO31", workload("ratio31") },   { "ELFHEAD", workload("elfhead") },
		{ "D", dir },
		{ "B", backend },		    { NULL, NULL },
	};
	char *text = expand(script, subst);

	run_cmd((char *[]){ "/bin/sh", "-c", text, NULL }, 240, 0, &r);
	free(text);
	report = read_text("out");
	messages = read_text("err");
	fprintf(stderr, "reuse: %s: %s%s", backend, r.out, r.err);
}

/* What the scenarios share: the victim's user, the one who takes its pid. */
#define AS_VICTIM "setpriv --reuid 65534 --regid 65534 --clear-groups "
#define AS_USER "setpriv --reuid 12345 --regid 12345 --clear-groups "
#define TAKE_PID "PIDTAKER_UID=12345 @PIDTAKER@ "

/*
 * A JIT process of user 65534 writes no perf map; user 12345 takes its pid
 * after it exits, in a user and mount namespace of its own, and mounts
 * there, at /tmp/perf-PID.map, the command line of a process of theirs
 * made not dumpable: a file in /proc owned by root, new, whose contents
 * they wrote. The profile (-p, stopped meanwhile as a busy host's main
 * thread may be) names the JIT frames after the pid was taken: never with
 * the user's names (before: past the map's owner and age checks).
 */
START_TEST(a_proc_file_mounted_as_a_reused_pids_perf_map_names_nothing)
{
	const char *backend = test_backends[_i];

	scenario("cd @D@ && mkfifo go && chmod 666 go || exit 1; "
		 AS_VICTIM "sh -c 'read x < @D@/go; exec @JIT@ 2 nomap' > /dev/null & V=$!; "
		 AS_USER "@UNDUMPABLE@ 600 \"$(printf '0 7fffffffffff forged_jit_name\\n.')\" "
		 "> /dev/null 2>&1 & H=$!; echo $H >> pids; "
		 "@PROFILE@ --backend @B@ -F 199 -f -p $V 5 > out 2> err & P=$!; "
		 "sleep 2; kill -STOP $P; echo > go; wait $V; "
		 TAKE_PID "$V 600 unshare -Urm sh -c \"mount -t tmpfs none /tmp && "
		 "touch /tmp/perf-$V.map && mount --bind /proc/$H/cmdline /tmp/perf-$V.map && "
		 "exec sleep 600\" > took 2>&1; cat took; echo $V >> pids; sleep 1; "
		 "head -c 40 /proc/$V/root/tmp/perf-$V.map | head -1; "
		 "kill -CONT $P; wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "took "), "the pid was not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "0 7fffffffffff forged_jit_name\n"), "not mounted: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(folded_count_prefix(report, "jit;") > 5, "jit was not sampled: %.3000s", report);
	ck_assert_msg(!strstr(report, "forged_jit_name"), "a forged JIT name: %.3000s", report);
}
END_TEST

/* Microseconds of off-CPU time the report gives comm (folded, off-CPU values are µs). */
static uint64_t time_of(const char *comm)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s;", comm);
	return folded_count_prefix(report, prefix);
}

/*
 * The time of every process but the profiled ones (named by their comms,
 * NULL-ended): the one that took a pid (named pidtaker, or ":TID" where its
 * comm was not known), or any other that took a pid of the profiled ones.
 */
static uint64_t strangers_time(const char *const *own)
{
	uint64_t total = folded_total(report, NULL), mine = 0;

	for (int i = 0; own[i]; i++)
		mine += time_of(own[i]);
	return total - mine;
}

/*
 * A child of the launched command exits; user 12345 takes its pid and
 * sleeps 3 s while the command goes on. Off-CPU events see every process
 * (the pipeline keeps the command's tree): the tree kept exited pids, and
 * the user's 3 s showed in root's profile of the command (comm, frames).
 * A pid is the command's from its fork to its exit only.
 */
START_TEST(a_pid_taken_from_the_commands_tree_is_not_the_commands)
{
	static const char *const command[] = { "sh", "sleep", NULL };
	const char *backend = test_backends[_i];

	scenario("cd @D@ || exit 1; "
		 "@PROFILE@ --backend @B@ --off-cpu -f -- sh -c "
		 "'sleep 0.3 & echo $! > @D@/cpid; wait; "
		 "while [ ! -e @D@/taken ]; do sleep 0.1; done; sleep 4' > out 2> err & P=$!; "
		 "while [ ! -s cpid ]; do sleep 0.05; done; C=$(cat cpid); "
		 "while [ -e /proc/$C ]; do sleep 0.05; done; "
		 TAKE_PID "$C 3 > took 2>&1; cat took; echo $C >> pids; touch taken; "
		 "wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "took "), "the pid was not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	/* The command's own time is there: its 4 s sleep. */
	ck_assert_msg(time_of("sleep") > 3500000, "%.3000s", report);
	ck_assert_msg(strangers_time(command) < 100000, "the user's %.2f s in the command's "
		      "profile: %.3000s", strangers_time(command) / 1e6, report);
}
END_TEST

/*
 * The same for -p: the process exits, user 12345 takes its pid and sleeps
 * 2 s; root's `--off-cpu -p PID` profile showed them as the process.
 */
START_TEST(a_pid_taken_from_dash_p_is_not_the_process)
{
	static const char *const process[] = { "sh", NULL };
	const char *backend = test_backends[_i];

	scenario("cd @D@ && mkfifo go && chmod 666 go || exit 1; "
		 AS_VICTIM "sh -c 'read x < @D@/go; sleep 1.5' & V=$!; "
		 "@PROFILE@ --backend @B@ --off-cpu -f -p $V 6 > out 2> err & P=$!; "
		 "sleep 2.5; echo > go; wait $V; "
		 TAKE_PID "$V 2 > took 2>&1; cat took; echo $V >> pids; "
		 "wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "took "), "the pid was not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	/* The process's own time: waiting 1.5 s for its child. */
	ck_assert_msg(time_of("sh") > 1000000, "%.3000s", report);
	ck_assert_msg(strangers_time(process) < 100000, "the user's %.2f s in root's -p profile: %.3000s",
		      strangers_time(process) / 1e6, report);
}
END_TEST

/*
 * A process that was there before the profile (user 65534's sh, waiting)
 * runs, exits, and user 12345 takes its pid before its samples are
 * drained (the profile stopped meanwhile, as a busy host's main thread may
 * be). The perf backend named its samples by the comm /proc gave at the
 * drain: the user's ("pidtaker"). A comm read from /proc is the thread's
 * only if that thread had begun by the sample's time.
 */
START_TEST(a_pid_taken_before_the_drain_lends_no_comm)
{
	const char *backend = test_backends[_i];

	scenario("cd @D@ && mkfifo go && chmod 666 go || exit 1; "
		 AS_VICTIM "sh -c 'read x < @D@/go; i=0; "
		 "while [ $i -lt 200000 ]; do i=$((i+1)); done' & V=$!; "
		 "@PROFILE@ --backend @B@ -F 199 -f -p $V 8 > out 2> err & P=$!; "
		 "sleep 2; kill -STOP $P; echo > go; wait $V; "
		 TAKE_PID "$V 30 > took 2>&1; cat took; echo $V >> pids; "
		 "kill -CONT $P; wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "took "), "the pid was not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(folded_total(report, NULL) > 20, "sh was not sampled: %.3000s", report);
	ck_assert_msg(!strstr(report, "pidtaker"), "the user's comm on the victim's samples: %.3000s",
		      report);
}
END_TEST

/*
 * Root's program (a copy of busy at @D@/bin/prog) runs for a second and
 * exits before its mapping is read (the profile stopped meanwhile). User
 * 12345 takes its pid in a user and mount namespace of theirs, where a
 * program of theirs (ratio31) carrying prog's build-id, made before prog
 * ran (an older ctime), is mounted at prog's path. The profiler looked for
 * the file under /proc/PID/root, the user's namespace: root's samples were
 * named from the user's file (hot_thread, hot_loop). Only the process that
 * mapped the file is looked into.
 */
START_TEST(a_file_mounted_on_a_reused_pids_path_names_nothing)
{
	const char *backend = test_backends[_i];

	scenario("cd @D@ && mkfifo go && mkdir -m 755 bin evil && cp @BUSY@ bin/prog && "
		 "objcopy --dump-section .note.gnu.build-id=note bin/prog && "
		 "objcopy --update-section .note.gnu.build-id=note @RATIO31@ evil/prog && "
		 "chown -R 12345 evil || exit 1; "
		 "@PROFILE@ --backend @B@ -F 199 -f -- sh -c "
		 "'read x < @D@/go; @D@/bin/prog 1 1 & echo $! > @D@/vpid; wait; sleep 2' "
		 "> out 2> err & P=$!; "
		 "sleep 2; kill -STOP $P; echo > go; "
		 "while [ ! -s vpid ]; do sleep 0.05; done; V=$(cat vpid); "
		 "while [ -e /proc/$V ]; do sleep 0.05; done; "
		 TAKE_PID "$V 8 unshare -Urm sh -c "
		 "\"mount --bind @D@/evil/prog @D@/bin/prog && exec sleep 8\" > took 2>&1; "
		 "cat took; echo $V >> pids; sleep 1; "
		 "kill -CONT $P; wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "took "), "the pid was not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(folded_count_prefix(report, "prog;") > 20, "prog was not sampled: %.3000s",
		      report);
	/* ratio31's names (hot_thread, hot_loop, warm_loop): none in busy. */
	ck_assert_msg(!strstr(report, "hot_") && !strstr(report, "warm_"),
		      "the user's names on root's samples: %.3000s", report);
}
END_TEST

/*
 * The user's half of the next case: in their namespace, with their file
 * mounted at root's program's path, map that path (an MMAP2 record of the
 * path and the build-id), unmap it, and mount the head of a not-dumpable
 * process's cmdline there instead; then stay, so that the profiler looks
 * at the path through this process's root.
 */
static const char swap_py[] =
	"import mmap, os, sys, time\n"
	"path, head, done = sys.argv[1:4]\n"
	"with open(path, 'rb') as f:\n"
	"    mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ | mmap.PROT_EXEC).close()\n"
	"os.system(\"umount -l '%s' && mount --bind '%s' '%s' && touch '%s'\" % (path, head, path, done))\n"
	"time.sleep(10)\n";

/*
 * A root-owned 0444 file of contents a user chose: the cmdline of a
 * not-dumpable process of theirs (elfhead), holding an ELF head with the
 * build-id of root's program. Mounted at that program's path in the user's
 * namespace, behind a record of the path and build-id, it was taken for the
 * program's file once for all (the (path, build-id) shortcut asked only for
 * root's ownership): every later run of root's program printed [unknown].
 * The shortcut stands only for the file the path names in the profiler's
 * namespace, on a real filesystem.
 */
START_TEST(a_proc_file_mounted_at_a_programs_path_does_not_stand_for_it)
{
	const char *backend = test_backends[_i];
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/swap.py", dir);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(swap_py, f);
	fclose(f);
	scenario("cd @D@ && mkdir -m 755 bin evil && cp @BUSY@ bin/trust3r6prog && "
		 "objcopy --dump-section .note.gnu.build-id=note bin/trust3r6prog && "
		 "objcopy --update-section .note.gnu.build-id=note @RATIO31@ evil/prog && "
		 "chown -R 12345 evil && chmod 644 swap.py || exit 1; "
		 "ELFHEAD_SECONDS=30 " AS_USER "@ELFHEAD@ "
		 "$(readelf -n bin/trust3r6prog | awk '/Build ID/{print $3}') > elfhead.log 2>&1 & "
		 "H=$!; "
		 "echo $H >> pids; sleep 0.5; "
		 /* Its /proc inode made now: older than the record, as a file's ctime would be. */
		 "stat /proc/$H/cmdline > /dev/null; sleep 1; "
		 "@PROFILE@ --backend @B@ -F 199 -f 10 > out 2> err & P=$!; "
		 "sleep 2; kill -STOP $P; "
		 AS_USER "unshare -Urm sh -c \"mount --bind @D@/evil/prog @D@/bin/trust3r6prog && "
		 "exec python3 @D@/swap.py @D@/bin/trust3r6prog /proc/$H/cmdline @D@/evil/swapped\" "
		 "> swap.log 2>&1 & echo $! >> pids; "
		 "i=0; while [ ! -e evil/swapped ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done; "
		 "ls evil; cat elfhead.log swap.log; "
		 "kill -CONT $P; sleep 2; bin/trust3r6prog 1 1; wait $P; echo exit=$?",
		 backend);
	ck_assert_msg(strstr(r.out, "swapped"), "the user's mount was not made: %s %s", r.out,
		      r.err);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(folded_count_prefix(report, "trust3r6prog;") > 50,
		      "root's program was not sampled: %s", messages);
	ck_assert_msg(folded_count(report, "burn_a") + folded_count(report, "burn_b") > 20,
		      "root's program was not named: %s", messages);
}
END_TEST

Suite *reuse_suite(void)
{
	Suite *s = suite_create("reuse");
	TCase *tc = tcase_create("reuse");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 300);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_proc_file_mounted_as_a_reused_pids_perf_map_names_nothing, 0, 2);
	tcase_add_loop_test(tc, a_pid_taken_from_the_commands_tree_is_not_the_commands, 0, 2);
	tcase_add_loop_test(tc, a_pid_taken_from_dash_p_is_not_the_process, 0, 2);
	tcase_add_loop_test(tc, a_pid_taken_before_the_drain_lends_no_comm, 0, 2);
	tcase_add_loop_test(tc, a_file_mounted_on_a_reused_pids_path_names_nothing, 0, 2);
	tcase_add_loop_test(tc, a_proc_file_mounted_at_a_programs_path_does_not_stand_for_it, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}
