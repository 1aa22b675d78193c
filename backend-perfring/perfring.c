// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend: one cpu-clock event per CPU with an mmap ring. Samples
 * carry frame-pointer callchains; side-band records (MMAP2, COMM, FORK)
 * keep the process tracker current. Each drain reads every ring, orders the
 * records by time (rings are per CPU, a process moves between them) and
 * feeds them to the core.
 */
#include "backend-perfring/perfring.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/ring.h"
#include "compat/cpus.h"
#include "compat/perf_event.h"
#include "core/log.h"

#define DEFAULT_DATA_PAGES 128
#define MIN_DATA_PAGES 8

struct ring_event {
	int fd;
	int cpu;
	struct perf_ring ring;
};

/* One record copied out of a ring, ordered by time then arrival. */
struct batch_rec {
	uint64_t time;
	uint64_t seq;
	size_t offset;		/* into batch.bytes */
};

struct batch {
	unsigned char *bytes;
	size_t len, cap;
	struct batch_rec *recs;
	size_t nr, cap_recs;
	uint64_t seq;
};

struct backend {
	struct profile_core *core;
	pid_t target;
	struct ring_event *events;
	int nr_events;
	struct pollfd *pfds;
	uint64_t sample_type;
	bool sample_id_all;
	bool comm_exec;
	struct perf_attr_ladder ladder;
	struct batch batch;
	uint64_t samples;
	uint64_t lost;
	uint64_t bad_records;
};

static int read_paranoid(void)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "re");
	int level = 2;

	if (f) {
		if (fscanf(f, "%d", &level) != 1)
			level = 2;
		fclose(f);
	}
	return level;
}

/* A one-line reason for a perf_event_open failure. */
static void explain_open_error(int err, bool system_wide, char *why, size_t len)
{
	if (err == -EACCES || err == -EPERM)
		snprintf(why, len,
			 "perf_event_open: %s: %s needs root, CAP_PERFMON, or "
			 "kernel.perf_event_paranoid <= %d (now %d)",
			 strerror(-err), system_wide ? "system-wide sampling" : "kernel sampling",
			 system_wide ? 0 : 1, read_paranoid());
	else if (err == -ENOSYS)
		snprintf(why, len, "perf_event_open: not supported by this kernel");
	else if (err == -ENOENT || err == -EOPNOTSUPP)
		snprintf(why, len, "perf_event_open: the cpu-clock event is not available (%s)",
			 strerror(-err));
	else
		snprintf(why, len, "perf_event_open: %s", strerror(-err));
}

static void fill_attr(struct perf_event_attr *attr, const struct profile_opts *o, bool launch,
		      unsigned int data_pages)
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
	attr->sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
			    PERF_SAMPLE_CALLCHAIN;
	attr->sample_max_stack = MAX_STACK_DEPTH;
	attr->exclude_callchain_kernel = o->user_only;
	attr->exclude_callchain_user = o->kernel_only;
	attr->mmap = 1;
	attr->mmap2 = 1;
	attr->comm = 1;
	attr->comm_exec = 1;
	attr->task = 1;
	attr->sample_id_all = 1;
	attr->disabled = 1;
	attr->watermark = 1;
	attr->wakeup_watermark = data_pages * (uint32_t)sysconf(_SC_PAGESIZE) / 4;
	if (launch) {
		/* As perf record does: the command's events start at its exec. */
		attr->inherit = 1;
		attr->enable_on_exec = 1;
	}
}

static int perfring_probe(const struct profile_opts *opts, char *why, size_t why_len)
{
	struct perf_event_attr attr;
	struct perf_attr_ladder ladder = { 0 };
	bool system_wide = !opts->command;
	int *cpus = NULL, fd, nr;

	nr = cpus__online(&cpus);
	if (nr < 0) {
		snprintf(why, why_len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	fill_attr(&attr, opts, !system_wide, DEFAULT_DATA_PAGES);
	attr.enable_on_exec = 0;
	/* The probe is the real call: same event, our own pid when launching. */
	fd = perf_attr__open(&ladder, &attr, system_wide ? -1 : 0,
			     system_wide ? (opts->cpu >= 0 ? opts->cpu : cpus[0]) : -1);
	free(cpus);
	if (fd < 0) {
		explain_open_error(fd, system_wide, why, why_len);
		return fd;
	}
	close(fd);
	return 0;
}

static void close_events(struct backend *b)
{
	for (int i = 0; i < b->nr_events; i++) {
		ring__fini(&b->events[i].ring);
		if (b->events[i].fd >= 0)
			close(b->events[i].fd);
	}
	free(b->events);
	free(b->pfds);
	b->events = NULL;
	b->pfds = NULL;
	b->nr_events = 0;
}

static int open_event(struct backend *b, struct ring_event *ev, int cpu, unsigned int *pages)
{
	const struct profile_opts *o = b->core->opts;
	struct perf_event_attr attr;
	char why[256];
	int err;

	fill_attr(&attr, o, b->target > 0, *pages);
	ev->cpu = cpu;
	ev->fd = perf_attr__open(&b->ladder, &attr, b->target > 0 ? b->target : -1, cpu);
	if (ev->fd < 0) {
		explain_open_error(ev->fd, b->target <= 0, why, sizeof(why));
		pr_warn("%s (CPU %d)\n", why, cpu);
		return ev->fd;
	}
	b->sample_type = attr.sample_type;
	b->sample_id_all = attr.sample_id_all;
	b->comm_exec = attr.comm_exec;

	/* Locked-memory limits refuse large rings with EPERM: halve and retry. */
	for (;;) {
		err = ring__mmap(&ev->ring, ev->fd, *pages);
		if (!err)
			return 0;
		if (err != -EPERM || *pages <= MIN_DATA_PAGES)
			break;
		*pages /= 2;
		pr_info("perf: ring of CPU %d refused, retrying with %u pages\n", cpu, *pages);
	}
	pr_warn("perf: mmap of the ring buffer of CPU %d: %s\n", cpu, strerror(-err));
	return err;
}

static int perfring_open(struct backend **out, struct profile_core *core, pid_t target)
{
	const struct profile_opts *o = core->opts;
	unsigned int pages = DEFAULT_DATA_PAGES;
	struct backend *b;
	int *cpus = NULL, nr, err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->core = core;
	b->target = target;

	if (o->cpu >= 0) {
		cpus = malloc(sizeof(*cpus));
		if (!cpus) {
			err = -ENOMEM;
			goto err_out;
		}
		cpus[0] = o->cpu;
		nr = 1;
	} else {
		nr = cpus__online(&cpus);
		if (nr < 0) {
			err = nr;
			pr_warn("perf: cannot read the online CPUs: %s\n", strerror(-err));
			goto err_out;
		}
	}
	b->events = calloc(nr, sizeof(*b->events));
	b->pfds = calloc(nr + 1, sizeof(*b->pfds));
	if (!b->events || !b->pfds) {
		err = -ENOMEM;
		goto err_out;
	}
	for (int i = 0; i < nr; i++) {
		b->events[i].fd = -1;
		err = open_event(b, &b->events[i], cpus[i], &pages);
		b->nr_events++;
		if (err)
			goto err_out;
		b->pfds[i].fd = b->events[i].fd;
		b->pfds[i].events = POLLIN;
	}
	for (int f = 0; f < __PERF_ATTR_FEATURE_CNT; f++)
		if (b->ladder.dropped[f])
			pr_info("perf: this kernel lacks %s; working without it\n",
				perf_attr_feature__name(f));
	pr_info("perf: %d event(s), rings of %u data pages each\n", nr, pages);
	free(cpus);
	*out = b;
	return 0;

err_out:
	free(cpus);
	close_events(b);
	free(b);
	return err;
}

static int perfring_start(struct backend *b)
{
	/* A launched command's events enable themselves at its exec. */
	if (b->target > 0)
		return 0;
	for (int i = 0; i < b->nr_events; i++)
		if (ioctl(b->events[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			int err = -errno;

			pr_warn("perf: enable CPU %d: %s\n", b->events[i].cpu, strerror(-err));
			return err;
		}
	return 0;
}

static int perfring_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	int n = b->nr_events;

	b->pfds[n].fd = wake_fd;
	b->pfds[n].events = POLLIN;
	if (poll(b->pfds, n + 1, timeout_ms) < 0 && errno != EINTR)
		return -errno;
	return 0;
}

static int batch_add(const struct perf_event_header *hdr, void *ctx)
{
	struct backend *b = ctx;
	struct batch *bt = &b->batch;
	struct batch_rec *rec;
	struct sample_id id;

	if (bt->len + hdr->size > bt->cap) {
		size_t ncap = (bt->cap ? bt->cap * 2 : 1 << 20) + hdr->size;
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
	rec->time = 0;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		struct decoded_sample ds;

		if (!decode__sample(hdr, b->sample_type, &ds))
			rec->time = ds.id.time;
	} else if (!decode__sample_id(hdr, b->sample_type, b->sample_id_all, &id)) {
		rec->time = id.time;
	}
	memcpy(bt->bytes + bt->len, hdr, hdr->size);
	bt->len += (hdr->size + 7) & ~7UL;
	return 0;
}

static int cmp_batch_rec(const void *a, const void *b)
{
	const struct batch_rec *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int handle_sample(struct backend *b, const struct perf_event_header *hdr)
{
	struct profile_core *core = b->core;
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH];
	struct decoded_sample ds;
	struct sample s = { 0 };

	if (decode__sample(hdr, b->sample_type, &ds)) {
		b->bad_records++;
		return 0;
	}
	b->samples++;
	if (!core__sample_wanted(core, ds.id.pid, ds.id.tid)) {
		core->filtered++;
		return 0;
	}
	decode__split_callchain(ds.ips, ds.nr_ips, kernel, &s.nr_kernel, user, &s.nr_user,
				MAX_STACK_DEPTH);
	s.pid = ds.id.pid;
	s.tid = ds.id.tid;
	s.cpu = ds.id.cpu;
	s.kernel_ips = kernel;
	s.user_ips = user;
	s.weight = 1;
	/* Each CPU's idle task is named after its CPU, as the kernel names it. */
	if (s.tid == 0)
		snprintf(s.comm, sizeof(s.comm), "swapper/%d", s.cpu);
	else
		snprintf(s.comm, sizeof(s.comm), "%s", proctrack__comm(core->procs, s.pid, s.tid));
	return core__add_sample(core, &s);
}

static int handle_record(struct backend *b, const struct perf_event_header *hdr)
{
	struct profile_core *core = b->core;
	struct proctrack *pt = core->procs;
	struct decoded_mmap mm;
	struct decoded_comm cm;
	struct decoded_task tk;
	uint64_t lost;

	switch (hdr->type) {
	case PERF_RECORD_SAMPLE:
		return handle_sample(b, hdr);
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		if (decode__mmap(hdr, b->sample_type, b->sample_id_all, &mm))
			break;
		pr_debug("mmap pid %d %#llx-%#llx pgoff %#llx %s\n", (int)mm.pid,
			 (unsigned long long)mm.addr, (unsigned long long)(mm.addr + mm.len),
			 (unsigned long long)mm.pgoff, mm.filename);
		/* pid -1: kernel and module maps; kallsyms covers those. */
		if ((int32_t)mm.pid <= 0 || !core__wants_pid(core, mm.pid) || !mm.len)
			return 0;
		return proctrack__mmap(pt, mm.pid,
				       &(struct mapping){ .start = mm.addr,
							  .end = mm.addr + mm.len,
							  .pgoff = mm.pgoff,
							  .dev = makedev(mm.maj, mm.min),
							  .ino = mm.ino,
							  .exec = mm.exec,
							  .path = (char *)mm.filename });
	case PERF_RECORD_COMM:
		if (decode__comm(hdr, b->sample_type, b->sample_id_all, &cm))
			break;
		if (!core__wants_pid(core, cm.pid))
			return 0;
		if (cm.exec || (!b->comm_exec && cm.pid == cm.tid)) {
			int err = proctrack__exec(pt, cm.pid);

			if (err)
				return err;
		}
		return proctrack__set_comm(pt, cm.tid, cm.comm);
	case PERF_RECORD_FORK:
		if (decode__task(hdr, &tk))
			break;
		if (!core__wants_pid(core, tk.ppid) && !core__wants_pid(core, tk.pid))
			return 0;
		if (tk.pid != tk.ppid) {
			int err = proctrack__fork(pt, tk.pid, tk.ppid);

			if (err)
				return err;
		}
		return proctrack__inherit_comm(pt, tk.tid, tk.ppid, tk.ptid);
	case PERF_RECORD_LOST:
		if (decode__lost(hdr, &lost))
			break;
		b->lost += lost;
		return 0;
	default:
		return 0;	/* EXIT, THROTTLE, ...: nothing to keep */
	}
	b->bad_records++;
	return 0;
}

static int perfring_drain(struct backend *b)
{
	struct batch *bt = &b->batch;
	int err = 0;

	bt->len = 0;
	bt->nr = 0;
	for (int i = 0; i < b->nr_events; i++) {
		int n = ring__consume(&b->events[i].ring, batch_add, b);

		if (n < 0)
			return n;
	}
	qsort(bt->recs, bt->nr, sizeof(*bt->recs), cmp_batch_rec);
	for (size_t i = 0; i < bt->nr && !err; i++)
		err = handle_record(b, (const struct perf_event_header *)(bt->bytes +
									  bt->recs[i].offset));
	return err;
}

static int perfring_stop(struct backend *b)
{
	for (int i = 0; i < b->nr_events; i++)
		ioctl(b->events[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	return 0;
}

static void perfring_stats(const struct backend *b, struct backend_stats *st)
{
	uint64_t corrupt = b->bad_records;

	for (int i = 0; i < b->nr_events; i++)
		corrupt += b->events[i].ring.corrupt;
	memset(st, 0, sizeof(*st));
	st->samples = b->samples;
	st->lost = b->lost;
	if (corrupt)
		pr_warn("warning: %llu malformed ring records skipped\n",
			(unsigned long long)corrupt);
}

static void perfring_close(struct backend *b)
{
	if (!b)
		return;
	close_events(b);
	free(b->batch.bytes);
	free(b->batch.recs);
	free(b);
}

const struct backend_ops perfring_backend_ops = {
	.name = "perf",
	.probe = perfring_probe,
	.open = perfring_open,
	.start = perfring_start,
	.wait = perfring_wait,
	.drain = perfring_drain,
	.stop = perfring_stop,
	.stats = perfring_stats,
	.close = perfring_close,
};
