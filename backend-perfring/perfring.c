// SPDX-License-Identifier: GPL-2.0
/*
 * The perf backend: one cpu-clock event per CPU with an mmap ring. Samples
 * carry frame-pointer callchains and are counted in user space; side-band
 * records on the same rings keep the process tracker current.
 */
#include "backend-perfring/perfring.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "backend-perfring/ringset.h"
#include "compat/cpus.h"
#include "core/log.h"

#define DEFAULT_DATA_PAGES 128

struct backend {
	struct ring_set rs;
	uint64_t samples;
};

static void fill_attr(struct perf_event_attr *attr, const struct profile_opts *o, bool launch)
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

	nr = ring_set__cpus(opts, &cpus);
	if (nr < 0) {
		snprintf(why, why_len, "cannot read the online CPUs: %s", strerror(-nr));
		return nr;
	}
	fill_attr(&attr, opts, !system_wide);
	attr.enable_on_exec = 0;
	/* The probe is the real call: same event, our own pid when launching. */
	fd = perf_attr__open(&ladder, &attr, system_wide ? -1 : 0, system_wide ? cpus[0] : -1);
	free(cpus);
	if (fd < 0) {
		perf_open_error(fd, system_wide, why, why_len);
		return fd;
	}
	close(fd);
	return 0;
}

int perfring__convert_sample(const struct decoded_sample *ds, struct proctrack *pt,
			     uint64_t *kernel, uint64_t *user, struct sample *s)
{
	memset(s, 0, sizeof(*s));
	decode__split_callchain(ds->ips, ds->nr_ips, kernel, &s->nr_kernel, user, &s->nr_user,
				MAX_STACK_DEPTH);
	s->pid = ds->id.pid;
	s->tid = ds->id.tid;
	s->cpu = ds->id.cpu;
	s->kernel_ips = kernel;
	s->user_ips = user;
	s->weight = 1;
	/* Each CPU's idle task is named after its CPU, as the kernel names it. */
	if (s->tid == 0)
		snprintf(s->comm, sizeof(s->comm), "swapper/%d", s->cpu);
	else
		snprintf(s->comm, sizeof(s->comm), "%s", proctrack__comm(pt, s->pid, s->tid));
	return 0;
}

static int handle_sample(struct ring_set *rs, const struct perf_event_header *hdr)
{
	struct backend *b = (struct backend *)rs;	/* rs is the first member */
	struct profile_core *core = rs->core;
	uint64_t kernel[MAX_STACK_DEPTH], user[MAX_STACK_DEPTH];
	struct decoded_sample ds;
	struct sample s;

	if (decode__sample(hdr, rs->sample_type, &ds)) {
		rs->bad_records++;
		return 0;
	}
	b->samples++;
	if (!core__sample_wanted(core, ds.id.pid, ds.id.tid)) {
		core->filtered++;
		return 0;
	}
	perfring__convert_sample(&ds, core->procs, kernel, user, &s);
	return core__add_sample(core, &s);
}

static int perfring_open(struct backend **out, struct profile_core *core, pid_t target)
{
	struct perf_event_attr attr;
	struct backend *b;
	int err;

	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	fill_attr(&attr, core->opts, target > 0);
	err = ring_set__open(&b->rs, "perf", core, &attr, target, DEFAULT_DATA_PAGES);
	if (err) {
		free(b);
		return err;
	}
	b->rs.on_sample = handle_sample;
	*out = b;
	return 0;
}

static int perfring_start(struct backend *b)
{
	/* A launched command's events enable themselves at its exec. */
	if (b->rs.target > 0)
		return 0;
	return ring_set__enable(&b->rs);
}

static int perfring_wait(struct backend *b, int wake_fd, int timeout_ms)
{
	return ring_set__wait(&b->rs, wake_fd, timeout_ms);
}

static int perfring_drain(struct backend *b)
{
	return ring_set__drain(&b->rs);
}

static int perfring_stop(struct backend *b)
{
	ring_set__disable(&b->rs);
	return 0;
}

static void perfring_stats(const struct backend *b, struct backend_stats *st)
{
	uint64_t bad = ring_set__bad_records(&b->rs);

	memset(st, 0, sizeof(*st));
	st->samples = b->samples;
	st->lost = b->rs.lost;
	if (bad)
		pr_warn("warning: %llu malformed ring records skipped\n", (unsigned long long)bad);
}

static void perfring_close(struct backend *b)
{
	if (!b)
		return;
	ring_set__close(&b->rs);
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
