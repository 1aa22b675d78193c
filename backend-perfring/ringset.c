// SPDX-License-Identifier: GPL-2.0
/*
 * The ring set: its events opened (one per CPU and task, sharing the CPU's
 * ring), enabled, disabled and closed, and what it counted. Its reader
 * thread is reader.c's, its drain dispatch.c's.
 */
#include "backend-perfring/ringset.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/ringplan.h"
#include "backend-perfring/ringset_internal.h"
#include "compat/cgroup.h"
#include "compat/cpus.h"
#include "compat/perf_event.h"
#include "core/lib/log.h"

#define MIN_DATA_PAGES 8

void ring_set__cpu_clock_attr(struct perf_event_attr *attr, const struct backend_config *o,
			      bool launch)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	if (o->frequency) {
		attr->freq = 1;
		attr->sample_freq = o->frequency;
	} else {
		attr->sample_period = o->period;
	}
	attr->disabled = 1;
	if (launch) {
		attr->inherit = 1;
		attr->enable_on_exec = 1;
	}
}

void ring_set__track_tasks(struct perf_event_attr *attr)
{
	/* Times the tracker can put on the wall clock (4.1; the ladder drops it before). */
	attr->use_clockid = 1;
	attr->clockid = CLOCK_MONOTONIC;
	attr->mmap = 1;
	attr->mmap2 = 1;
	/* MMAP2 with the build-id the kernel read from the file mapped (5.12; the ladder drops it). */
	attr->build_id = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->watermark = 1;
}

int ring_set__cpus(const struct backend_config *opts, int **cpus)
{
	if (opts->cpu >= 0) {
		*cpus = malloc(sizeof(**cpus));
		if (!*cpus)
			return -ENOMEM;
		(*cpus)[0] = opts->cpu;
		return 1;
	}
	return cpus__online(cpus);
}

static int open_fd(struct ring_set *rs, struct perf_event_attr *attr, pid_t task, int cpu,
		   struct errmsg *err)
{
	char why[256] = "";
	int fd;

	/* Else wakeup_events (the same field): the reader woken at each sample. */
	if (attr->watermark)
		attr->wakeup_watermark = rs->data_pages * (uint32_t)sysconf(_SC_PAGESIZE) / 4;
	fd = rs->cgroup_tasks ? perf_attr__open_cgroup(&rs->ladder, attr, task, cpu)
			      : perf_attr__open(&rs->ladder, attr, task, cpu);
	if (fd == -ESRCH) {
		pr_debug("%s: thread %d exited before its event was opened\n", rs->what, (int)task);
		return fd;	/* nothing to sample */
	}
	if (fd < 0) {
		perf_open_error(fd, task < 0 || rs->cgroup_tasks, why, sizeof(why));
		errmsg__set(err, "%s (CPU %d)", why, cpu);
		return fd;
	}
	rs->sample_type = attr->sample_type;
	rs->regs_user = attr->sample_regs_user;
	rs->sample_id_all = attr->sample_id_all;
	rs->comm_exec = attr->comm_exec;
	return fd;
}

static int map_ring(struct ring_set *rs, struct ring_event *ev, struct errmsg *errm)
{
	int err;

	/* Locked-memory limits refuse large rings with EPERM: halve and retry. */
	for (;;) {
		err = ring__mmap(&ev->ring, ev->fd, rs->data_pages);
		if (!err)
			return 0;
		if (err != -EPERM || rs->data_pages <= MIN_DATA_PAGES)
			break;
		rs->data_pages /= 2;
		pr_info("%s: ring of CPU %d refused (perf_event_mlock_kb, RLIMIT_MEMLOCK), "
			"retrying with %u pages\n",
			rs->what, ev->cpu, rs->data_pages);
	}
	errmsg__set(errm, "%s: mmap of the ring buffer of CPU %d: %s (locked memory: "
		    "kernel.perf_event_mlock_kb and ulimit -l)",
		    rs->what, ev->cpu, strerror(-err));
	return err;
}

/*
 * Every task's event on this CPU; the first owns the ring, the others write
 * into it. Task t's event is of alt_attr where alt[t] (alt may be NULL).
 */
static int open_cpu(struct ring_set *rs, struct ring_event *ev, struct perf_event_attr *attr,
		    struct perf_event_attr *alt_attr, const bool *alt, const pid_t *tasks,
		    int nr_tasks, int cpu, struct errmsg *errm)
{
	int err;

	ev->cpu = cpu;
	ev->fd = -1;
	for (int t = 0; t < nr_tasks; t++) {
		int fd = open_fd(rs, alt && alt[t] ? alt_attr : attr, tasks[t], cpu, errm);

		if (fd == -ESRCH)
			continue;
		if (fd < 0)
			return fd;
		if (ev->fd < 0) {
			ev->fd = fd;
			err = map_ring(rs, ev, errm);
			if (err)
				return err;
			continue;
		}
		int *more = realloc(ev->more_fds, (ev->nr_more + 1) * sizeof(int));

		if (!more) {
			close(fd);
			errmsg__set(errm, "out of memory");
			return -ENOMEM;
		}
		ev->more_fds = more;
		ev->more_fds[ev->nr_more++] = fd;
		if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ev->fd)) {
			err = -errno;
			errmsg__set(errm, "%s: sharing the ring of CPU %d: %s", rs->what, cpu,
				    strerror(-err));
			return err;
		}
	}
	if (ev->fd < 0) {
		errmsg__set(errm, "%s: none of the threads to profile exists any more", rs->what);
		return -ESRCH;
	}
	return 0;
}

int ring_set__plan(const char *what, unsigned int nr_rings, uint64_t records_per_s,
		   uint64_t record_bytes, uint64_t max_record_bytes, uint64_t reserved_pages,
		   struct errmsg *errm)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct ring_need need = { .what = what, .nr_rings = nr_rings,
				  .records_per_s = records_per_s, .record_bytes = record_bytes,
				  .max_record_bytes = max_record_bytes };
	struct ring_budget budget;
	char why[512];
	int err;

	ring_budget__read(&budget, page);
	if (!budget.unlimited)
		budget.pages = budget.pages > reserved_pages ? budget.pages - reserved_pages : 0;
	err = ring_plan(&need, 1, &budget, page, why, sizeof(why));
	if (err) {
		errmsg__set(errm, "%s: %s", what, why);
		return err;
	}
	pr_info("%s: %u x %u data pages (%u KiB each; wanted %u for %u ms of ~%llu records/s of "
		"~%llu bytes; at least %u)\n",
		what, need.nr_rings, need.pages, (unsigned int)(need.pages * page / 1024),
		need.want_pages, RING_PLAN_DELAY_MS, (unsigned long long)need.records_per_s,
		(unsigned long long)need.record_bytes, need.min_pages);
	return (int)need.pages;
}

int ring_set__task_list(const struct backend_config *opts, pid_t **tids)
{
	int nr = 0, cap = 16;

	*tids = malloc(cap * sizeof(**tids));
	if (!*tids)
		return -ENOMEM;
	if (opts->nr_tids) {
		free(*tids);
		*tids = malloc(opts->nr_tids * sizeof(**tids));
		if (!*tids)
			return -ENOMEM;
		memcpy(*tids, opts->tids, opts->nr_tids * sizeof(**tids));
		return opts->nr_tids;
	}
	for (int i = 0; i < opts->nr_pids; i++) {
		char path[64];
		DIR *dir;
		struct dirent *de;

		snprintf(path, sizeof(path), "/proc/%d/task", (int)opts->pids[i]);
		dir = opendir(path);
		if (!dir)
			continue;	/* gone: its events would fail with ESRCH anyway */
		while ((de = readdir(dir))) {
			if (de->d_name[0] < '0' || de->d_name[0] > '9')
				continue;
			if (nr == cap) {
				pid_t *tmp = realloc(*tids, (cap *= 2) * sizeof(**tids));

				if (!tmp) {
					closedir(dir);
					return -ENOMEM;
				}
				*tids = tmp;
			}
			(*tids)[nr++] = (pid_t)atoi(de->d_name);
		}
		closedir(dir);
	}
	return nr;
}

static int open_set(struct ring_set **out, const char *what, struct pipeline *p,
		    const struct backend_config *cfg, struct perf_event_attr *attr,
		    struct perf_event_attr *alt_attr, const bool *alt, const pid_t *tasks,
		    int nr_tasks, bool cgroups, unsigned int data_pages, struct errmsg *errm)
{
	struct ring_set *rs = calloc(1, sizeof(*rs));
	int *cpus = NULL, nr, err;

	*out = NULL;
	if (!rs) {
		errmsg__set(errm, "out of memory");
		return -ENOMEM;
	}
	rs->what = what;
	rs->fill = &rs->batch;
	rs->reader.efd = -1;
	rs->reader.stop_efd = -1;
	spill__init(&rs->reader.spill);
	rs->pipeline = p;
	rs->cfg = cfg;
	rs->data_pages = data_pages;
	rs->use_clockid = attr->use_clockid;
	rs->tracks_tasks = attr->task || attr->mmap;
	rs->context_switch = attr->context_switch;
	rs->wake_each_sample = !attr->watermark && attr->wakeup_events == 1;
	rs->cgroup_tasks = cgroups;
	map_inode__init(&rs->maps);
	nr = ring_set__cpus(cfg, &cpus);
	if (nr < 0) {
		errmsg__set(errm, "%s: cannot read the online CPUs: %s", what, strerror(-nr));
		free(rs);
		return nr;
	}
	rs->events = calloc(nr, sizeof(*rs->events));
	if (!rs->events) {
		errmsg__set(errm, "out of memory");
		err = -ENOMEM;
		goto err_out;
	}
	for (int i = 0; i < nr; i++) {
		rs->nr_events++;
		err = open_cpu(rs, &rs->events[i], attr, alt_attr, alt, tasks, nr_tasks, cpus[i],
			       errm);
		if (err)
			goto err_out;
	}
	for (int f = 0; f < __PERF_ATTR_FEATURE_CNT; f++)
		if (rs->ladder.dropped[f])
			pr_info("%s: this kernel lacks %s; working without it\n", what,
				perf_attr_feature__name(f));
	pr_info("%s: %d event(s) on %d CPU(s), rings of %u data pages each\n", what,
		nr * (nr_tasks > 0 ? nr_tasks : 1), nr, rs->data_pages);
	free(cpus);
	ring_reader__start(rs);
	*out = rs;
	return 0;

err_out:
	free(cpus);
	ring_set__close(rs);
	return err;
}

int ring_set__open(struct ring_set **out, const char *what, struct pipeline *p,
		   const struct backend_config *cfg, struct perf_event_attr *attr,
		   const pid_t *tasks, int nr_tasks, unsigned int data_pages, struct errmsg *errm)
{
	return open_set(out, what, p, cfg, attr, NULL, NULL, tasks, nr_tasks, false, data_pages,
			errm);
}

int ring_set__open_mixed(struct ring_set **out, const char *what, struct pipeline *p,
			 const struct backend_config *cfg, struct perf_event_attr *attr,
			 struct perf_event_attr *alt_attr, const bool *alt, const pid_t *tasks,
			 int nr_tasks, unsigned int data_pages, struct errmsg *errm)
{
	if (alt_attr->sample_type != attr->sample_type ||
	    alt_attr->sample_regs_user != attr->sample_regs_user)
		return -EINVAL;	/* one ring's records decode with one layout */
	return open_set(out, what, p, cfg, attr, alt_attr, alt, tasks, nr_tasks, false,
			data_pages, errm);
}

int ring_set__open_cgroups(struct ring_set **out, const char *what, struct pipeline *p,
			   const struct backend_config *cfg, struct perf_event_attr *attr,
			   unsigned int data_pages, struct errmsg *errm)
{
	pid_t fds[CGROUP_MAX];

	for (int i = 0; i < cfg->nr_cgroups && i < CGROUP_MAX; i++)
		fds[i] = cfg->cgroups[i].fd;
	return open_set(out, what, p, cfg, attr, NULL, NULL, fds, cfg->nr_cgroups, true,
			data_pages, errm);
}

int ring_set__probe_cgroups(const struct backend_config *c, char *why, size_t len)
{
	struct perf_event_attr attr;
	int *cpus = NULL, nr, fd = 0;

	nr = ring_set__cpus(c, &cpus);
	if (nr < 0) {
		snprintf(why, len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	for (int i = 0; i < c->nr_cgroups && fd >= 0; i++) {
		ring_set__cpu_clock_attr(&attr, c, false);
		fd = perf_event_open_cloexec(&attr, c->cgroups[i].fd, cpus[0], -1,
					     PERF_FLAG_PID_CGROUP);
		if (fd >= 0) {
			close(fd);
		} else if (fd == -ENOENT || fd == -EBADF) {
			/* css_tryget_online_from_dir(): no perf_event css in that hierarchy. */
			cgroup_dir__perf_why(&c->cgroups[i], why, len);
		} else {
			perf_open_error(fd, true, why, len);
			snprintf(why + strlen(why), len - strlen(why), " (events on a cgroup are "
				 "CPU-wide)");
		}
	}
	free(cpus);
	return fd < 0 ? fd : 0;
}

void ring_set__on_sample(struct ring_set *rs, ring_sample_fn fn, void *ctx)
{
	rs->on_sample = fn;
	rs->on_sample_ctx = ctx;
}

void ring_set__on_switch(struct ring_set *rs, ring_switch_fn fn, void *ctx)
{
	rs->on_switch = fn;
	rs->on_switch_ctx = ctx;
}

void ring_set__on_raw(struct ring_set *rs, ring_raw_fn fn, void *ctx)
{
	rs->on_raw = fn;
	rs->on_raw_ctx = ctx;
}

void ring_set__on_lost(struct ring_set *rs, ring_lost_fn fn, void *ctx)
{
	rs->on_lost = fn;
	rs->on_lost_ctx = ctx;
}

void ring_set__on_reader_alive(struct ring_set *rs, ring_alive_fn fn, void *ctx)
{
	/* The reader runs already (ring_set__open starts it): ctx before fn. */
	rs->on_reader_alive_ctx = ctx;
	__atomic_store_n(&rs->on_reader_alive, fn, __ATOMIC_RELEASE);
}

int ring_set__nr_events(const struct ring_set *rs)
{
	return rs->nr_events;
}

int ring_set__event_fd(const struct ring_set *rs, int i, int *cpu)
{
	*cpu = rs->events[i].cpu;
	return rs->events[i].fd;
}

void ring_set__on_task(struct ring_set *rs, ring_task_fn fn, void *ctx)
{
	rs->on_task = fn;
	rs->on_task_ctx = ctx;
}

bool ring_set__switch_records(const struct ring_set *rs)
{
	return rs->context_switch && !rs->ladder.dropped[PERF_ATTR_CONTEXT_SWITCH];
}

bool ring_set__monotonic(const struct ring_set *rs)
{
	return rs->use_clockid && !rs->ladder.dropped[PERF_ATTR_USE_CLOCKID];
}

static int set_enabled(struct ring_set *rs, unsigned long request, struct errmsg *errm)
{
	for (int i = 0; i < rs->nr_events; i++) {
		struct ring_event *ev = &rs->events[i];

		for (int j = -1; j < ev->nr_more; j++)
			if (ioctl(j < 0 ? ev->fd : ev->more_fds[j], request, 0) < 0) {
				int err = -errno;

				errmsg__set(errm, "%s: enable CPU %d: %s", rs->what, ev->cpu,
					    strerror(-err));
				return err;
			}
	}
	return 0;
}

int ring_set__enable(struct ring_set *rs, struct errmsg *err)
{
	return set_enabled(rs, PERF_EVENT_IOC_ENABLE, err);
}

void ring_set__disable(struct ring_set *rs)
{
	set_enabled(rs, PERF_EVENT_IOC_DISABLE, NULL);
	/* The last drain reads the rings itself: all is in them once disabled. */
	ring_reader__stop(rs);
	if (rs->bytes_read > rs->bytes_kept)	/* kept has interpreted frames too */
		pr_info("%s: %.1f MB read from the rings, %.1f MB kept (stack copies cut to what the "
			"kernel copied)\n",
			rs->what, rs->bytes_read / 1e6, rs->bytes_kept / 1e6);
}

uint64_t ring_set__lost(const struct ring_set *rs)
{
	return rs->lost;
}

uint64_t ring_set__maps_without_inode(const struct ring_set *rs)
{
	return rs->maps_without_inode;
}

void ring_set__count_bad(struct ring_set *rs)
{
	rs->bad_records++;
}

uint64_t ring_set__bad_records(const struct ring_set *rs)
{
	uint64_t n = rs->bad_records;

	for (int i = 0; i < rs->nr_events; i++)
		n += rs->events[i].ring.corrupt;
	return n;
}

void ring_set__close(struct ring_set *rs)
{
	if (!rs)
		return;
	ring_reader__free(rs);	/* before the rings it reads go */
	for (int i = 0; i < rs->nr_events; i++) {
		struct ring_event *ev = &rs->events[i];

		for (int j = 0; j < ev->nr_more; j++)
			close(ev->more_fds[j]);
		free(ev->more_fds);
		ring__fini(&ev->ring);
		if (ev->fd >= 0)
			close(ev->fd);
	}
	free(rs->events);
	free(rs->batch.bytes);
	free(rs->batch.recs);
	map_inode__fini(&rs->maps);
	free(rs);
}
