// SPDX-License-Identifier: GPL-2.0
/*
 * --cgroup on real cgroups (cgrun.h): only the cgroup's tasks and its
 * descendants' may appear, on both backends, for profile, offcputime and
 * profile --wall. Bad paths (of bcc's --cgroupmap and --mntnsmap too, whose
 * filters check_idmaps.c tests) are one-line usage errors without root.
 * Where perf events cannot follow a v2 cgroup (Linux 4.9, hybrid hosts) the
 * bpf backend keeps a thread table: tested on this kernel through a seam
 * that asks for it, and on a hybrid host made for the test (a v1
 * perf_event hierarchy mounted while it runs).
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
#include "tests/integration/sampling/cgrun.h"

/* The child that holds a v1 perf_event hierarchy mounted: a hybrid host. */
static pid_t hybrid;

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

	cgt_setup_v2();
	if (!cgt.cgroup[0] || perf_event_hierarchy() != 0)
		return;
	snprintf(dir, sizeof(dir), "%s/v1", cgt.tmp);
	if (mkdir(dir, 0700) || pipe2(fds, O_CLOEXEC))
		return;
	hybrid = fork();
	if (hybrid == 0) {
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
	if (hybrid < 0 || read(fds[0], &ok, 1) != 1 || !ok)
		fprintf(stderr, "cgroup: mounting a v1 perf_event hierarchy: %s\n",
			hybrid < 0 ? strerror(errno) : "failed");
	close(fds[0]);
}

static void teardown_hybrid(void)
{
	char dir[600];

	if (hybrid > 0) {
		kill(hybrid, SIGKILL);
		waitpid(hybrid, NULL, 0);
		/* The hierarchy ends shortly after its last mount. */
		for (int i = 0; i < 250 && perf_event_hierarchy() > 0; i++)
			cgt_sleep_ms(20);
		if (perf_event_hierarchy() > 0)
			fprintf(stderr, "cgroup: perf_event is still on a v1 hierarchy\n");
	}
	hybrid = 0;
	snprintf(dir, sizeof(dir), "%s/v1", cgt.tmp);
	if (cgt.tmp[0])
		rmdir(dir);
	cgt_remove_all();
}

START_TEST(profile_keeps_the_cgroup_and_its_children)
{
	const char *be = cg_backends[_i];

	SKIP_WITHOUT_CGROUP2();
	cgt_start_busy();
	/* Without the filter, the outside copy is there: the test can tell. */
	run_ok(&cgt_r, PROFILE_AS(be, "-f", "-F", "99", "1"), 30);
	ck_assert_msg(cgt_comm_total("cgout-busy") > 0, "control run: %.300s", cgt_r.out);
	run_result_free(&cgt_r);

	run_ok(&cgt_r, PROFILE_AS(be, "-v", "--cgroup", cgt.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(!strcmp(be, "bpf-table") == !!strstr(cgt_r.err, TABLE_NOTE), "%s", cgt_r.err);
	fprintf(stderr, "cgroup: %s: in %llu, child %llu, out %llu samples\n", be,
		(unsigned long long)cgt_comm_total("cgin-busy"),
		(unsigned long long)cgt_comm_total("cgkid-busy"),
		(unsigned long long)cgt_comm_total("cgout-busy"));
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	ck_assert_msg(cgt_comm_total("cgkid-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
}
END_TEST

START_TEST(offcputime_keeps_the_cgroup_and_its_children)
{
	const char *be = test_backends[_i];

	SKIP_WITHOUT_CGROUP2();
	cgt_start_sleepers();
	run_ok(&cgt_r,
	       ((char *[]){ (char *)cgt_offcputime_bin(), "--backend", (char *)be, "--cgroup",
			    cgt.cgroup, "-f", "2", NULL }),
	       30);
	fprintf(stderr, "cgroup: offcputime %s: in %llu us, child %llu us, out %llu us\n", be,
		(unsigned long long)cgt_comm_total("cgin-sleep"),
		(unsigned long long)cgt_comm_total("cgkid-sleep"),
		(unsigned long long)cgt_comm_total("cgout-sleep"));
	/* Half of the 2 s at least: each copy sleeps 10 ms between forks and execs. */
	ck_assert_msg(cgt_comm_total("cgin-sleep") > 500000, "%s: %.300s", cgt_r.err, cgt_r.out);
	ck_assert_msg(cgt_comm_total("cgkid-sleep") > 500000, "%s: %.300s", cgt_r.err, cgt_r.out);
	/* The loops' shells are in the cgroups too: they wait for each sleep. */
	cgt_assert_only_but((const char *[]){ "cgin-sleep;", "cgkid-sleep;", "cgin-sh;",
					      "cgkid-sh;", NULL },
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
	cgt_start_busy();
	cgt_start_sleepers();
	run_ok(&cgt_r, PROFILE_AS(be, "-v", "--wall", "--cgroup", cgt.child, "-f", "2"), 30);
	ck_assert_msg(table == !!strstr(cgt_r.err, TABLE_NOTE), "%s", cgt_r.err);
	ck_assert_msg(cgt_comm_total("cgkid-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	ck_assert_msg(cgt_comm_total("cgkid-sleep") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only_but((const char *[]){ "cgkid-busy;", "cgkid-sleep;", "cgkid-sh;", NULL },
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
	cgt_start_busy();
	run_ok(&cgt_r,
	       PROFILE_AS("bpf-table", "-v", "--unwind", "dwarf", "--cgroup", cgt.cgroup, "-f",
			  "-F", "99", "2"),
	       30);
	ck_assert_msg(strstr(cgt_r.err, TABLE_NOTE), "%s", cgt_r.err);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	ck_assert_msg(cgt_comm_total("cgkid-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
}
END_TEST

/* -p and --cgroup: both filters apply (perf: events on the cgroup, pids in the pipeline). */
START_TEST(pid_and_cgroup_both_apply)
{
	const char *be = cg_backends[_i];
	char pids[64];
	pid_t in;

	SKIP_WITHOUT_CGROUP2();
	in = cgt_start_busy();
	/* The inside copy and the outside one (spawned third), but only the cgroup's child. */
	snprintf(pids, sizeof(pids), "%d,%d", (int)in, (int)cgt.pids[2]);
	run_ok(&cgt_r, PROFILE_AS(be, "-p", pids, "--cgroup", cgt.cgroup, "-f", "-F", "99", "2"),
	       30);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", NULL });
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
		 cgt.tmp);
	cgt_spawn(cgt.cgroup, cmd);
	cgt_sleep_ms(300);
	run_ok(&cgt_r, PROFILE_AS("bpf-table", "--cgroup", cgt.cgroup, "-f", "-F", "99", "2"), 30);
	fprintf(stderr, "cgroup: threads from their fork: %llu samples\n",
		(unsigned long long)cgt_comm_total("cgin-busy"));
	/* About 99 Hz x 0.3 s x 4 copies; few if any without the fork. */
	ck_assert_msg(cgt_comm_total("cgin-busy") >= 30, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", "sh;", "chrt;", "sleep;", NULL });
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
	cgt_start_busy();
	write_paranoid(0);
	/* Restored before any assertion: a failed one ends the test at once. */
	run_cmd(((char *[]){ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
			     "--clear-groups", (char *)profile_bin(), "-v", "--cgroup", cgt.cgroup,
			     "-f", "2", NULL }),
		30, 0, &cgt_r);
	write_paranoid(saved);
	ck_assert_msg(cgt_r.exit_code == 0, "exit %d: %s", cgt_r.exit_code, cgt_r.err);
	ck_assert_ptr_nonnull(strstr(cgt_r.err, "backend perf: usable; chosen"));
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
	run_result_free(&cgt_r);

	write_paranoid(2);
	run_cmd(((char *[]){ "/usr/bin/setpriv", "--reuid=65534", "--regid=65534",
			     "--clear-groups", (char *)profile_bin(), "--cgroup", cgt.cgroup, "1",
			     NULL }),
		30, 0, &cgt_r);
	write_paranoid(saved);
	ck_assert_int_eq(cgt_r.exit_code, 1);
	ck_assert_msg(strstr(cgt_r.err, "kernel.perf_event_paranoid <= 0") &&
			      strstr(cgt_r.err, "events on a cgroup are CPU-wide"),
		      "%s", cgt_r.err);
}
END_TEST

#define SKIP_WITHOUT_HYBRID()                                                                 \
	do {                                                                                  \
		if (!cgt.cgroup[0] || perf_event_hierarchy() <= 0) {                            \
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
	cgt_start_busy();
	run_cmd(PROFILE("--backend", "perf", "--cgroup", cgt.cgroup, "1"), 30, 0, &cgt_r);
	ck_assert_int_eq(cgt_r.exit_code, 1);
	ck_assert_msg(strstr(cgt_r.err, "hybrid host"), "%s", cgt_r.err);
	run_result_free(&cgt_r);

	run_ok(&cgt_r, PROFILE("-v", "--cgroup", cgt.cgroup, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(strstr(cgt_r.err, "backend bpf: usable; chosen") &&
			  strstr(cgt_r.err, TABLE_NOTE) && strstr(cgt_r.err, "hybrid host"),
		      "%s", cgt_r.err);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	ck_assert_msg(cgt_comm_total("cgkid-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", "cgkid-busy;", NULL });
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
			     (char *)profile_bin(), "--cgroup", cgt.cgroup, "1", NULL }),
		30, 0, &cgt_r);
	ck_assert_int_eq(cgt_r.exit_code, 1);
	ck_assert_msg(strstr(cgt_r.err, "no backend can run here: bpf: ") &&
			      strstr(cgt_r.err, "pid namespace") && strstr(cgt_r.err, "; perf: ") &&
			      strstr(cgt_r.err, "hybrid host"),
		      "%s", cgt_r.err);
	ck_assert_msg(strchr(cgt_r.err, '\n') == cgt_r.err + strlen(cgt_r.err) - 1,
		      "not one line: %s", cgt_r.err);
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
	run_cmd(((char *[]){ "/bin/rm", "-rf", dir, NULL }), 10, 0, &cgt_r);
}
END_TEST

/* A v1 perf_event cgroup: the perf backend's events take it; bpf's off-CPU program cannot. */
START_TEST(v1_perf_event_cgroup)
{
	char cmd[256];

	if (!cgt.cgroup[0]) {
		fprintf(stderr, "cgroup: no v1 perf_event hierarchy mounted: skipped\n");
		return;
	}
	snprintf(cmd, sizeof(cmd), "exec %s/cgin-busy 1 30", cgt.tmp);
	cgt_spawn(cgt.cgroup, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", cgt.tmp);
	cgt_spawn(NULL, cmd);
	cgt_sleep_ms(300);
	run_ok(&cgt_r, PROFILE("--backend", "perf", "--cgroup", cgt.cgroup, "-f", "-F", "99", "2"),
	       30);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", NULL });
	run_result_free(&cgt_r);
	/* auto: the perf backend, and -v says why not bpf. */
	run_ok(&cgt_r, PROFILE("--wall", "-v", "--cgroup", cgt.cgroup, "-f", "1"), 30);
	ck_assert_msg(strstr(cgt_r.err, "backend perf: usable; chosen"), "%s", cgt_r.err);
	ck_assert_msg(strstr(cgt_r.err, "cgroup v1 directory"), "%s", cgt_r.err);
	run_result_free(&cgt_r);
	run_cmd(PROFILE("--backend", "bpf", "--wall", "--cgroup", cgt.cgroup, "1"), 10, 0, &cgt_r);
	ck_assert_int_eq(cgt_r.exit_code, 2);
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

			run_cmd(PROFILE((char *)opts[o], (char *)paths[p], "1"), 10, 0, &cgt_r);
			ck_assert_msg(cgt_r.exit_code == 2, "%s %s: exit %d: %s", opts[o], paths[p],
				      cgt_r.exit_code, cgt_r.err);
			ck_assert_msg(strchr(cgt_r.err, '\n') == cgt_r.err + strlen(cgt_r.err) - 1,
				      "not one line: %s", cgt_r.err);
			ck_assert_str_eq(cgt_r.out, "");
			ck_assert_int_le(time(NULL) - t0, 3);
			run_result_free(&cgt_r);
		}
	}
	/* A launched command is not in the cgroup: refused rather than empty. */
	run_cmd(PROFILE("--cgroup", "/sys/fs/cgroup", "--", "/bin/true"), 10, 0, &cgt_r);
	ck_assert_int_eq(cgt_r.exit_code, 2);
	ck_assert_ptr_nonnull(strstr(cgt_r.err, "not allowed with argument --cgroup"));
	run_result_free(&cgt_r);
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
	TCase *tc = cgt_tcase("cgroups", 90, cgt_setup_v2, cgt_remove_all);
	TCase *usage = tcase_create("usage");

	tcase_add_loop_test(tc, profile_keeps_the_cgroup_and_its_children, 0, NR_CG_BACKENDS);
	tcase_add_loop_test(tc, offcputime_keeps_the_cgroup_and_its_children, 0, 2);
	tcase_add_loop_test(tc, wall_keeps_the_cgroup, 0, NR_CG_BACKENDS);
	tcase_add_loop_test(tc, pid_and_cgroup_both_apply, 0, NR_CG_BACKENDS);
	tcase_add_test(tc, table_knows_threads_from_their_fork);
	tcase_add_test(tc, table_keeps_the_cgroup_with_dwarf);
	tcase_add_test(tc, unprivileged_where_paranoid_allows);
	suite_add_tcase(s, tc);

	tc = cgt_tcase("hybrid", 90, setup_hybrid, teardown_hybrid);
	tcase_add_test(tc, hybrid_host_takes_the_table);
	tcase_add_test(tc, hybrid_wall_keeps_the_cgroup);
	tcase_add_test(tc, hybrid_in_a_pid_namespace_says_why);
	suite_add_tcase(s, tc);

	tc = tcase_create("table");
	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, table_fill_reads_the_thread_lists);
	suite_add_tcase(s, tc);

	tc = cgt_tcase("v1", 60, cgt_setup_v1, cgt_remove_all);
	tcase_add_test(tc, v1_perf_event_cgroup);
	suite_add_tcase(s, tc);

	tcase_set_timeout(usage, 60);
	tcase_add_test(usage, bad_paths_are_usage_errors);
	tcase_add_test(usage, options_collect_cgroups);
	suite_add_tcase(s, usage);
	return s;
}
