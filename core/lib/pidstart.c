// SPDX-License-Identifier: GPL-2.0
#include "core/lib/pidstart.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/lib/clock.h"

/*
 * Slack of the comparison: the start is rounded down to a tick (10 ms at
 * USER_HZ 100) and the two clocks are read one after the other. A process
 * that took the pid began after the one meant had ended, itself after its
 * image began: closer than this only where the pid came round at once.
 */
#define PIDSTART_SLACK_NS 20000000LL

int64_t pidstart__wall_ns(int dirfd)
{
	unsigned long long ticks;
	char buf[1024];
	const char *after;
	long hz = sysconf(_SC_CLK_TCK);
	ssize_t n;
	int fd;

	fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0 || hz <= 0)
		return 0;
	buf[n] = '\0';
	/* The comm may hold spaces and parentheses: fields start after the last ')'. */
	after = strrchr(buf, ')');
	if (!after || sscanf(after + 1,
			     " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d "
			     "%*d %*d %llu",
			     &ticks) != 1)
		return 0;
	/* Field 22, since boot (CLOCK_BOOTTIME: suspended time included), on the wall clock now. */
	return wall_ns() - (clock_ns(CLOCK_BOOTTIME) - (int64_t)(ticks * (1000000000ULL / hz)));
}

bool pidstart__after(int64_t start, int64_t when_ns)
{
	return start && when_ns && start > when_ns + PIDSTART_SLACK_NS;
}

bool pidstart__began_by(int dirfd, int64_t began_ns)
{
	int64_t start = pidstart__wall_ns(dirfd);

	return start && !pidstart__after(start, began_ns);
}
