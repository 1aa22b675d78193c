// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/ringset.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/mapinode.h"
#include "backend-perfring/ring.h"
#include "backend-perfring/ringplan.h"
#include "compat/cgroup.h"
#include "compat/cpus.h"
#include "compat/features.h"
#include "compat/perf_event.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"

#define MIN_DATA_PAGES 8

struct ring_event {
	int fd;			/* owns the ring */
	int cpu;
	struct perf_ring ring;
	int *more_fds;		/* more events on this CPU writing into the same ring */
	int nr_more;
};

/* One record copied out of a ring, ordered by time then arrival. */
struct batch_rec {
	uint64_t time;
	uint64_t seq;
	size_t offset;		/* into batch.bytes */
};

/* The records of one drain, from every ring. */
struct batch {
	unsigned char *bytes;
	size_t len, cap;
	struct batch_rec *recs;
	size_t nr, cap_recs;
	uint64_t seq;
};

/*
 * The reader thread: it only copies records out of the rings into
 * `pending`, so that the kernel never finds a ring full while the main
 * thread unwinds, symbolizes or writes (a busy host may not schedule it for
 * tens of milliseconds, and a 1 MiB ring holds 60 ms of 16 KiB stack copies
 * at 999 Hz). A drain takes `pending` whole. What it holds is bounded:
 * beyond PENDING_MAX bytes it leaves records in the rings, where the
 * kernel counts what it then cannot write (PERF_RECORD_LOST).
 *
 * Where allowed (root, CAP_SYS_NICE, ulimit -r) it runs at the lowest
 * real-time priority, SCHED_FIFO 1, as `perf record -r 1` would. At normal
 * priority, on 2 CPUs under a compile loop at load average 10-14, it was
 * kept off the CPU for up to 500 ms and 4 MiB rings overflowed (5% of dwarf
 * samples lost); at SCHED_FIFO the longest gap between its reads was 30-50
 * ms and no ring was ever more than a quarter full. It costs the host
 * little: it copies what the kernel wrote and sleeps, and it stops copying
 * when PENDING_MAX waits for the main thread. Its lock inherits priority,
 * so that it never waits on a main thread that the busy host preempted.
 */
#define PENDING_MAX (256u << 20)
/* Wake the main thread early when this much waits (else it drains every 100 ms). */
#define PENDING_WAKE (8u << 20)
#define READER_POLL_MS 10
#define READER_RT_PRIORITY 1

struct ring_reader {
	pthread_t thread;
	bool on;
	bool realtime;			/* SCHED_FIFO */
	pthread_mutex_t lock;
	struct batch pending;
	int efd;			/* readable: pending has PENDING_WAKE bytes */
	int stop;			/* atomic: the thread ends */
	int err;			/* the thread's first error (-ENOMEM) */
};

struct ring_set;
static void reader_start(struct ring_set *rs);
static void reader_stop(struct ring_set *rs);
static void reader_free(struct ring_set *rs);

struct ring_set {
	const char *what;		/* "perf" or "side-band", for messages */
	struct pipeline *pipeline;
	const struct backend_config *cfg;
	struct ring_event *events;
	int nr_events;
	uint64_t sample_type;
	uint64_t regs_user;		/* sample_regs_user, for decoding */
	bool sample_id_all;
	bool comm_exec;
	unsigned int data_pages;	/* per ring, after any shrinking */
	struct perf_attr_ladder ladder;
	struct batch batch;
	struct batch *fill;		/* where consumed records go: batch, or the reader's pending */
	struct ring_reader reader;
	ring_sample_fn on_sample;
	void *on_sample_ctx;
	ring_switch_fn on_switch;
	void *on_switch_ctx;
	ring_raw_fn on_raw;
	void *on_raw_ctx;
	ring_lost_fn on_lost;
	void *on_lost_ctx;
	ring_task_fn on_task;
	void *on_task_ctx;
	bool use_clockid;		/* asked for CLOCK_MONOTONIC times */
	int64_t mono_to_wall_ns;	/* CLOCK_MONOTONIC to wall clock in this drain; 0: not yet */
	bool context_switch;		/* asked for switch records */
	bool cgroup_tasks;		/* the tasks are --cgroup directories (their fds) */
	uint64_t lost;			/* from PERF_RECORD_LOST */
	uint64_t bytes_read, bytes_kept;	/* by the reader, stack copies cut (decode.h) */
	/* Side-band recovery after a loss: the lost count it answered, when, how many. */
	bool tracks_tasks;
	uint64_t lost_resynced;
	int64_t last_resync_ms;
	uint64_t resynced;
	uint64_t bad_records;
	struct map_inode_cache maps;	/* inodes for PERF_RECORD_MMAP (before 3.16) */
	uint64_t maps_without_inode;	/* of those, gone before /proc told their inode */
};

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

/* Every task's event on this CPU; the first owns the ring, the others write into it. */
static int open_cpu(struct ring_set *rs, struct ring_event *ev, struct perf_event_attr *attr,
		    const pid_t *tasks, int nr_tasks, int cpu, struct errmsg *errm)
{
	int err;

	ev->cpu = cpu;
	ev->fd = -1;
	for (int t = 0; t < nr_tasks; t++) {
		int fd = open_fd(rs, attr, tasks[t], cpu, errm);

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
		    const pid_t *tasks, int nr_tasks, bool cgroups, unsigned int data_pages,
		    struct errmsg *errm)
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
	rs->pipeline = p;
	rs->cfg = cfg;
	rs->data_pages = data_pages;
	rs->use_clockid = attr->use_clockid;
	rs->tracks_tasks = attr->task || attr->mmap;
	rs->context_switch = attr->context_switch;
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
		err = open_cpu(rs, &rs->events[i], attr, tasks, nr_tasks, cpus[i], errm);
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
	reader_start(rs);
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
	return open_set(out, what, p, cfg, attr, tasks, nr_tasks, false, data_pages, errm);
}

int ring_set__open_cgroups(struct ring_set **out, const char *what, struct pipeline *p,
			   const struct backend_config *cfg, struct perf_event_attr *attr,
			   unsigned int data_pages, struct errmsg *errm)
{
	pid_t fds[CGROUP_MAX];

	for (int i = 0; i < cfg->nr_cgroups && i < CGROUP_MAX; i++)
		fds[i] = cfg->cgroups[i].fd;
	return open_set(out, what, p, cfg, attr, fds, cfg->nr_cgroups, true, data_pages, errm);
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
	reader_stop(rs);
	if (rs->bytes_read != rs->bytes_kept)
		pr_info("%s: %.1f MB read from the rings, %.1f MB kept (stack copies cut to what the "
			"kernel copied)\n",
			rs->what, rs->bytes_read / 1e6, rs->bytes_kept / 1e6);
}

/* The fds that say rs has something: its reader's eventfd, else its rings. */
static int wait_fds(const struct ring_set *rs, struct pollfd *pfds)
{
	if (rs->reader.on) {
		pfds[0] = (struct pollfd){ .fd = rs->reader.efd, .events = POLLIN };
		return 1;
	}
	for (int i = 0; i < rs->nr_events; i++)
		pfds[i] = (struct pollfd){ .fd = rs->events[i].fd, .events = POLLIN };
	return rs->nr_events;
}

int ring_set__wait_sets(struct ring_set *const *sets, int nr_sets, int wake_fd, int timeout_ms)
{
	struct pollfd stack_pfds[16], *pfds = stack_pfds;
	int want = 1, n = 0;

	for (int i = 0; i < nr_sets; i++)
		want += sets[i]->reader.on ? 1 : sets[i]->nr_events;
	if (want > (int)(sizeof(stack_pfds) / sizeof(stack_pfds[0]))) {
		pfds = calloc((size_t)want, sizeof(*pfds));
		if (!pfds)
			return -ENOMEM;
	}
	for (int i = 0; i < nr_sets; i++)
		n += wait_fds(sets[i], pfds + n);
	pfds[n++] = (struct pollfd){ .fd = wake_fd, .events = POLLIN };
	if (poll(pfds, (nfds_t)n, timeout_ms) < 0 && errno != EINTR) {
		int err = -errno;

		if (pfds != stack_pfds)
			free(pfds);
		return err;
	}
	/* Clear the readers' signals; EAGAIN after a timeout is no error. */
	for (int i = 0; i < nr_sets; i++) {
		uint64_t cnt;

		if (sets[i]->reader.on)
			(void)!read(sets[i]->reader.efd, &cnt, sizeof(cnt));
	}
	if (pfds != stack_pfds)
		free(pfds);
	return 0;
}

int ring_set__wait(struct ring_set *rs, int wake_fd, int timeout_ms)
{
	return ring_set__wait_sets(&rs, 1, wake_fd, timeout_ms);
}

static int batch_add(const struct perf_event_header *hdr, void *ctx)
{
	struct ring_set *rs = ctx;
	struct batch *bt = rs->fill;
	struct batch_rec *rec;
	struct sample_id id;
	struct decoded_sample ds;
	size_t len = hdr->size, cut = 0;
	uint64_t time = 0;

	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (!decode__sample(hdr, rs->sample_type, rs->regs_user, &ds)) {
			time = ds.id.time;
			/* Less to copy and to hold while the main thread is busy. */
			cut = decode__cut_stack_len(hdr, rs->sample_type, &ds);
			if (cut)
				len = cut;
		}
	} else if (!decode__sample_id(hdr, rs->sample_type, rs->sample_id_all, &id)) {
		time = id.time;
	}
	if (bt->len + len > bt->cap) {
		size_t ncap = (bt->cap ? bt->cap * 2 : 1 << 20) + len;
		unsigned char *tmp = realloc(bt->bytes, ncap);

		if (!tmp)
			return -ENOMEM;
		bt->bytes = tmp;
		bt->cap = ncap;
	}
	if (bt->nr == bt->cap_recs) {
		size_t ncap = bt->cap_recs ? bt->cap_recs * 2 : 4096;
		struct batch_rec *tmp = realloc(bt->recs, ncap * sizeof(*tmp));

		if (!tmp)
			return -ENOMEM;
		bt->recs = tmp;
		bt->cap_recs = ncap;
	}
	rec = &bt->recs[bt->nr++];
	rec->seq = bt->seq++;
	rec->offset = bt->len;
	rec->time = time;
	rs->bytes_read += hdr->size;
	rs->bytes_kept += len;
	if (cut)
		decode__cut_stack(hdr, &ds, cut, bt->bytes + bt->len);
	else
		memcpy(bt->bytes + bt->len, hdr, hdr->size);
	bt->len += len;	/* always a multiple of 8 */
	return 0;
}

static int cmp_batch_rec(const void *a, const void *b)
{
	const struct batch_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int handle_mmap(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_mmap mm;
	struct build_id bid = { 0 };
	uint64_t dev = 0;

	if (decode__mmap(hdr, rs->sample_type, rs->sample_id_all, &mm)) {
		rs->bad_records++;
		return 0;
	}
	pr_debug("mmap pid %d %#llx-%#llx pgoff %#llx %s\n", (int)mm.pid,
		 (unsigned long long)mm.addr, (unsigned long long)(mm.addr + mm.len),
		 (unsigned long long)mm.pgoff, mm.filename);
	/* pid -1: kernel and module maps; kallsyms covers those. */
	if ((int32_t)mm.pid <= 0 || !pipeline__wants_pid(rs->pipeline, mm.pid) || !mm.len)
		return 0;
	if (hdr->type == PERF_RECORD_MMAP2) {
		dev = makedev(mm.maj, mm.min);
	} else if (mm.exec && mm.filename[0] == '/' &&
		   map_inode__lookup(&rs->maps, mm.pid, mm.addr, mm.pgoff, mm.filename, &dev,
				     &mm.ino)) {
		/* Without an inode the unwinder cannot open the file: said at the end. */
		rs->maps_without_inode++;
		pr_debug("%s: no inode for %s of pid %d: it is gone\n", rs->what, mm.filename,
			 (int)mm.pid);
	}
	/* The kernel read it from the very file mapped: the tracker checks files against it. */
	bid.size = mm.build_id_size;
	memcpy(bid.data, mm.build_id, mm.build_id_size);
	return proctrack__mmap_build_id(rs->pipeline->procs, mm.pid,
					&(struct mapping){ .start = mm.addr,
							   .end = mm.addr + mm.len,
							   .pgoff = mm.pgoff,
							   .dev = dev,
							   .ino = mm.ino,
							   .exec = mm.exec,
							   .path = (char *)mm.filename },
					&bid);
}

/* When a side-band record was written (its sample_id), 0 if it does not say. */
static uint64_t record_time(const struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct sample_id id;

	if (decode__sample_id(hdr, rs->sample_type, rs->sample_id_all, &id))
		return 0;
	return id.time;
}

static int handle_comm(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct proctrack *pt = rs->pipeline->procs;
	struct decoded_comm cm;
	int err;

	if (decode__comm(hdr, rs->sample_type, rs->sample_id_all, &cm)) {
		rs->bad_records++;
		return 0;
	}
	if (!pipeline__wants_pid(rs->pipeline, cm.pid))
		return 0;
	/* Without comm_exec (before 3.16), a COMM of the main thread stands for an exec. */
	if (cm.exec || (!rs->comm_exec && cm.pid == cm.tid)) {
		err = proctrack__exec(pt, cm.pid, cm.comm, record_time(rs, hdr));
		if (!err && rs->on_task)
			err = rs->on_task(rs->on_task_ctx, false, cm.pid, cm.tid, record_time(rs, hdr));
		if (err)
			return err;
	}
	return proctrack__set_comm(pt, cm.tid, cm.comm);
}

static int handle_fork(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct proctrack *pt = rs->pipeline->procs;
	struct decoded_task tk;
	int err;

	if (decode__task(hdr, &tk)) {
		rs->bad_records++;
		return 0;
	}
	if (hdr->type == PERF_RECORD_FORK)
		pipeline__note_fork(rs->pipeline, tk.pid, tk.ppid);
	if (!pipeline__wants_pid(rs->pipeline, tk.ppid) && !pipeline__wants_pid(rs->pipeline, tk.pid))
		return 0;
	if (tk.pid != tk.ppid) {
		err = proctrack__fork(pt, tk.pid, tk.ppid, record_time(rs, hdr));
		if (err)
			return err;
	}
	return proctrack__inherit_comm(pt, tk.tid, tk.ppid, tk.ptid);
}

static int handle_exit(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_task tk;
	bool wanted;
	int err;

	if (decode__task(hdr, &tk)) {
		rs->bad_records++;
		return 0;
	}
	/*
	 * A process not wanted may still be tracked: a child of -p's process
	 * came with its fork. Its end lets its entries go too.
	 */
	wanted = pipeline__wants_pid(rs->pipeline, tk.pid);
	if (!wanted && !proctrack__knows(rs->pipeline->procs, tk.pid))
		return 0;
	/* The image's end, so that its mappings can go once no sample of it is to come. */
	err = proctrack__exit(rs->pipeline->procs, tk.pid, tk.tid, record_time(rs, hdr));
	if (err || !wanted || !rs->on_task)
		return err;
	return rs->on_task(rs->on_task_ctx, true, tk.pid, tk.tid, record_time(rs, hdr));
}

static int handle_switch(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_switch sw;

	if (!rs->on_switch)
		return 0;
	if (decode__switch(hdr, rs->sample_type, rs->sample_id_all, &sw)) {
		rs->bad_records++;
		return 0;
	}
	return rs->on_switch(rs->on_switch_ctx, sw.id.pid, sw.id.tid, sw.id.time, sw.out);
}

static int handle_raw(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct decoded_sample ds;

	if (decode__sample(hdr, rs->sample_type, rs->regs_user, &ds) || !ds.raw) {
		rs->bad_records++;
		return 0;
	}
	return rs->on_raw(rs->on_raw_ctx, (rs->sample_type & PERF_SAMPLE_CPU) ? (int)ds.id.cpu : -1,
			  ds.id.time, ds.raw, ds.raw_size);
}

/*
 * The wall clock at a record's time, where record times are CLOCK_MONOTONIC
 * (use_clockid, 4.1): the tracker checks files against when they were
 * mapped. 0 where not known.
 */
static int64_t record_wall_ns(struct ring_set *rs, const struct perf_event_header *hdr)
{
	uint64_t t;

	if (!ring_set__monotonic(rs) || !(t = record_time(rs, hdr)))
		return 0;
	/* Taken once per drain: two clock reads per record added up in fork storms. */
	if (!rs->mono_to_wall_ns)
		rs->mono_to_wall_ns = mono_to_wall_ns();
	return (int64_t)t + rs->mono_to_wall_ns;
}

static int handle_record(struct ring_set *rs, const struct perf_event_header *hdr)
{
	uint64_t lost;
	int err;

	switch (hdr->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
	case PERF_RECORD_COMM:
	case PERF_RECORD_FORK:
		proctrack__set_record_time(rs->pipeline->procs, record_wall_ns(rs, hdr));
		err = hdr->type == PERF_RECORD_FORK ? handle_fork(rs, hdr)
		      : hdr->type == PERF_RECORD_COMM ? handle_comm(rs, hdr)
						      : handle_mmap(rs, hdr);
		proctrack__set_record_time(rs->pipeline->procs, 0);
		return err;
	default:
		break;
	}
	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		if (rs->on_raw)
			return handle_raw(rs, hdr);
		return rs->on_sample ? rs->on_sample(rs->on_sample_ctx, hdr) : 0;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		return handle_mmap(rs, hdr);
	case PERF_RECORD_COMM:
		return handle_comm(rs, hdr);
	case PERF_RECORD_FORK:
		return handle_fork(rs, hdr);
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		return handle_switch(rs, hdr);
	case PERF_RECORD_EXIT:
		return handle_exit(rs, hdr);
	case PERF_RECORD_LOST:
		if (decode__lost(hdr, &lost)) {
			rs->bad_records++;
			return 0;
		}
		rs->lost += lost;
		if (rs->on_lost) {
			struct sample_id id;
			bool cpu_known = (rs->sample_type & PERF_SAMPLE_CPU) && rs->sample_id_all &&
					 !decode__sample_id(hdr, rs->sample_type, rs->sample_id_all,
							    &id);

			rs->on_lost(rs->on_lost_ctx, cpu_known ? (int)id.cpu : -1, lost);
		}
		return 0;
	default:
		return 0;	/* THROTTLE, ...: nothing to keep */
	}
}

static void *reader_main(void *arg)
{
	struct ring_set *rs = arg;
	struct ring_reader *rd = &rs->reader;
	struct pollfd *pfds = calloc(rs->nr_events ? rs->nr_events : 1, sizeof(*pfds));
	bool full = false;

	for (int i = 0; pfds && i < rs->nr_events; i++)
		pfds[i] = (struct pollfd){ .fd = rs->events[i].fd, .events = POLLIN };
	while (!__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE)) {
		bool wake;

		/*
		 * Woken at each ring's watermark; the timeout bounds how long a
		 * stop waits. With pending full, only the timeout: nothing is
		 * read until the main thread takes it.
		 */
		if (pfds && !full)
			poll(pfds, rs->nr_events, READER_POLL_MS);
		else
			poll(NULL, 0, READER_POLL_MS);
		/*
		 * The event of a task that exited polls as hung up from then on:
		 * out of the poll set, or this thread would spin at real-time
		 * priority (its ring is still read).
		 */
		for (int i = 0; pfds && i < rs->nr_events; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfds[i].fd = -1;
		pthread_mutex_lock(&rd->lock);
		for (int i = 0; i < rs->nr_events && rd->pending.len < PENDING_MAX && !rd->err; i++) {
			int n = ring__consume(&rs->events[i].ring, batch_add, rs);

			if (n < 0)
				rd->err = n;
		}
		full = rd->pending.len >= PENDING_MAX;
		wake = rd->pending.len >= PENDING_WAKE || rd->err;
		pthread_mutex_unlock(&rd->lock);
		/* A full counter (EAGAIN) means the main thread is woken already. */
		if (wake)
			(void)!write(rd->efd, &(uint64_t){ 1 }, 8);
	}
	free(pfds);
	return NULL;
}

/* A mutex that lends the real-time reader's priority to a main thread holding it. */
static int reader_lock_init(pthread_mutex_t *lock)
{
	pthread_mutexattr_t ma;
	int err = pthread_mutexattr_init(&ma);

	if (err)
		return err;
	/* Without priority inheritance (ENOTSUP), a plain mutex: the lock is held briefly. */
	pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT);
	err = pthread_mutex_init(lock, &ma);
	pthread_mutexattr_destroy(&ma);
	return err;
}

/* The thread at SCHED_FIFO where allowed, else at normal priority. Returns 0 or an errno. */
static int reader_create(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;
	struct sched_param sp = { .sched_priority = READER_RT_PRIORITY };
	pthread_attr_t attr;
	int err, rt_err;

	rt_err = pthread_attr_init(&attr);
	if (!rt_err)
		rt_err = pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
	if (!rt_err)
		rt_err = pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
	if (!rt_err)
		rt_err = pthread_attr_setschedparam(&attr, &sp);
	if (!rt_err)
		rt_err = pthread_create(&rd->thread, &attr, reader_main, rs);
	pthread_attr_destroy(&attr);
	rd->realtime = !rt_err;
	if (!rt_err) {
		pr_info("%s: reader thread at real-time priority (SCHED_FIFO %d): the rings are "
			"read ahead of busy tasks\n",
			rs->what, READER_RT_PRIORITY);
		return 0;
	}
	err = pthread_create(&rd->thread, NULL, reader_main, rs);
	if (!err)
		pr_info("%s: reader thread at normal priority (SCHED_FIFO: %s; root, CAP_SYS_NICE "
			"or ulimit -r would allow it): on a saturated host the rings may fill\n",
			rs->what, strerror(rt_err));
	return err;
}

/* Start the reader thread; without one (no thread or eventfd), drains read the rings. */
static void reader_start(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;
	int err;

	rd->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	err = rd->efd < 0 ? errno : reader_lock_init(&rd->lock);
	if (err) {
		pr_info("%s: no reader thread (%s): rings are read at each drain\n", rs->what,
			strerror(err));
		if (rd->efd >= 0)
			close(rd->efd);
		rd->efd = -1;
		return;
	}
	rs->fill = &rd->pending;
	err = reader_create(rs);
	if (err) {
		pr_info("%s: no reader thread (%s): rings are read at each drain\n", rs->what,
			strerror(err));
		pthread_mutex_destroy(&rd->lock);
		close(rd->efd);
		rd->efd = -1;
		rs->fill = &rs->batch;
		return;
	}
	rd->on = true;
}

/* Stop the reader thread; what it copied stays in pending for the next drain. */
static void reader_stop(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	if (!rd->on)
		return;
	__atomic_store_n(&rd->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rd->thread, NULL);
	rd->on = false;
}

static void reader_free(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	reader_stop(rs);
	if (rd->efd >= 0) {
		close(rd->efd);
		pthread_mutex_destroy(&rd->lock);
	}
	free(rd->pending.bytes);
	free(rd->pending.recs);
}

/* Move what the reader copied into batch (swapping buffers: no copy). */
/*
 * The rings read into the batch, after what it holds. The reader thread's
 * lock is held by the caller when the thread runs (one reader at a time).
 */
static int consume_rings(struct ring_set *rs)
{
	struct batch *saved = rs->fill;
	int err = 0;

	rs->fill = &rs->batch;
	for (int i = 0; i < rs->nr_events && !err; i++) {
		int n = ring__consume(&rs->events[i].ring, batch_add, rs);

		if (n < 0)
			err = n;
	}
	rs->fill = saved;
	return err;
}

/*
 * What the reader thread copied becomes the batch; with consume, the rings'
 * records written since follow under the same lock, so that none the
 * thread copies in between is left for a later drain, out of order.
 */
static int take_pending(struct ring_set *rs, bool consume)
{
	struct ring_reader *rd = &rs->reader;
	struct batch tmp;
	int err = 0;

	if (rd->on)
		pthread_mutex_lock(&rd->lock);
	if (rd->efd >= 0) {
		tmp = rs->batch;
		rs->batch = rd->pending;
		rd->pending = tmp;
		rd->pending.len = 0;
		rd->pending.nr = 0;
		rd->pending.seq = rs->batch.seq;
		err = rd->err;
		rd->err = 0;
	}
	if (!err && consume)
		err = consume_rings(rs);
	if (rd->on)
		pthread_mutex_unlock(&rd->lock);
	return err;
}

static bool resync_wanted(pid_t pid, void *ctx)
{
	return pipeline__wants_pid(ctx, pid);
}

/*
 * Records were lost (PERF_RECORD_LOST): some may have been mmaps, execs or
 * forks. The processes still running are read again from /proc, at most
 * every RESYNC_MS; what exited in the gap cannot be.
 */
#define RESYNC_MS 500
static int resync(struct ring_set *rs)
{
	int64_t mono = mono_ns(), now = mono / 1000000;
	int n;

	if (!rs->tracks_tasks || now - rs->last_resync_ms < RESYNC_MS)
		return 0;
	rs->last_resync_ms = now;
	rs->lost_resynced = rs->lost;
	n = proctrack__resync(rs->pipeline->procs, resync_wanted, rs->pipeline,
			      ring_set__monotonic(rs) ? (uint64_t)mono : 0);
	if (n < 0)
		return n;
	rs->resynced += (uint64_t)n;
	pr_info("%s: records lost: the mappings of %d running processes read again\n", rs->what,
		n);
	return 0;
}

static int drain(struct ring_set *rs, bool now)
{
	struct batch *bt = &rs->batch;
	int err = 0;

	bt->len = 0;
	bt->nr = 0;
	rs->mono_to_wall_ns = 0;
	map_inode__forget(&rs->maps);
	/* No thread (any more), or every record now: the rings too, after what it had copied. */
	err = take_pending(rs, !rs->reader.on || now);
	if (err)
		return err;
	if (bt->nr)	/* recs is NULL until the first record */
		qsort(bt->recs, bt->nr, sizeof(*bt->recs), cmp_batch_rec);
	for (size_t i = 0; i < bt->nr && !err; i++)
		err = handle_record(rs, (const struct perf_event_header *)(bt->bytes +
									   bt->recs[i].offset));
	if (!err && rs->lost != rs->lost_resynced)
		err = resync(rs);
	return err;
}

int ring_set__drain(struct ring_set *rs)
{
	return drain(rs, false);
}

int ring_set__drain_now(struct ring_set *rs)
{
	return drain(rs, true);
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
	reader_free(rs);	/* before the rings it reads go */
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
