// SPDX-License-Identifier: GPL-2.0
/*
 * Takes over a pid another process had: forks (children exit at once)
 * until the kernel hands out PID again, then that child sleeps for
 * SECONDS, holding it, while this process exits (issue 20: pid reuse by
 * another user). Gives up after a million forks. Prints "took PID" or
 * "missed".
 * Usage: pidtaker PID SECONDS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	pid_t want = argc > 1 ? (pid_t)atoi(argv[1]) : 0;
	unsigned int seconds = argc > 2 ? (unsigned int)atoi(argv[2]) : 5;
	int pipefd[2];

	if (want <= 0 || pipe(pipefd))
		return 2;
	for (long i = 0; i < 1000000; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			char c;

			if (getpid() != want)
				_exit(0);
			/* The parent says when to go: after it has printed. */
			close(pipefd[1]);
			if (read(pipefd[0], &c, 1) < 0)
				_exit(1);
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
