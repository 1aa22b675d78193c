// SPDX-License-Identifier: GPL-2.0
#include "app/run/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "app/run/signals.h"

/*
 * The resource limits the profiler was started with. It raises some of its
 * own (RLIMIT_NOFILE to keep mapped files open; libbpf may raise
 * RLIMIT_MEMLOCK on old kernels); a launched command gets these back, as it
 * would have run without the profiler. Read in a constructor: before any
 * part of the program may have changed them.
 */
static struct rlimit original_limits[RLIM_NLIMITS];
static bool limits_saved[RLIM_NLIMITS];

/*
 * The signals ignored when the profiler started (a CI runner may start
 * everything so), which the command must find ignored too. Read and set
 * with the raw system call: glibc's sigaction refuses its own signals 32
 * and 33, and installs a handler for 33 (SIGSETXID) once the profiler has
 * threads, which exec would turn into the default action.
 */
#define MAX_SIGNAL 64
static bool ignored_at_start[MAX_SIGNAL + 1];

struct kernel_sigaction {
	void *handler;
	unsigned long flags;
	void *restorer;
	uint64_t mask;
};

__attribute__((constructor)) static void save_limits(void)
{
	for (int i = 0; i < RLIM_NLIMITS; i++)
		limits_saved[i] = !getrlimit(i, &original_limits[i]);
	for (int sig = 1; sig <= MAX_SIGNAL; sig++) {
		struct kernel_sigaction old;

		if (!syscall(SYS_rt_sigaction, sig, NULL, &old, sizeof(old.mask)))
			ignored_at_start[sig] = old.handler == (void *)SIG_IGN;
	}
}

static void restore_ignored(void)
{
	struct kernel_sigaction ign = { .handler = (void *)SIG_IGN };

	for (int sig = 1; sig <= MAX_SIGNAL; sig++)
		if (ignored_at_start[sig])
			syscall(SYS_rt_sigaction, sig, &ign, NULL, sizeof(ign.mask));
}

static void restore_limits(void)
{
	struct rlimit now;

	for (int i = 0; i < RLIM_NLIMITS; i++) {
		if (!limits_saved[i] || getrlimit(i, &now))
			continue;
		if (now.rlim_cur == original_limits[i].rlim_cur &&
		    now.rlim_max == original_limits[i].rlim_max)
			continue;
		/* Lowering is always allowed; a hard limit raised back needs root, as it had. */
		setrlimit(i, &original_limits[i]);
	}
}

int launch__spawn(struct launch *l, char *const argv[])
{
	int go[2], err_pipe[2];
	pid_t pid;

	memset(l, 0, sizeof(*l));
	l->go_fd = l->err_fd = -1;
	if (pipe2(go, O_CLOEXEC))
		return -errno;
	if (pipe2(err_pipe, O_CLOEXEC)) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		return err;
	}
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(go[0]);
		close(go[1]);
		close(err_pipe[0]);
		close(err_pipe[1]);
		return err;
	}
	if (pid == 0) {
		char byte;
		int e;

		close(go[1]);
		close(err_pipe[0]);
		signals__restore_original();
		restore_ignored();
		restore_limits();
		/* EOF without a byte: the profiler gave up; do not run the command. */
		if (read(go[0], &byte, 1) != 1)
			_exit(127);
		close(go[0]);
		execvp(argv[0], argv);
		e = errno;
		if (write(err_pipe[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err_pipe[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = err_pipe[0];
	return 0;
}

int launch__go(struct launch *l)
{
	int child_err = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1) {
		int err = -errno;

		launch__abort(l);
		return err;
	}
	close(l->go_fd);
	l->go_fd = -1;
	/* The exec closes err_fd's other end (CLOEXEC); a failure writes errno. */
	do
		n = read(l->err_fd, &child_err, sizeof(child_err));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(child_err)) {
		launch__wait(l);
		return -child_err;
	}
	return 0;
}

void launch__abort(struct launch *l)
{
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	launch__wait(l);
}

int launch__poll(struct launch *l)
{
	pid_t r;

	if (l->reaped)
		return 1;
	r = waitpid(l->pid, &l->status, WNOHANG);
	if (r == l->pid) {
		l->reaped = 1;
		return 1;
	}
	return 0;
}

void launch__wait(struct launch *l)
{
	while (!l->reaped) {
		pid_t r = waitpid(l->pid, &l->status, 0);

		if (r == l->pid)
			l->reaped = 1;
		else if (r < 0 && errno != EINTR)
			break;
	}
}

int launch__exit_code(const struct launch *l)
{
	if (WIFEXITED(l->status))
		return WEXITSTATUS(l->status);
	if (WIFSIGNALED(l->status))
		return 128 + WTERMSIG(l->status);
	return 1;
}
