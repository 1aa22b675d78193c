// SPDX-License-Identifier: GPL-2.0
/*
 * --cgroup, and bcc's --cgroupmap/--mntnsmap, on real cgroups: each test
 * makes a fresh cgroup (and a child of it) under the cgroup2 mount found in
 * /proc/mounts, starts copies of one workload under different names inside
 * it, inside its child and outside (written to cgroup.procs by a shell
 * before it execs the workload), profiles, and removes what it made. Only
 * the cgroup's tasks and its descendants' may appear, on both backends,
 * for profile, offcputime and profile --wall. Bad paths are one-line usage
 * errors without root. Where perf events cannot follow a v2 cgroup (Linux
 * 4.9, hybrid hosts) the bpf backend keeps a thread table: tested on this
 * kernel through a seam that asks for it, and on a hybrid host made for
 * the test (a v1 perf_event hierarchy mounted while it runs).
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "app/cli/options.h"
#include "backend-bpf/cgtrack.h"
#include "compat/cgroup.h"
#include "tests/support/tests.h"

#define MAX_SPAWNED 8

/*
 * What the test case made: the cgroups and the workload copies, made and
 * removed by the runner (an unchecked fixture), so that they go even when a
 * test fails; the workloads die with their test (PR_SET_PDEATHSIG), a bpf
 * filesystem with its test's private mount namespace.
 */
static struct {
	char mount[256];		/* the cgroup2 (or v1 perf_event) mount */
	char cgroup[512];		/* the test case's cgroup */
	char child[600];		/* its child */
	char tmp[64];			/* workload copies, the bpffs mount point */
	pid_t pids[MAX_SPAWNED];	/* process groups a test started */
	int nr_pids;
	pid_t hybrid;			/* holds a v1 perf_event hierarchy mounted: a hybrid host */
} T;
static struct run_result r;

/* The copies: one program under several names, the comm telling where each runs. */
static const char *const copies[][2] = {
	{ "cgin-busy", "busy" },   { "cgkid-busy", "busy" },   { "cgout-busy", "busy" },
	{ "cgin-sleep", "sleep" }, { "cgkid-sleep", "sleep" }, { "cgout-sleep", "sleep" },
	{ "cgin-sh", "sh" },	   { "cgkid-sh", "sh" },       { "cgout-sh", "sh" },
};

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* An emptied cgroup stays busy until its last task is reaped: a few tries. */
static void remove_cgroup(const char *path)
{
	for (int i = 0; path[0] && i < 100 && rmdir(path) && errno == EBUSY; i++)
		sleep_ms(20);
}

/* The mount point of the first filesystem of type fstype (with option opt, if given). */
static bool find_mount(const char *fstype, const char *opt, char *out, size_t len)
{
	char dev[256], dir[256], type[64], opts[512];
	FILE *f = fopen("/proc/mounts", "re");
	bool found = false;

	while (f && !found && fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, dir, type, opts) == 4)
		if (!strcmp(type, fstype) && (!opt || strstr(opts, opt))) {
			snprintf(out, len, "%s", dir);
			found = true;
		}
	if (f)
		fclose(f);
	return found;
}

static bool copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1;
	bool ok = in >= 0;
	ssize_t n;

	if (ok)
		out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
	ok &= out >= 0;
	while (ok && (n = read(in, buf, sizeof(buf))) > 0)
		ok = write(out, buf, n) == n;
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return ok;
}

static void remove_all(void)
{
	char path[300];

	remove_cgroup(T.child);
	remove_cgroup(T.cgroup);
	T.child[0] = T.cgroup[0] = 0;
	if (!T.tmp[0])
		return;
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", T.tmp, copies[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/bpffs", T.tmp);
	rmdir(path);
	rmdir(T.tmp);
	T.tmp[0] = 0;
}

/*
 * A fresh cgroup and its child under the mount of fstype, and the copies.
 * Without the mount or the rights, T.cgroup stays empty and the tests skip.
 */
static void make_cgroups(const char *fstype, const char *opt)
{
	char path[300];

	memset(&T, 0, sizeof(T));
	if (!find_mount(fstype, opt, T.mount, sizeof(T.mount)))
		return;
	snprintf(T.tmp, sizeof(T.tmp), "/tmp/profile-cgroup-XXXXXX");
	if (!mkdtemp(T.tmp)) {
		T.tmp[0] = 0;
		return;
	}
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		const char *from = !strcmp(copies[i][1], "busy") ? workload("busy")
				   : !strcmp(copies[i][1], "sh") ? "/bin/sh" : "/bin/sleep";

		snprintf(path, sizeof(path), "%s/%s", T.tmp, copies[i][0]);
		if (!copy_file(from, path))
			return;
	}
	snprintf(T.cgroup, sizeof(T.cgroup), "%s/profile-test-%d", T.mount, (int)getpid());
	snprintf(T.child, sizeof(T.child), "%s/child", T.cgroup);
	if (mkdir(T.cgroup, 0755) || mkdir(T.child, 0755)) {
		fprintf(stderr, "cgroup: mkdir %s: %s\n", T.child, strerror(errno));
		remove_all();
	}
}

static void setup_v2(void)
{
	make_cgroups("cgroup2", NULL);
}

static void setup_v1(void)
{
	make_cgroups("cgroup", "perf_event");
}

/* perf_event's hierarchy in /proc/cgroups: 0 is cgroup v2's; -1 if there is none. */
static int perf_event_hierarchy(void)
{
	FILE *f = fopen("/proc/cgroups", "re");
	char line[256];
	int h = -1;

	while (f && fgets(line, sizeof(line), f) && sscanf(line, "perf_event %d", &h) != 1)
		;
	if (f)
		fclose(f);
	return h;
}

/*
 * A hybrid host for the tcase, where perf_event is on cgroup v2: a v1
 * perf_event hierarchy mounted takes the controller from v2 for every
 * process. A child holds the mount in a mount namespace of its own, so
 * that it goes with the child, with the runner at the latest: the
 * hierarchy has no cgroup but its root, ends with its last mount, and
 * perf_event returns to v2.
 */
static void setup_hybrid(void)
{
	char dir[600], ok = 0;
	int fds[2];

	setup_v2();
	if (!T.cgroup[0] || perf_event_hierarchy() != 0)
		return;
	snprintf(dir, sizeof(dir), "%s/v1", T.tmp);
	if (mkdir(dir, 0700) || pipe2(fds, O_CLOEXEC))
		return;
	T.hybrid = fork();
	if (T.hybrid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		ok = !unshare(CLONE_NEWNS) && !mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) &&
		     !mount("profile-test", dir, "cgroup", 0, "perf_event");
		if (write(fds[1], &ok, 1) != 1)
			_exit(1);
		while (ok)
			pause();
		_exit(0);
	}
	close(fds[1]);
	if (T.hybrid < 0 || read(fds[0], &ok, 1) != 1 || !ok)
		fprintf(stderr, "cgroup: mounting a v1 perf_event hierarchy: %s\n",
			T.hybrid < 0 ? strerror(errno) : "failed");
	close(fds[0]);
}

static void teardown_hybrid(void)
{
	char dir[600];

	if (T.hybrid > 0) {
		kill(T.hybrid, SIGKILL);
		waitpid(T.hybrid, NULL, 0);
		/* The hierarchy ends shortly after its last mount. */
		for (int i = 0; i < 250 && perf_event_hierarchy() > 0; i++)
			sleep_ms(20);
		if (perf_event_hierarchy() > 0)
			fprintf(stderr, "cgroup: perf_event is still on a v1 hierarchy\n");
	}
	T.hybrid = 0;
	snprintf(dir, sizeof(dir), "%s/v1", T.tmp);
	if (T.tmp[0])
		rmdir(dir);
	remove_all();
}

/* After each test: its workloads (they would die with it anyway). */
static void kill_spawned(void)
{
	for (int i = 0; i < T.nr_pids; i++) {
		kill(-T.pids[i], SIGKILL);
		waitpid(T.pids[i], NULL, 0);
	}
	T.nr_pids = 0;
	run_result_free(&r);
}

/*
 * Run the shell command cmd in its own process group, first moved into the
 * cgroup dir (NULL: left where the test runs), killed when the test ends.
 * Returns its pid.
 */
static pid_t spawn(const char *dir, const char *cmd)
{
	char script[1024];
	pid_t pid, test = getpid();

	ck_assert_int_lt(T.nr_pids, MAX_SPAWNED);
	if (dir)
		snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs || exit 1; %s", dir, cmd);
	else
		snprintf(script, sizeof(script), "%s", cmd);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		/* A failed assertion ends the test with _exit(): its workloads go with it. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != test)
			_exit(1);
		setpgid(0, 0);
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	setpgid(pid, pid);
	T.pids[T.nr_pids++] = pid;
	return pid;
}

/* Busy copies: in the cgroup, in its child, outside. Returns the one inside. */
static pid_t start_busy(void)
{
	char cmd[256];
	pid_t in;

	snprintf(cmd, sizeof(cmd), "exec %s/cgin-busy 1 30", T.tmp);
	in = spawn(T.cgroup, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgkid-busy 1 30", T.tmp);
	spawn(T.child, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", T.tmp);
	spawn(NULL, cmd);
	sleep_ms(300);
	return in;
}

/*
 * Copies of sleep, 10 ms at a time, again and again, run by copies of sh
 * (which wait for them): switch-outs throughout the run.
 */
static void start_sleepers(void)
{
	static const char loop[] = "exec %s/%s-sh -c 'while :; do %s/%s-sleep 0.01; done'";
	static const char *const where[] = { "cgin", "cgkid", "cgout" };
	char cmd[512];

	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), loop, T.tmp, where[i], T.tmp, where[i]);
		spawn(i == 0 ? T.cgroup : i == 1 ? T.child : NULL, cmd);
	}
	sleep_ms(300);
}

static uint64_t comm_total(const char *comm)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s;", comm);
	return folded_count_prefix(r.out, prefix);
}

/*
 * Every line's comm starts with one of comms. A line of an unknown process
 * (":TID", as perf script names it) passes up to max_unknown in all: the
 * perf backend cannot name a process forked and exec'd in the instant
 * between its reading of /proc and the enabling of its events (the
 * sleepers start one every 10 ms); a leak of the filter would be a steady
 * stream of named lines.
 */
static void assert_only_but(const char *const *comms, uint64_t max_unknown)
{
	const char *line = r.out;
	uint64_t unknown = 0;

	while (*line) {
		size_t len = strcspn(line, "\n");
		bool ok = false;

		for (const char *const *c = comms; *c; c++)
			ok |= !strncmp(line, *c, strlen(*c));
		if (!ok && line[0] == ':' && len > 2) {
			const char *count = line + len - 1;

			while (count > line && count[-1] != ' ')
				count--;
			unknown += strtoull(count, NULL, 10);
			ok = unknown <= max_unknown;
		}
		ck_assert_msg(ok, "a stack of another task: %.*s\nstderr: %.300s", (int)len, line,
			      r.err);
		line += len + (line[len] == '\n');
	}
	if (unknown)
		fprintf(stderr, "cgroup: %llu of an unnamed process (forked as the profile "
				"started)\n", (unsigned long long)unknown);
}

static void assert_only(const char *const *comms)
{
	assert_only_but(comms, 0);
}

#define PROFILE(...) ((char *[]){ (char *)profile_bin(), __VA_ARGS__, NULL })

/*
 * The loop tests' backends: bpf, perf, and bpf keeping to the cgroups by
 * its thread table (where perf events cannot follow them: Linux 4.9,
 * hybrid hosts), which a seam asks for here.
 */
static const char *const cg_backends[] = { "bpf", "perf", "bpf-table" };
#define NR_CG_BACKENDS 3

#define PROFILE_AS(be, ...)                                                                  \
	(!strcmp((be), "bpf-table")                                                         \
		 ? (char *[]){ "/usr/bin/env", "PROFILE_TEST_CGROUP_TABLE=1",               \
			       (char *)seams_bin(), "--backend", "bpf", __VA_ARGS__, NULL } \
		 : (char *[]){ (char *)profile_bin(), "--backend", (char *)(be), __VA_ARGS__,  \
			       NULL })

/* What -v says when the bpf backend keeps to the cgroups by its thread table. */
#define TABLE_NOTE "looks threads up in a table"

static const char *offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}

#define SKIP_WITHOUT_CGROUP2()                                                              \
	do {                                                                                \
		if (!T.cgroup[0]) {                                                         \
			fprintf(stderr, "cgroup: no cgroup2 mount in /proc/mounts: skipped\n"); \
			return;                                                             \
		}                                                                           \
	} while (0)

START_TEST(profile_keeps_the_cgroup_and_its_children)
{
	const char *be = cg_backends[_i];

	SKIP_WITHOUT_CGROUP2();
	start_busy();
	/* Without the filter, the outside copy is there: the test can tell. */
	run_ok(&r, PROFILE_AS(be, "-f", "-F", "99", "1"), 30);
	ck_assert_msg(comm_total("cgout-busy") > 0, "control run: %.300s", r.out);
	run_result_free(&r);

	run_ok(&r, PROFILE_AS(be, "-v", "--cgroup", T.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(!strcmp(be, "bpf-table") == !!strstr(r.err, TABLE_NOTE), "%s", r.err);
	fprintf(stderr, "cgroup: %s: in %llu, child %llu, out %llu samples\n", be,
		(unsigned long long)comm_total("cgin-busy"),
		(unsigned long long)comm_total("cgkid-busy"),
		(unsigned long long)comm_total("cgout-busy"));
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("cgkid-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
}
END_TEST

START_TEST(offcputime_keeps_the_cgroup_and_its_children)
{
	const char *be = test_backends[_i];

	SKIP_WITHOUT_CGROUP2();
	start_sleepers();
	run_ok(&r, ((char *[]){ (char *)offcputime_bin(), "--backend", (char *)be, "--cgroup",
				T.cgroup, "-f", "2", NULL }),
	       30);
	fprintf(stderr, "cgroup: offcputime %s: in %llu us, child %llu us, out %llu us\n", be,
		(unsigned long long)comm_total("cgin-sleep"),
		(unsigned long long)comm_total("cgkid-sleep"),
		(unsigned long long)comm_total("cgout-sleep"));
	/* Half of the 2 s at least: each copy sleeps 10 ms between forks and execs. */
	ck_assert_msg(comm_total("cgin-sleep") > 500000, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("cgkid-sleep") > 500000, "%s: %.300s", r.err, r.out);
	/* The loops' shells are in the cgroups too: they wait for each sleep. */
	assert_only_but((const char *[]){ "cgin-sleep;", "cgkid-sleep;", "cgin-sh;", "cgkid-sh;",
				  NULL },
			100000);
}
END_TEST

/*
 * --wall on the child cgroup: its busy and sleep copies only. table: the
 * bpf backend keeps to it by the thread table, which the off-CPU program
 * keeps while it sums (one sched_switch program does both).
 */
static void wall_keeps_the_child(const char *be, bool table)
{
	start_busy();
	start_sleepers();
	run_ok(&r, PROFILE_AS(be, "-v", "--wall", "--cgroup", T.child, "-f", "2"), 30);
	ck_assert_msg(table == !!strstr(r.err, TABLE_NOTE), "%s", r.err);
	ck_assert_msg(comm_total("cgkid-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("cgkid-sleep") > 0, "%s: %.300s", r.err, r.out);
	assert_only_but((const char *[]){ "cgkid-busy;", "cgkid-sleep;", "cgkid-sh;", NULL },
			100000);
}

START_TEST(wall_keeps_the_cgroup)
{
	SKIP_WITHOUT_CGROUP2();
	wall_keeps_the_child(cg_backends[_i], !strcmp(cg_backends[_i], "bpf-table"));
}
END_TEST

/* --unwind dwarf by the table: the stack-copy program looks threads up too. */
START_TEST(table_keeps_the_cgroup_with_dwarf)
{
	SKIP_WITHOUT_CGROUP2();
	start_busy();
	run_ok(&r, PROFILE_AS("bpf-table", "-v", "--unwind", "dwarf", "--cgroup", T.cgroup, "-f",
			      "-F", "99", "2"),
	       30);
	ck_assert_msg(strstr(r.err, TABLE_NOTE), "%s", r.err);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("cgkid-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
}
END_TEST

/* -p and --cgroup: both filters apply (perf: events on the cgroup, pids in the pipeline). */
START_TEST(pid_and_cgroup_both_apply)
{
	const char *be = cg_backends[_i];
	char pids[64];
	pid_t in;

	SKIP_WITHOUT_CGROUP2();
	in = start_busy();
	/* The inside copy and the outside one (spawned third), but only the cgroup's child. */
	snprintf(pids, sizeof(pids), "%d,%d", (int)in, (int)T.pids[2]);
	run_ok(&r, PROFILE_AS(be, "-p", pids, "--cgroup", T.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", NULL });
}
END_TEST

/*
 * A thread started in the cgroup while the profile runs is in the table
 * from its fork (sched_process_fork), not from its first switch-out: the
 * worker thread of each copy of busy runs 0.3 s at SCHED_FIFO pinned to
 * CPU 0, where nothing else preempts it, and never switches out until it
 * exits. Without the fork it would never be sampled.
 */
START_TEST(table_knows_threads_from_their_fork)
{
	char cmd[256];

	SKIP_WITHOUT_CGROUP2();
	if (access("/usr/bin/chrt", X_OK) || access("/usr/bin/taskset", X_OK)) {
		fprintf(stderr, "cgroup: no chrt or taskset: skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "exec /usr/bin/taskset -c 0 sh -c 'while :; do /usr/bin/chrt -f 1 %s/cgin-busy 1 "
		 "0.3; sleep 0.2; done'",
		 T.tmp);
	spawn(T.cgroup, cmd);
	sleep_ms(300);
	run_ok(&r, PROFILE_AS("bpf-table", "--cgroup", T.cgroup, "-f", "-F", "99", "2"), 30);
	fprintf(stderr, "cgroup: threads from their fork: %llu samples\n",
		(unsigned long long)comm_total("cgin-busy"));
	/* About 99 Hz x 0.3 s x 4 copies; few if any without the fork. */
	ck_assert_msg(comm_total("cgin-busy") >= 30, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", "sh;", "chrt;", "sleep;", NULL });
}
END_TEST

/* kernel.perf_event_paranoid now; -1 if unreadable. */
static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int v = -1;

	if (f && fscanf(f, "%d", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

static void write_paranoid(int v)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "we");

	if (f) {
		fprintf(f, "%d\n", v);
		fclose(f);
	}
}

/*
 * Without privileges: events on a cgroup are CPU-wide, which
 * kernel.perf_event_paranoid <= 0 allows to anyone; at 2 the error says so.
 */
START_TEST(unprivileged_where_paranoid_allows)
{
	int saved = read_paranoid();

	SKIP_WITHOUT_CGROUP2();
	if (saved < 0 || access("/usr/bin/setpriv", X_OK)) {
		fprintf(stderr, "cgroup: no perf_event_paranoid or setpriv: skipped\n");
		return;
	}
	start_busy();
	write_paranoid(0);
	/* Restored before any assertion: a failed one ends the test at once. */
	run_cmd(((char *[]){ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
			     "--clear-groups", (char *)profile_bin(), "-v", "--cgroup", T.cgroup,
			     "-f", "2", NULL }),
		30, 0, &r);
	write_paranoid(saved);
	ck_assert_msg(r.exit_code == 0, "exit %d: %s", r.exit_code, r.err);
	ck_assert_ptr_nonnull(strstr(r.err, "backend perf: usable; chosen"));
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
	run_result_free(&r);

	write_paranoid(2);
	run_cmd(((char *[]){ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
			     "--clear-groups", (char *)profile_bin(), "--cgroup", T.cgroup, "1",
			     NULL }),
		30, 0, &r);
	write_paranoid(saved);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.err, "kernel.perf_event_paranoid <= 0") &&
			      strstr(r.err, "events on a cgroup are CPU-wide"),
		      "%s", r.err);
}
END_TEST

/* bpftool, where Debian puts it; NULL when it is not installed. */
static const char *bpftool(void)
{
	static const char *const paths[] = { "/usr/sbin/bpftool", "/usr/bin/bpftool",
					     "/usr/local/sbin/bpftool" };

	for (size_t i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		if (!access(paths[i], X_OK))
			return paths[i];
	return NULL;
}

/*
 * A hash map pinned at path (in a bpf filesystem) holding the one 8-byte key.
 * The bpf filesystem is mounted in a mount namespace of the test's own: it
 * goes when the test ends, however it ends.
 */
static void pin_id_map(char *path, size_t len, const char *name, const char *value_size,
		       uint64_t key)
{
	static bool mounted;
	char dir[128], hex[8][4], value[8][4];
	struct run_result b;

	snprintf(dir, sizeof(dir), "%s/bpffs", T.tmp);
	if (!mounted) {
		ck_assert_msg(!mkdir(dir, 0700) || errno == EEXIST, "%s", strerror(errno));
		ck_assert_msg(!unshare(CLONE_NEWNS), "unshare: %s", strerror(errno));
		ck_assert_int_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
		ck_assert_msg(!mount("bpf", dir, "bpf", 0, NULL), "mount bpf: %s", strerror(errno));
		mounted = true;
	}
	snprintf(path, len, "%s/%s", dir, name);
	run_ok(&b, ((char *[]){ (char *)bpftool(), "map", "create", path, "type", "hash", "key",
				"8", "value", (char *)value_size, "entries", "16", "name",
				(char *)name, NULL }),
	       10);
	run_result_free(&b);
	for (int i = 0; i < 8; i++) {
		snprintf(hex[i], sizeof(hex[i]), "%02x", (unsigned int)(key >> (8 * i)) & 0xff);
		snprintf(value[i], sizeof(value[i]), "%02x", i == 0);
	}
	if (!strcmp(value_size, "8"))
		run_ok(&b, ((char *[]){ (char *)bpftool(), "map", "update", "pinned", path, "key",
					"hex", hex[0], hex[1], hex[2], hex[3], hex[4], hex[5], hex[6],
					hex[7], "value", "hex", value[0], value[1], value[2],
					value[3], value[4], value[5], value[6], value[7], NULL }),
		       10);
	else
		run_ok(&b, ((char *[]){ (char *)bpftool(), "map", "update", "pinned", path, "key",
					"hex", hex[0], hex[1], hex[2], hex[3], hex[4], hex[5], hex[6],
					hex[7], "value", "hex", value[0], value[1], value[2],
					value[3], NULL }),
		       10);
	run_result_free(&b);
}

/* bcc's --cgroupmap: the cgroup's own tasks (an exact id match, as bcc's), on bpf only. */
START_TEST(cgroupmap_keeps_the_mapped_cgroup)
{
	char map[200];
	struct stat st;

	SKIP_WITHOUT_CGROUP2();
	if (!bpftool()) {
		fprintf(stderr, "cgroup: bpftool not installed: --cgroupmap not tested\n");
		return;
	}
	/* A cgroup v2 id is its directory's inode number (Linux 5.5+). */
	ck_assert_int_eq(stat(T.cgroup, &st), 0);
	pin_id_map(map, sizeof(map), "cgmap", "8", st.st_ino);
	start_busy();
	start_sleepers();
	run_ok(&r, PROFILE("--cgroupmap", map, "-f", "-F", "99", "-v", "2"), 30);
	ck_assert_msg(strstr(r.err, "backend bpf: usable; chosen"), "%s", r.err);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	/* Not the child cgroup's: bcc matches the id itself, not its ancestors. */
	assert_only((const char *[]){ "cgin-busy;", "cgin-sleep;", "cgin-sh;", NULL });
	run_result_free(&r);
	/* --unwind auto: frame pointers, since no program that unwinds by tables reads it. */
	run_ok(&r, PROFILE("--cgroupmap", map, "--unwind", "auto", "-f", "-F", "99", "-v", "1"), 30);
	ck_assert_msg(strstr(r.err, "unwind: auto: frame pointers: --cgroupmap is read only by"),
		      "%s", r.err);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	run_result_free(&r);

	run_ok(&r, ((char *[]){ (char *)offcputime_bin(), "--cgroupmap", map, "-f", "2", NULL }),
	       30);
	ck_assert_msg(comm_total("cgin-sleep") > 500000, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-sleep;", "cgin-sh;", "cgin-busy;", NULL });
	run_result_free(&r);

	/* The perf backend cannot read it: a usage error. */
	run_cmd(PROFILE("--backend", "perf", "--cgroupmap", map, "1"), 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "perf backend cannot read BPF maps"));
}
END_TEST

/* bcc's --mntnsmap: the tasks of the mapped mount namespace (CO-RE, kernel BTF). */
START_TEST(mntnsmap_keeps_the_mapped_namespace)
{
	char cmd[256], path[64], map[200], comm[32] = "";
	struct stat st;
	pid_t in;

	SKIP_WITHOUT_CGROUP2();
	if (!bpftool() || access("/usr/bin/unshare", X_OK) ||
	    access("/sys/kernel/btf/vmlinux", R_OK)) {
		fprintf(stderr, "cgroup: no bpftool, unshare or kernel BTF: --mntnsmap not "
				"tested\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/unshare -m %s/cgin-busy 1 30", T.tmp);
	in = spawn(NULL, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", T.tmp);
	spawn(NULL, cmd);
	/* Its namespace once unshare has exec'd the workload. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)in);
	for (int i = 0; i < 100 && strncmp(comm, "cgin-busy", 9); i++) {
		FILE *f = fopen(path, "re");

		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		sleep_ms(20);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)in);
	ck_assert_int_eq(stat(path, &st), 0);
	pin_id_map(map, sizeof(map), "nsmap", "4", st.st_ino);
	run_ok(&r, PROFILE("--mntnsmap", map, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", NULL });
}
END_TEST

#define SKIP_WITHOUT_HYBRID()                                                                 \
	do {                                                                                  \
		if (!T.cgroup[0] || perf_event_hierarchy() <= 0) {                            \
			fprintf(stderr, "cgroup: no hybrid host could be made: skipped\n");   \
			return;                                                               \
		}                                                                             \
	} while (0)

/*
 * A v2 cgroup on a hybrid host: perf events cannot follow it, and the
 * perf backend says so; auto takes bpf, whose programs keep to it by the
 * thread table.
 */
START_TEST(hybrid_host_takes_the_table)
{
	SKIP_WITHOUT_HYBRID();
	start_busy();
	run_cmd(PROFILE("--backend", "perf", "--cgroup", T.cgroup, "1"), 30, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.err, "hybrid host"), "%s", r.err);
	run_result_free(&r);

	run_ok(&r, PROFILE("-v", "--cgroup", T.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(strstr(r.err, "backend bpf: usable; chosen") && strstr(r.err, TABLE_NOTE) &&
			      strstr(r.err, "hybrid host"),
		      "%s", r.err);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	ck_assert_msg(comm_total("cgkid-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
}
END_TEST

/* --wall there: the bpf backend by the table. */
START_TEST(hybrid_wall_keeps_the_cgroup)
{
	SKIP_WITHOUT_HYBRID();
	wall_keeps_the_child("bpf", true);
}
END_TEST

/*
 * Where neither way works the error names each backend's real cause: in a
 * pid namespace the table cannot be filled (the cgroups list the
 * namespace's ids), and perf events cannot follow the cgroup.
 */
START_TEST(hybrid_in_a_pid_namespace_says_why)
{
	SKIP_WITHOUT_HYBRID();
	if (access("/usr/bin/unshare", X_OK)) {
		fprintf(stderr, "cgroup: no unshare: skipped\n");
		return;
	}
	run_cmd(((char *[]){ "/usr/bin/unshare", "--pid", "--fork", "--mount-proc",
			     (char *)profile_bin(), "--cgroup", T.cgroup, "1", NULL }),
		30, 0, &r);
	ck_assert_int_eq(r.exit_code, 1);
	ck_assert_msg(strstr(r.err, "no backend can run here: bpf: ") &&
			      strstr(r.err, "pid namespace") && strstr(r.err, "; perf: ") &&
			      strstr(r.err, "hybrid host"),
		      "%s", r.err);
	ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1, "not one line: %s", r.err);
}
END_TEST

/*
 * The table's first filling: cgroup.threads (4.14+) or cgroup.procs (a
 * process's threads from /proc) of each directory and of those below, on a
 * tree made in /tmp, into a real BPF hash map; a full map is counted, a
 * tree deeper than the walk allows is refused.
 */
START_TEST(table_fill_reads_the_thread_lists)
{
	char dir[] = "/tmp/profile-cgfill-XXXXXX", path[4096], why[512] = "";
	struct cgroup_dir cg = { .version = CGROUP_V2 };
	struct backend_config c = { .cgroups = &cg, .nr_cgroups = 1 };
	__u32 tids[] = { (__u32)getpid(), 4000000, 1 };
	uint64_t full;
	FILE *f;
	int fd, n;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cgroup.procs", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	snprintf(path, sizeof(path), "%s/sub", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sub/empty", dir);
	ck_assert_int_eq(mkdir(path, 0700), 0);
	snprintf(path, sizeof(path), "%s/sub/cgroup.threads", dir);
	ck_assert_ptr_nonnull(f = fopen(path, "w"));
	fprintf(f, "4000000\n1\n");
	fclose(f);
	cg.path = dir;
	cg.fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	ck_assert_int_ge(cg.fd, 0);

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cgfill", 4, 1, 8, NULL);
	ck_assert_int_ge(fd, 0);
	n = cgtrack__fill(fd, &c, &full, why, sizeof(why));
	ck_assert_msg(n == 3, "%d: %s", n, why);
	ck_assert_uint_eq(full, 0);
	for (size_t i = 0; i < 3; i++) {
		__u8 v = 0;

		ck_assert_msg(!bpf_map_lookup_elem(fd, &tids[i], &v) && v == 1, "tid %u", tids[i]);
	}
	/* Entries already there stay, and are not counted again. */
	ck_assert_int_eq(cgtrack__fill(fd, &c, &full, why, sizeof(why)), 0);
	close(fd);

	fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cgfill", 4, 1, 2, NULL);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(cgtrack__fill(fd, &c, &full, why, sizeof(why)), 2);
	ck_assert_uint_eq(full, 1);

	/* 70 levels below sub/empty: more than the walk takes. */
	snprintf(path, sizeof(path), "%s/sub/empty", dir);
	for (int i = 0; i < 70; i++) {
		strcat(path, "/d");
		ck_assert_int_eq(mkdir(path, 0700), 0);
	}
	n = cgtrack__fill(fd, &c, &full, why, sizeof(why));
	ck_assert_msg(n == -E2BIG && strstr(why, "deeper than"), "%d: %s", n, why);
	close(fd);
	close(cg.fd);
	run_cmd(((char *[]){ "/bin/rm", "-rf", dir, NULL }), 10, 0, &r);
}
END_TEST

/* A v1 perf_event cgroup: the perf backend's events take it; bpf's off-CPU program cannot. */
START_TEST(v1_perf_event_cgroup)
{
	char cmd[256];

	if (!T.cgroup[0]) {
		fprintf(stderr, "cgroup: no v1 perf_event hierarchy mounted: skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "exec %s/cgin-busy 1 30", T.tmp);
	spawn(T.cgroup, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", T.tmp);
	spawn(NULL, cmd);
	sleep_ms(300);
	run_ok(&r, PROFILE("--backend", "perf", "--cgroup", T.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(comm_total("cgin-busy") > 0, "%s: %.300s", r.err, r.out);
	assert_only((const char *[]){ "cgin-busy;", NULL });
	run_result_free(&r);
	/* auto: the perf backend, and -v says why not bpf. */
	run_ok(&r, PROFILE("--wall", "-v", "--cgroup", T.cgroup, "-f", "1"), 30);
	ck_assert_msg(strstr(r.err, "backend perf: usable; chosen"), "%s", r.err);
	ck_assert_msg(strstr(r.err, "cgroup v1 directory"), "%s", r.err);
	run_result_free(&r);
	run_cmd(PROFILE("--backend", "bpf", "--wall", "--cgroup", T.cgroup, "1"), 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 2);
}
END_TEST

/* Paths that are not cgroup directories or pinned maps: one line, exit 2, without blocking. */
START_TEST(bad_paths_are_usage_errors)
{
	char dir[] = "/tmp/profile-cgbad-XXXXXX", fifo[64], file[64], missing[64];
	const char *opts[] = { "--cgroup", "--cgroupmap", "--mntnsmap" };

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	snprintf(missing, sizeof(missing), "%s/missing", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	close(open(file, O_CREAT | O_WRONLY, 0600));
	for (size_t o = 0; o < 3; o++) {
		const char *paths[] = { fifo, file, missing, dir, "" };

		for (size_t p = 0; p < sizeof(paths) / sizeof(paths[0]); p++) {
			time_t t0 = time(NULL);

			run_cmd(PROFILE((char *)opts[o], (char *)paths[p], "1"), 10, 0, &r);
			ck_assert_msg(r.exit_code == 2, "%s %s: exit %d: %s", opts[o], paths[p],
				      r.exit_code, r.err);
			ck_assert_msg(strchr(r.err, '\n') == r.err + strlen(r.err) - 1,
				      "not one line: %s", r.err);
			ck_assert_str_eq(r.out, "");
			ck_assert_int_le(time(NULL) - t0, 3);
			run_result_free(&r);
		}
	}
	/* A launched command is not in the cgroup: refused rather than empty. */
	run_cmd(PROFILE("--cgroup", "/sys/fs/cgroup", "--", "/bin/true"), 10, 0, &r);
	ck_assert_int_eq(r.exit_code, 2);
	ck_assert_ptr_nonnull(strstr(r.err, "not allowed with argument --cgroup"));
	run_result_free(&r);
	unlink(fifo);
	unlink(file);
	rmdir(dir);
}
END_TEST

/* --cgroup takes comma lists and repeats, up to the BPF filter's 16; the maps one path each. */
START_TEST(options_collect_cgroups)
{
	char *ok[] = { "profile", "--cgroup", "/a,/b", "--cgroup=/c", "--cgroupmap", "/m",
		       "--mntnsmap", "/n", NULL };
	char *too_many[] = { "profile", "--cgroup", "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17",
			     NULL };
	char *empty[] = { "profile", "--cgroup", "/a,,/b", NULL };
	struct run_opts o;
	char err[256];

	ck_assert_int_eq(options__parse(8, ok, &o, err, sizeof(err)), OPTIONS_OK);
	ck_assert_int_eq(o.nr_cgroups, 3);
	ck_assert_str_eq(o.cgroups[0], "/a");
	ck_assert_str_eq(o.cgroups[1], "/b");
	ck_assert_str_eq(o.cgroups[2], "/c");
	ck_assert_str_eq(o.cgroupmap, "/m");
	ck_assert_str_eq(o.mntnsmap, "/n");
	options__free(&o);
	ck_assert_int_eq(options__parse(3, too_many, &o, err, sizeof(err)), OPTIONS_USAGE_ERROR);
	ck_assert_str_eq(err, "argument --cgroup: at most 16 cgroups");
	options__free(&o);
	ck_assert_int_eq(options__parse(3, empty, &o, err, sizeof(err)), OPTIONS_USAGE_ERROR);
	options__free(&o);
}
END_TEST

Suite *cgroup_suite(void)
{
	Suite *s = suite_create("cgroup");
	TCase *tc = tcase_create("cgroups");
	TCase *usage = tcase_create("usage");

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_unchecked_fixture(tc, setup_v2, remove_all);
	tcase_add_checked_fixture(tc, NULL, kill_spawned);
	tcase_add_loop_test(tc, profile_keeps_the_cgroup_and_its_children, 0, NR_CG_BACKENDS);
	tcase_add_loop_test(tc, offcputime_keeps_the_cgroup_and_its_children, 0, 2);
	tcase_add_loop_test(tc, wall_keeps_the_cgroup, 0, NR_CG_BACKENDS);
	tcase_add_loop_test(tc, pid_and_cgroup_both_apply, 0, NR_CG_BACKENDS);
	tcase_add_test(tc, table_knows_threads_from_their_fork);
	tcase_add_test(tc, table_keeps_the_cgroup_with_dwarf);
	tcase_add_test(tc, cgroupmap_keeps_the_mapped_cgroup);
	tcase_add_test(tc, mntnsmap_keeps_the_mapped_namespace);
	tcase_add_test(tc, unprivileged_where_paranoid_allows);
	suite_add_tcase(s, tc);

	tc = tcase_create("hybrid");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 90);
	tcase_add_unchecked_fixture(tc, setup_hybrid, teardown_hybrid);
	tcase_add_checked_fixture(tc, NULL, kill_spawned);
	tcase_add_test(tc, hybrid_host_takes_the_table);
	tcase_add_test(tc, hybrid_wall_keeps_the_cgroup);
	tcase_add_test(tc, hybrid_in_a_pid_namespace_says_why);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, table_fill_reads_the_thread_lists);
	suite_add_tcase(s, tc);

	tc = tcase_create("v1");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 60);
	tcase_add_unchecked_fixture(tc, setup_v1, remove_all);
	tcase_add_checked_fixture(tc, NULL, kill_spawned);
	tcase_add_test(tc, v1_perf_event_cgroup);
	suite_add_tcase(s, tc);

	tcase_set_timeout(usage, 60);
	tcase_add_test(usage, bad_paths_are_usage_errors);
	tcase_add_test(usage, options_collect_cgroups);
	suite_add_tcase(s, usage);
	return s;
}
