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
		{ "PIDRELAY", workload("pidrelay") }, { "D", dir },
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

/* Sum of the counts of the report's lines that start with prefix and hold any of needles. */
static uint64_t lines_with_any(const char *prefix, const char *const *needles)
{
	size_t plen = strlen(prefix);
	uint64_t sum = 0;

	for (const char *p = report; p && *p;) {
		const char *eol = strchr(p, '\n'), *sp;
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char *line = strndup(p, len);

		ck_assert_ptr_nonnull(line);
		sp = strrchr(line, ' ');
		if (sp && !strncmp(line, prefix, plen))
			for (int i = 0; needles[i]; i++)
				if (strstr(line, needles[i])) {
					sum += strtoull(sp + 1, NULL, 10);
					break;
				}
		free(line);
		p = eol ? eol + 1 : NULL;
	}
	return sum;
}

/* pidrelay's count of field ("taken", "mounted") in the scenario's output; -1 if none. */
static int relay_count(const char *field)
{
	char key[32];
	const char *at;

	snprintf(key, sizeof(key), " %s=", field);
	at = strstr(r.out, key);
	return at ? atoi(at + strlen(key)) : -1;
}

/*
 * Issue 46 (trust round 4), row 7. Root runs its program twenty times, a
 * copy each at @D@/binN/prog, 10 ms each (two threads in burn_a and
 * burn_b); the moment each exits, user 65534 takes its pid (pidrelay) in a
 * user and mount namespace of theirs where their copy of the program is
 * mounted at that path: the same build-id (a build-id names nothing its
 * owner did not write), the same code, its functions renamed attacker_*.
 * The records of root's runs are applied after that (the profile stopped
 * meanwhile, as a busy host's may be; unstopped, 2 to 5 of 10 runs were
 * anyway). The profiler opened the file of an MMAP2 record (6.18: a path
 * and a build-id) under /proc/PID/root while the process there had begun
 * by the record's time, which /proc tells to a 10 ms tick: the user's
 * process, begun ~12 ms after the record, passed, and root's runs were
 * named attacker_* (main: 227-376 of 263-384 samples, both backends; the
 * rest own names, of runs whose pid came round past the 20 ms slack). A
 * process that took the pid after the mapping's process ended is never
 * looked into, however soon. Frame pointers: what is named is the point,
 * and the perf backend's 16 KiB copies of auto filled its rings while the
 * profile was stopped (84 samples of root's runs in a CI run, wanted 100).
 */
START_TEST(a_pid_taken_within_milliseconds_lends_no_native_names)
{
	static const char *const attacker[] = { "attacker_", NULL };
	/* Its own names, or none: [unknown], or its file's name ([prog]). */
	static const char *const own[] = { "burn_", "thread_main", "[unknown]", "[prog]", NULL };
	const char *backend = test_backends[_i];
	uint64_t runs, forged, named;

	scenario("cd @D@ && mkfifo go && mkdir -m 755 evil && "
		 "for i in $(seq 0 19); do mkdir -m 755 bin$i && cp @BUSY@ bin$i/prog || exit 1; done && "
		 "objcopy --strip-debug --redefine-sym burn_a=attacker_a --redefine-sym burn_b=attacker_b "
		 "--redefine-sym work=attacker_work --redefine-sym thread_main=attacker_main "
		 "@BUSY@ evil/prog && chown -R 65534 evil || exit 1; "
		 "@PROFILE@ --backend @B@ --unwind fp -F 999 -f -- sh -c \"read x < @D@/go; "
		 "exec @PIDRELAY@ 20 65534 20 @D@/evil/prog '@D@/bin%d/prog' 2 0.01 > @D@/relay\" "
		 "> out 2> err & P=$!; "
		 "sleep 2; kill -STOP $P; echo > go; "
		 "i=0; while ! grep -q rounds= relay && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; "
		 "sed -n 's/^took \\([0-9]*\\).*/\\1/p' relay >> pids; tail -1 relay; "
		 "kill -CONT $P; wait $P; echo exit=$?",
		 backend);
	runs = folded_count_prefix(report, "prog;");
	forged = lines_with_any("prog;", attacker);
	named = lines_with_any("prog;", own);
	fprintf(stderr, "reuse: %s: root's runs %lu samples: %lu named attacker_*, %lu own or "
		"[unknown]\n", backend, (unsigned long)runs, (unsigned long)forged,
		(unsigned long)named);
	/* The pids were taken and the mounts made: most of twenty at least (a fork may race). */
	ck_assert_msg(relay_count("mounted") >= 15, "the pids were not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(runs >= 100, "root's runs were not sampled: %.3000s", report);
	ck_assert_msg(forged == 0, "%lu of %lu samples of root's runs named by the user's file: %.3000s",
		      (unsigned long)forged, (unsigned long)runs, report);
	ck_assert_msg(named * 2 >= runs, "root's runs named neither as themselves nor [unknown]: %.3000s",
		      report);
}
END_TEST

/* Row 1's victim: root's script, 0.2 s in frozen posixpath.normpath, then 0.1 s named late. */
static const char victim_py[] =
	"import os\n"
	"import os.path\n"
	"import signal\n"
	"import sys\n"
	"import time\n"
	"\n"
	"\n"
	"def main(seconds):\n"
	"    end = time.monotonic() + seconds\n"
	"    while time.monotonic() < end:\n"
	"        for _ in range(100):\n"
	"            os.path.normpath('a/./b/../c//d/e/../f')\n"
	"\n"
	"\n"
	"main(float(sys.argv[1]))\n"
	"# The profiler stopped, as a busy host's may be: the rest is named after the exit.\n"
	"os.kill(int(os.environ['PROFILER']), signal.SIGSTOP)\n"
	"main(0.1)\n";

/*
 * Row 1's taker (user 65534): in its own process, the str objects of
 * posixpath.normpath's code (Debian's python3.11 is not PIE: its frozen
 * modules' code objects and strings are in its data, at the same
 * addresses in every process) rewritten, bytes of the same length; then
 * it says so and waits, on the pid, to be read.
 */
static const char forge_py[] =
	"import ctypes\n"
	"import os\n"
	"import posixpath\n"
	"import sys\n"
	"import time\n"
	"\n"
	"HEAD = sys.getsizeof('') - 1  # a compact ASCII str's header: its bytes follow\n"
	"\n"
	"\n"
	"def forge(s, new):\n"
	"    assert s.isascii() and len(new) == len(s)\n"
	"    ctypes.memmove(id(s) + HEAD, new.encode(), len(new))\n"
	"\n"
	"\n"
	"code = posixpath.normpath.__code__\n"
	"forge(code.co_name, 'FORGEDNP')\n"
	"forge(code.co_filename, '<frozen FORGEDpth>')\n"
	"open('%s/forged.%d' % (sys.argv[1], os.getpid()), 'w').close()\n"
	"time.sleep(float(sys.argv[2]))\n";

#define DEBIAN_PYTHON "/usr/bin/python3.11"

/* Row 1's runs: the backend and the unwinding. */
static const char *const python_runs[][2] = {
	{ "perf", "fp" },
	{ "bpf", "fp" },
	{ "bpf", "dwarf" },
};

static void write_file(const char *name, const char *text)
{
	char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(path, 0644), 0);
}

/*
 * Issue 46 (trust round 4), row 1. Root runs a Python script three times
 * (Debian's python3.11 as "pyvictim", a link: its own comm), 0.2 s in
 * posixpath.normpath, then it stops the profile (as a busy host's may be
 * stopped) and runs 0.1 s more and exits. The moment it exits, user 65534
 * takes its pid (pidrelay) and runs python3.11 there, rewriting in its own
 * process normpath's name and file (FORGEDNP, "<frozen FORGEDpth>"); then
 * the profile goes on. Python frames were named from the memory of
 * whatever process had the pid when they were read: on main, bpf, ~300-420
 * of ~925 samples of root's runs read FORGEDNP (<frozen FORGEDpth>:39x)
 * under "[python: unreadable]" frames; perf, ~300-410 of ~930 had the
 * taker's own stack, "<module> (forge.py:19)" (unstopped, six 0.05 s runs:
 * ~100-140 on bpf, ~120 on perf). bpf with --unwind dwarf kept its
 * frames (0 of ~540: the samples of the stopped 0.1 s are not in its
 * report; unstopped, 0 too): there the check guards. Frames read after
 * their process ended say so ("[python: process ended]"), never what the
 * next process on the pid holds.
 */
START_TEST(a_pid_taken_before_the_frames_are_named_lends_no_python_names)
{
	static const char *const lent[] = { "FORGED", "forge.py", NULL };
	static const char *const own[] = { "victim.py", "[python: process ended]", NULL };
	const char *backend = python_runs[_i][0], *unwind = python_runs[_i][1];
	char script[2048];
	uint64_t runs, forged, named;

	if (access(DEBIAN_PYTHON, X_OK)) {
		fprintf(stderr, "reuse: no %s (Debian 12's, not PIE): skipped\n", DEBIAN_PYTHON);
		return;
	}
	write_file("victim.py", victim_py);
	write_file("forge.py", forge_py);
	snprintf(script, sizeof(script),
		 "cd @D@ && mkfifo go && ln -s " DEBIAN_PYTHON " pyvictim && chmod 777 @D@ || exit 1; "
		 "@PROFILE@ --backend @B@ --unwind %s -F 999 -f -- sh -c \"read x < @D@/go; "
		 "for i in 1 2 3; do PROFILER=\\$PPID "
		 "PIDRELAY_EXEC='exec " DEBIAN_PYTHON " @D@/forge.py @D@ 20' "
		 "@PIDRELAY@ 1 65534 20 - @D@/pyvictim @D@/victim.py 0.2 >> @D@/relay; "
		 "j=0; while [ \\$(ls @D@ | grep -c forged) -lt \\$i ] && [ \\$j -lt 250 ]; do "
		 "sleep 0.02; j=\\$((j+1)); done; kill -CONT \\$PPID; sleep 0.3; done\" "
		 "> out 2> err & P=$!; "
		 "sleep 2; echo > go; wait $P; echo exit=$?; "
		 "sed -n 's/^took \\([0-9]*\\).*/\\1/p' relay >> pids; "
		 "echo took=$(grep -c '^took' relay) forged=$(ls | grep -c forged)",
		 unwind);
	scenario(script, backend);
	runs = folded_count_prefix(report, "pyvictim;");
	forged = lines_with_any("pyvictim;", lent);
	named = lines_with_any("pyvictim;", own);
	fprintf(stderr, "reuse: %s, %s: root's runs %lu samples: %lu with the user's names or frames, "
		"%lu of victim.py or ended\n", backend, unwind, (unsigned long)runs,
		(unsigned long)forged, (unsigned long)named);
	ck_assert_msg(strstr(r.out, "took=3 forged=3"), "the pids were not taken: %s", r.out);
	ck_assert_msg(strstr(r.out, "exit=0"), "%s", messages);
	ck_assert_msg(runs >= 100, "root's runs were not sampled: %.3000s", report);
	ck_assert_msg(forged == 0, "%lu of %lu samples of root's runs with the user's Python names: "
		      "%.3000s", (unsigned long)forged, (unsigned long)runs, report);
	ck_assert_msg(named >= 10, "root's runs without their Python frames: %.3000s", report);
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
	/* Trust, round 4 (issue 46): pids taken within milliseconds of their process's end. */
	tc = tcase_create("round4");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, a_pid_taken_within_milliseconds_lends_no_native_names, 0, 2);
	tcase_add_loop_test(tc, a_pid_taken_before_the_frames_are_named_lends_no_python_names, 0,
			    sizeof(python_runs) / sizeof(python_runs[0]));
	suite_add_tcase(s, tc);
	return s;
}
