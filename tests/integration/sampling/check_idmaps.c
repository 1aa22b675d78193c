// SPDX-License-Identifier: GPL-2.0
/*
 * bcc's --cgroupmap and --mntnsmap on real cgroups and mount namespaces
 * (cgrun.h): a hash map pinned in a bpf filesystem names one id, and only
 * the tasks of that cgroup (not its child's) or that namespace may appear;
 * the bpf backend reads the maps, the perf backend refuses them. Their bad
 * paths are check_cgroup.c's usage tests, with --cgroup's.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/integration/sampling/cgrun.h"

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

	snprintf(dir, sizeof(dir), "%s/bpffs", cgt.tmp);
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
	ck_assert_int_eq(stat(cgt.cgroup, &st), 0);
	pin_id_map(map, sizeof(map), "cgmap", "8", st.st_ino);
	cgt_start_busy();
	cgt_start_sleepers();
	run_ok(&cgt_r, PROFILE("--cgroupmap", map, "-f", "-F", "99", "-v", "2"), 30);
	ck_assert_msg(strstr(cgt_r.err, "backend bpf: usable; chosen"), "%s", cgt_r.err);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	/* Not the child cgroup's: bcc matches the id itself, not its ancestors. */
	cgt_assert_only((const char *[]){ "cgin-busy;", "cgin-sleep;", "cgin-sh;", NULL });
	run_result_free(&cgt_r);
	/* --unwind auto: frame pointers, since no program that unwinds by tables reads it. */
	run_ok(&cgt_r, PROFILE("--cgroupmap", map, "--unwind", "auto", "-f", "-F", "99", "-v", "1"),
	       30);
	ck_assert_msg(strstr(cgt_r.err,
			     "unwind: auto: frame pointers: --cgroupmap is read only by"),
		      "%s", cgt_r.err);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	run_result_free(&cgt_r);

	run_ok(&cgt_r,
	       ((char *[]){ (char *)cgt_offcputime_bin(), "--cgroupmap", map, "-f", "2", NULL }),
	       30);
	ck_assert_msg(cgt_comm_total("cgin-sleep") > 500000, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-sleep;", "cgin-sh;", "cgin-busy;", NULL });
	run_result_free(&cgt_r);

	/* The perf backend cannot read it: a usage error. */
	run_cmd(PROFILE("--backend", "perf", "--cgroupmap", map, "1"), 10, 0, &cgt_r);
	ck_assert_int_eq(cgt_r.exit_code, 2);
	ck_assert_ptr_nonnull(strstr(cgt_r.err, "perf backend cannot read BPF maps"));
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
	snprintf(cmd, sizeof(cmd), "exec /usr/bin/unshare -m %s/cgin-busy 1 30", cgt.tmp);
	in = cgt_spawn(NULL, cmd);
	snprintf(cmd, sizeof(cmd), "exec %s/cgout-busy 1 30", cgt.tmp);
	cgt_spawn(NULL, cmd);
	/* Its namespace once unshare has exec'd the workload. */
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)in);
	for (int i = 0; i < 100 && strncmp(comm, "cgin-busy", 9); i++) {
		FILE *f = fopen(path, "re");

		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = 0;
			fclose(f);
		}
		cgt_sleep_ms(20);
	}
	snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)in);
	ck_assert_int_eq(stat(path, &st), 0);
	pin_id_map(map, sizeof(map), "nsmap", "4", st.st_ino);
	run_ok(&cgt_r, PROFILE("--mntnsmap", map, "-f", "-F", "99", "2"), 30);
	ck_assert_msg(cgt_comm_total("cgin-busy") > 0, "%s: %.300s", cgt_r.err, cgt_r.out);
	cgt_assert_only((const char *[]){ "cgin-busy;", NULL });
}
END_TEST

Suite *idmaps_suite(void)
{
	Suite *s = suite_create("idmaps");
	TCase *tc = cgt_tcase("maps", 90, cgt_setup_v2, cgt_remove_all);

	tcase_add_test(tc, cgroupmap_keeps_the_mapped_cgroup);
	tcase_add_test(tc, mntnsmap_keeps_the_mapped_namespace);
	suite_add_tcase(s, tc);
	return s;
}
