// SPDX-License-Identifier: GPL-2.0
/*
 * A process of its user that is not dumpable (prctl(PR_SET_DUMPABLE, 0),
 * as after running a set-user-ID program): its /proc/PID files are owned
 * by root, while their contents, its command line, are its user's (issue
 * 32: bind-mounted where a root-owned file is trusted). Runs itself again
 * with TEXT as its whole command line (argv[0], no other argument), prints
 * "pid=PID" and sleeps for SECONDS.
 * Usage: undumpable SECONDS TEXT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	const char *seconds = getenv("UNDUMPABLE_SECONDS");

	if (argc == 3) {
		/* The seconds go by the environment: the command line is TEXT alone. */
		setenv("UNDUMPABLE_SECONDS", argv[1], 1);
		execv("/proc/self/exe", (char *[]){ argv[2], NULL });
		perror("execv");
		return 1;
	}
	if (argc != 1 || !seconds)
		return 2;
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return 1;
	printf("pid=%d\n", (int)getpid());
	fflush(stdout);
	sleep((unsigned int)atoi(seconds));
	return 0;
}
