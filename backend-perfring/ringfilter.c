// SPDX-License-Identifier: GPL-2.0
/*
 * Tracepoint filters on a ring set's events (PERF_EVENT_IOC_SET_FILTER).
 * The kernel takes an event's filter once (EEXIST after): a filter that
 * changes is a new event per CPU that writes into the CPU's ring.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "backend-perfring/ringset.h"
#include "backend-perfring/ringset_internal.h"
#include "compat/perf_event.h"

#ifndef PERF_EVENT_IOC_SET_FILTER
#define PERF_EVENT_IOC_SET_FILTER _IOW('$', 6, char *)
#endif

int ring_set__set_filter(struct ring_set *rs, const char *filter)
{
	for (int i = 0; i < rs->nr_events; i++) {
		const struct ring_event *ev = &rs->events[i];

		if (ioctl(ev->fd, PERF_EVENT_IOC_SET_FILTER, filter))
			return -errno;
		for (int j = 0; j < ev->nr_more; j++)
			if (ioctl(ev->more_fds[j], PERF_EVENT_IOC_SET_FILTER, filter))
				return -errno;
	}
	return 0;
}

/* A new event on cpu with filter, writing into ring_fd's ring; an fd or -errno. */
static int open_filtered(struct ring_set *rs, const struct perf_event_attr *attr, int cpu,
			 int ring_fd, const char *filter, bool enable)
{
	struct perf_event_attr a = *attr;
	int fd, err = 0;

	a.disabled = 1;
	fd = perf_attr__open(&rs->ladder, &a, -1, cpu);
	if (fd < 0)
		return fd;
	if (ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filter) ||
	    ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring_fd) ||
	    (enable && ioctl(fd, PERF_EVENT_IOC_ENABLE, 0)))
		err = -errno;
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

int ring_set__refilter(struct ring_set *rs, const struct perf_event_attr *attr,
		       const char *filter, bool enable)
{
	int *fds = calloc(rs->nr_events ? rs->nr_events : 1, sizeof(*fds));
	int opened = 0, err = 0;

	if (!fds)
		return -ENOMEM;
	/* Room for one more fd per CPU first: nothing can fail once the old ones close. */
	for (int i = 0; i < rs->nr_events && !err; i++) {
		struct ring_event *ev = &rs->events[i];

		if (!ev->more_fds && !(ev->more_fds = malloc(sizeof(*ev->more_fds))))
			err = -ENOMEM;
	}
	/* All new ones on before any old one goes: a switch may come twice, none is missed. */
	for (; opened < rs->nr_events && !err; opened++) {
		fds[opened] = open_filtered(rs, attr, rs->events[opened].cpu, rs->events[opened].fd,
					    filter, enable);
		if (fds[opened] < 0)
			err = fds[opened];
	}
	if (err) {
		for (int i = 0; i < opened - 1; i++)
			close(fds[i]);
		free(fds);
		return err;
	}
	for (int i = 0; i < rs->nr_events; i++) {
		struct ring_event *ev = &rs->events[i];

		for (int j = 0; j < ev->nr_more; j++)
			close(ev->more_fds[j]);
		ev->more_fds[0] = fds[i];
		ev->nr_more = 1;
	}
	free(fds);
	return 0;
}
