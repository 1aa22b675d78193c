// SPDX-License-Identifier: GPL-2.0
#include "app/run/signals.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <unistd.h>

#include "core/lib/interrupt.h"

static volatile sig_atomic_t stop_signal;
static volatile sig_atomic_t forward_pid;
static int wake_pipe[2] = { -1, -1 };
/* During the report: the report's fd, and /dev/null to put in its place on a signal. */
static volatile sig_atomic_t silence_fd = -1;
static int null_fd = -1;

/* The dispositions we change, as they were: a launched command gets them back. */
static const int handled[] = { SIGINT, SIGTERM, SIGHUP, SIGCHLD, SIGPIPE };
#define NR_HANDLED (sizeof(handled) / sizeof(handled[0]))
static struct sigaction original[NR_HANDLED];
static sigset_t original_mask;
static bool saved;

static void on_signal(int sig)
{
	int saved = errno;

	if (sig != SIGCHLD) {
		stop_signal = sig;
		interrupt__raise();
		/*
		 * The report stops: whatever is still written goes nowhere, so that
		 * no write blocks again on a reader that does not read (our fd only;
		 * the file or pipe itself is untouched).
		 */
		if (silence_fd >= 0 && null_fd >= 0)
			dup2(null_fd, silence_fd);
		/* Ctrl-C reaches the command through the terminal; SIGTERM and SIGHUP may not. */
		if (sig != SIGINT && forward_pid > 0)
			kill(forward_pid, sig);
	}
	if (write(wake_pipe[1], "x", 1) < 0) {
		/* full pipe: a wake-up is already pending */
	}
	errno = saved;
}

int signals__install(void)
{
	struct sigaction sa;

	if (wake_pipe[0] < 0 && pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK))
		return -errno;
	if (!saved) {
		for (size_t i = 0; i < NR_HANDLED; i++)
			sigaction(handled[i], NULL, &original[i]);
		sigprocmask(SIG_SETMASK, NULL, &original_mask);
		saved = true;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	for (size_t i = 0; i < NR_HANDLED; i++)
		if (handled[i] != SIGPIPE && sigaction(handled[i], &sa, NULL))
			return -errno;
	/* A closed reader of our output is a write error to report, not a death. */
	signal(SIGPIPE, SIG_IGN);
	return 0;
}

int signals__interrupt_syscalls(int out_fd)
{
	static const int stops[] = { SIGINT, SIGTERM, SIGHUP };
	struct sigaction sa;

	if (out_fd >= 0 && null_fd < 0)
		null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	silence_fd = out_fd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: a write blocked on a full pipe returns EINTR. */
	for (size_t i = 0; i < sizeof(stops) / sizeof(stops[0]); i++)
		if (sigaction(stops[i], &sa, NULL))
			return -errno;
	return 0;
}

void signals__restore_original(void)
{
	if (!saved)
		return;
	for (size_t i = 0; i < NR_HANDLED; i++)
		sigaction(handled[i], &original[i], NULL);
	sigprocmask(SIG_SETMASK, &original_mask, NULL);
}

int signals__wake_fd(void)
{
	return wake_pipe[0];
}

void signals__drain_wakeups(void)
{
	char buf[64];

	while (read(wake_pipe[0], buf, sizeof(buf)) > 0)
		;
}

int signals__stop_requested(void)
{
	return stop_signal;
}

void signals__forward_to(pid_t pid)
{
	forward_pid = pid;
}
