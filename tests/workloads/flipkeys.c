// SPDX-License-Identifier: GPL-2.0
/*
 * Makes the kernel patch its own text N times, as every profiler run that
 * watches context switches does once: a per-task context-switch event with
 * PERF_RECORD_SWITCH records (what the perf backend opens for off-CPU time
 * without root) turns on the static keys perf_swevent_enabled[CONTEXT_SWITCHES]
 * and perf_sched_events, whose jump labels sit in __schedule; closing it
 * turns the first off again. The kernel patches each site through an int3
 * while other CPUs may be running it. The kernel matrix's optional row
 * (KM_FLIPS) runs this with another task switching on every CPU, to show
 * how an emulator copes with that.
 *
 * Usage: flipkeys N [EVERY]: prints "flips=I" after every EVERY (default
 * 100) rounds, so that a watcher sees progress. Exit 1 when
 * perf_event_open fails.
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, every = argc > 2 ? atol(argv[2]) : 100;
	struct timespec nap = { 0, 200000 };

	if (every < 1)
		every = 1;
	for (long i = 1; i <= n; i++) {
		struct perf_event_attr attr;
		int fd;

		memset(&attr, 0, sizeof(attr));
		attr.size = sizeof(attr);
		attr.type = PERF_TYPE_SOFTWARE;
		attr.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
		attr.sample_period = 1;
		attr.exclude_kernel = 1;
		attr.context_switch = 1;
		attr.disabled = 1;
		fd = (int)syscall(SYS_perf_event_open, &attr, 0, -1, -1, 0);
		if (fd < 0) {
			perror("flipkeys: perf_event_open");
			return 1;
		}
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		/* A few switches of this task with the event on. */
		for (int k = 0; k < 3; k++)
			nanosleep(&nap, NULL);
		close(fd);
		if (i % every == 0) {
			printf("flips=%ld\n", i);
			fflush(stdout);
		}
	}
	return 0;
}
