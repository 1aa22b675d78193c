// SPDX-License-Identifier: GPL-2.0
/* What the cgroup suites share (cgrun.h). */
#include "tests/integration/sampling/cgrun.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct cgt_case cgt;
struct run_result cgt_r;

/* The copies: one program under several names, the comm telling where each runs. */
static const char *const copies[][2] = {
	{ "cgin-busy", "busy" },   { "cgkid-busy", "busy" },   { "cgout-busy", "busy" },
	{ "cgin-sleep", "sleep" }, { "cgkid-sleep", "sleep" }, { "cgout-sleep", "sleep" },
	{ "cgin-sh", "sh" },	   { "cgkid-sh", "sh" },       { "cgout-sh", "sh" },
};

void cgt_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* An emptied cgroup stays busy until its last task is reaped: a few tries. */
static void remove_cgroup(const char *path)
{
	for (int i = 0; path[0] && i < 100 && rmdir(path) && errno == EBUSY; i++)
		cgt_sleep_ms(20);
}

/* The mount point of the first filesystem of type fstype (with option opt, if given). */
static bool find_mount(const char *fstype, const char *opt, char *out, size_t len)
{
	char dev[256], dir[256], type[64], opts[512];
	FILE *f = fopen("/proc/mounts", "re");
	bool found = false;

	while (f && !found &&
	       fscanf(f, "%255s %255s %63s %511s %*d %*d", dev, dir, type, opts) == 4)
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

void cgt_remove_all(void)
{
	char path[300];

	remove_cgroup(cgt.child);
	remove_cgroup(cgt.cgroup);
	cgt.child[0] = cgt.cgroup[0] = 0;
	if (!cgt.tmp[0])
		return;
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", cgt.tmp, copies[i][0]);
		unlink(path);
	}
	snprintf(path, sizeof(path), "%s/bpffs", cgt.tmp);
	rmdir(path);
	rmdir(cgt.tmp);
	cgt.tmp[0] = 0;
}

/* A fresh cgroup and its child under the mount of fstype, and the copies. */
static void make_cgroups(const char *fstype, const char *opt)
{
	char path[300];

	memset(&cgt, 0, sizeof(cgt));
	if (!find_mount(fstype, opt, cgt.mount, sizeof(cgt.mount)))
		return;
	snprintf(cgt.tmp, sizeof(cgt.tmp), "/tmp/profile-cgroup-XXXXXX");
	if (!mkdtemp(cgt.tmp)) {
		cgt.tmp[0] = 0;
		return;
	}
	for (size_t i = 0; i < sizeof(copies) / sizeof(copies[0]); i++) {
		const char *from = !strcmp(copies[i][1], "busy") ? workload("busy")
				   : !strcmp(copies[i][1], "sh") ? "/bin/sh" : "/bin/sleep";

		snprintf(path, sizeof(path), "%s/%s", cgt.tmp, copies[i][0]);
		if (!copy_file(from, path))
			return;
	}
	snprintf(cgt.cgroup, sizeof(cgt.cgroup), "%s/profile-test-%d", cgt.mount, (int)getpid());
	snprintf(cgt.child, sizeof(cgt.child), "%s/child", cgt.cgroup);
	if (mkdir(cgt.cgroup, 0755) || mkdir(cgt.child, 0755)) {
		fprintf(stderr, "cgroup: mkdir %s: %s\n", cgt.child, strerror(errno));
		cgt_remove_all();
	}
}

void cgt_setup_v2(void)
{
	make_cgroups("cgroup2", NULL);
}

void cgt_setup_v1(void)
{
	make_cgroups("cgroup", "perf_event");
}

void cgt_kill_spawned(void)
{
	for (int i = 0; i < cgt.nr_pids; i++) {
		kill(-cgt.pids[i], SIGKILL);
		waitpid(cgt.pids[i], NULL, 0);
	}
	cgt.nr_pids = 0;
	run_result_free(&cgt_r);
}

TCase *cgt_tcase(const char *name, int timeout_s, SFun setup, SFun teardown)
{
	TCase *tc = tcase_create(name);

	tcase_set_tags(tc, TAG_ROOT);
	tcase_set_timeout(tc, timeout_s);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, NULL, cgt_kill_spawned);
	return tc;
}

pid_t cgt_spawn(const char *dir, const char *cmd)
{
	char script[1024];
	pid_t pid, test = getpid();

	ck_assert_int_lt(cgt.nr_pids, CGT_MAX_SPAWNED);
	if (dir)
		snprintf(script, sizeof(script), "echo $$ > %s/cgroup.procs || exit 1; %s", dir,
			 cmd);
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
	cgt.pids[cgt.nr_pids++] = pid;
	return pid;
}

pid_t cgt_start_busy(void)
{
	char cmd[256];
	pid_t in;

	snprintf(cmd, sizeof(cmd), "exec %s/cgin-busy 1 30", cgt.tmp);
	in = cgt_spawn(cgt.cgroup, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgkid-busy 1 30", cgt.tmp);
	cgt_spawn(cgt.child, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", cgt.tmp);
	cgt_spawn(NULL, cmd);
	cgt_sleep_ms(300);
	return in;
}

void cgt_start_sleepers(void)
{
	static const char loop[] = "exec %s/%s-sh -c 'while :; do %s/%s-sleep 0.01; done'";
	static const char *const where[] = { "cgin", "cgkid", "cgout" };
	char cmd[512];

	for (int i = 0; i < 3; i++) {
		snprintf(cmd, sizeof(cmd), loop, cgt.tmp, where[i], cgt.tmp, where[i]);
		cgt_spawn(i == 0 ? cgt.cgroup : i == 1 ? cgt.child : NULL, cmd);
	}
	cgt_sleep_ms(300);
}

uint64_t cgt_comm_total(const char *comm)
{
	char prefix[64];

	snprintf(prefix, sizeof(prefix), "%s;", comm);
	return folded_count_prefix(cgt_r.out, prefix);
}

void cgt_assert_only_but(const char *const *comms, uint64_t max_unknown)
{
	const char *line = cgt_r.out;
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
			      cgt_r.err);
		line += len + (line[len] == '\n');
	}
	if (unknown)
		fprintf(stderr, "cgroup: %llu of an unnamed process (forked as the profile "
				"started)\n", (unsigned long long)unknown);
}

void cgt_assert_only(const char *const *comms)
{
	cgt_assert_only_but(comms, 0);
}

const char *cgt_offcputime_bin(void)
{
	static char path[600];

	snprintf(path, sizeof(path), "%s", profile_bin());
	strcpy(strrchr(path, '/') + 1, "offcputime");
	return path;
}
