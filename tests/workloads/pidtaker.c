// SPDX-License-Identifier: GPL-2.0
/*
 * Takes over a pid another process had: forks (children exit at once)
 * until the kernel hands out PID again, then that child sleeps for
 * SECONDS, holding it, while this process exits (issue 20: pid reuse by
 * another user). Gives up after a million forks. Prints "took PID" or
 * "missed". With a COMMAND, that child runs it (exec: the pid stays)
 * instead of sleeping, once this process has printed.
 * Usage: pidtaker PID SECONDS [COMMAND [ARG...]]
 *
 * Cycling through the pids takes 32,768 forks or more: seconds on an idle
 * host, minutes on a loaded one. Run as root with PIDTAKER_UID=UID, it
 * asks the kernel for the pid instead (ns_last_pid, as CRIU does; another
 * process may still take it first, then it asks again) and the child
 * becomes UID (group too, no others) before it goes on: the user's
 * process, reached sooner than the user could.
 */
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

/* The next fork gets want, if no other process forks first; false if not allowed. */
static int ask_for(pid_t want)
{
	FILE *f = fopen("/proc/sys/kernel/ns_last_pid", "w");
	int ok;

	if (!f)
		return 0;
	ok = fprintf(f, "%d", (int)want - 1) > 0;
	return fclose(f) == 0 && ok;
}

int main(int argc, char **argv)
{
	pid_t want = argc > 1 ? (pid_t)atoi(argv[1]) : 0;
	unsigned int seconds = argc > 2 ? (unsigned int)atoi(argv[2]) : 5;
	const char *as = getenv("PIDTAKER_UID");
	uid_t uid = as ? (uid_t)atoi(as) : 0;
	int pipefd[2];

	if (want <= 1 || pipe(pipefd))
		return 2;
	for (long i = 0; i < 1000000; i++) {
		pid_t pid;

		if (as && !ask_for(want))
			as = NULL;	/* not root: cycle through the pids */
		pid = fork();
		if (pid < 0)
			return 1;
		if (pid == 0) {
			char c;

			if (getpid() != want)
				_exit(0);
			if (as && (setgroups(0, NULL) || setgid(uid) || setuid(uid)))
				_exit(1);
			/* The parent says when to go: after it has printed. */
			close(pipefd[1]);
			if (read(pipefd[0], &c, 1) < 0)
				_exit(1);
			if (argc > 3) {
				execvp(argv[3], argv + 3);
				_exit(127);
			}
			sleep(seconds);
			_exit(0);
		}
		if (pid == want) {
			printf("took %d\n", (int)pid);
			fflush(stdout);
			close(pipefd[1]);
			return 0;
		}
		waitpid(pid, NULL, 0);
	}
	printf("missed\n");
	return 1;
}
