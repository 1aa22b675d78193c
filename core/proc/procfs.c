// SPDX-License-Identifier: GPL-2.0
/*
 * What /proc says of a process or thread now: its status (real uid, tgid,
 * state), a thread's comm, whether it is a kernel thread.
 */
#include "core/proc/proctrack_internal.h"

#include "core/lib/pidstart.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void procfs__read_status(pid_t pid, struct proc_status *st)
{
	char path[64], line[256], state;
	unsigned long uid;
	int tgid;
	FILE *f;

	*st = (struct proc_status){ .uid = (uid_t)-1 };
	if (pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	/* A comm is one line of at most 64 escaped bytes: no other line can be forged by it. */
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "State: %c", &state) == 1)
			st->state = state;
		else if (sscanf(line, "Tgid: %d", &tgid) == 1)
			st->tgid = tgid;
		else if (sscanf(line, "Uid: %lu", &uid) == 1) {
			st->uid = (uid_t)uid;
			break;	/* after State and Tgid */
		}
	}
	fclose(f);
}

/* The real uid of a running process (/proc/PID/status), or (uid_t)-1. */
uid_t procfs__read_uid(pid_t pid)
{
	struct proc_status st;

	procfs__read_status(pid, &st);
	return st.uid;
}

bool procfs__read_comm(pid_t pid, pid_t tid, char *buf, size_t len, int64_t *began_wall_ns)
{
	char path[96];
	ssize_t n = -1;
	int dirfd, fd;

	*began_wall_ns = 0;
	if (len < 2)
		return false;
	/* One directory for both: the comm and the start are of one thread. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)tid);
	dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirfd < 0)
		return false;
	fd = openat(dirfd, "comm", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	if (n > 0)
		*began_wall_ns = pidstart__wall_ns(dirfd);
	close(dirfd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return true;
}

/* PF_KTHREAD of include/linux/sched.h, in the flags field of /proc/PID/stat. */
#define PF_KTHREAD 0x00200000

/* Whether pid is a kernel thread, from /proc/PID/stat; a process gone is taken for a user one. */
int procfs__read_kind(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long flags;
	const char *after;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return KIND_USER;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return KIND_USER;
	buf[n] = '\0';
	/* The comm may hold spaces and parentheses: the fields start after the last ')'. */
	after = strrchr(buf, ')');
	if (!after || sscanf(after + 1, " %*c %*d %*d %*d %*d %*d %lu", &flags) != 1)
		return KIND_USER;
	return flags & PF_KTHREAD ? KIND_KERNEL : KIND_USER;
}

pid_t procfs__tgid_of(pid_t tid)
{
	char path[64], line[128];
	pid_t tgid = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}
