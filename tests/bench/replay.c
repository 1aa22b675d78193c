// SPDX-License-Identifier: GPL-2.0
/*
 * make bench: the user-space throughput of the perf backend's per-sample
 * path, which is what sizes the tool for hosts with 64-256 CPUs that this
 * machine cannot show. Records SECONDS of system-wide cpu-clock samples at
 * 999 Hz (frame pointers, or register + stack copies with --dwarf) with the
 * perf backend's own attribute, then replays the recording through
 * perfring__feed_sample() (decode, filter, convert, unwind, count) as fast
 * as it goes, ROUNDS times, each with a fresh pipeline and unwinder.
 *
 *   bench-replay [--dwarf] SECONDS ROUNDS
 *
 * Prints one line: samples, megabytes, samples/s (median, min..max, first
 * round), and how many CPUs at 999 Hz one profiler thread serves.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend-perfring/perfring.h"
#include "backend-perfring/ringsample.h"
#include "backend-perfring/ringset.h"
#include "core/agg/pipeline.h"
#include "unwind/unwind.h"

#define FREQUENCY 999

struct recording {
	unsigned char *bytes;
	size_t len, cap;
	size_t samples;
};

static int record(void *ctx, const struct perf_event_header *hdr)
{
	struct recording *rec = ctx;

	if (rec->len + hdr->size > rec->cap) {
		size_t ncap = rec->cap ? rec->cap * 2 : 1 << 24;
		unsigned char *tmp = realloc(rec->bytes, ncap);

		if (!tmp)
			return -ENOMEM;
		rec->bytes = tmp;
		rec->cap = ncap;
	}
	memcpy(rec->bytes + rec->len, hdr, hdr->size);
	rec->len += hdr->size;
	rec->samples++;
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static unsigned int unwind(void *ctx, const struct addr_space *as,
			   const struct user_snapshot *snap, uint64_t *ips, unsigned int max)
{
	struct unwind_regs regs = { .ip = snap->ip, .sp = snap->sp, .bp = snap->bp };

	return unwinder__unwind(ctx, as, &regs, snap->stack, snap->stack_size, ips, max);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One pass over the recording; returns samples per second. */
static double replay(const struct recording *rec, const struct pipeline_config *pc,
		     const struct perf_event_attr *attr, bool dwarf)
{
	struct unwinder *u = dwarf ? unwinder__new() : NULL;
	struct pipeline p;
	double t0, t;
	size_t off = 0;

	if (pipeline__init(&p, pc))
		exit(1);
	if (u)
		pipeline__set_unwind(&p, unwind, u);
	/* Reading /proc is set-up, not the per-sample path. */
	pipeline__snapshot_processes(&p);
	t0 = now();
	while (off < rec->len) {
		const struct perf_event_header *hdr = (const void *)(rec->bytes + off);

		if (perfring__feed_sample(&p, attr->sample_type, attr->sample_regs_user, hdr) < 0)
			exit(1);
		off += hdr->size;
	}
	t = now() - t0;
	pipeline__fini(&p);
	unwinder__free(u);
	return rec->samples / t;
}

int main(int argc, char **argv)
{
	bool dwarf = argc > 1 && !strcmp(argv[1], "--dwarf");
	int seconds = argc > 1 + dwarf ? atoi(argv[1 + dwarf]) : 3;
	int rounds = argc > 2 + dwarf ? atoi(argv[2 + dwarf]) : 5;
	struct backend_config cfg = { .frequency = FREQUENCY, .cpu = -1, .user_stacks = true,
				      .kernel_stacks = true, .dwarf = dwarf,
				      .stack_dump_size = 16384 };
	struct pipeline_config pc = { .user_stacks = true, .kernel_stacks = true };
	struct recording rec = { 0 };
	struct perf_event_attr attr;
	struct errmsg em = { "" };
	struct ring_set *rs;
	struct pipeline side;
	double rate[64], end;
	uint64_t lost;
	pid_t all = -1;

	if (seconds <= 0 || rounds <= 0 || rounds > 64) {
		fprintf(stderr, "usage: bench-replay [--dwarf] SECONDS ROUNDS\n");
		return 2;
	}
	perfring__sample_attr(&attr, &cfg, false);
	if (pipeline__init(&side, &pc) ||
	    ring_set__open(&rs, "record", &side, &cfg, &attr, &all, 1, dwarf ? 1024 : 256, &em)) {
		fprintf(stderr, "bench-replay: %s\n", em.text);
		return 1;
	}
	ring_set__on_sample(rs, record, &rec);
	if (ring_set__enable(rs, &em)) {
		fprintf(stderr, "bench-replay: %s\n", em.text);
		return 1;
	}
	end = now() + seconds;
	while (now() < end) {
		ring_set__wait(rs, -1, 20);
		if (ring_set__drain(rs))
			return 1;
	}
	ring_set__disable(rs);
	ring_set__drain(rs);
	lost = ring_set__lost(rs);
	ring_set__close(rs);
	pipeline__fini(&side);

	for (int i = 0; i < rounds; i++)
		rate[i] = replay(&rec, &pc, &attr, dwarf);
	{
		double first = rate[0], med;

		qsort(rate, rounds, sizeof(rate[0]), cmp_double);
		med = rate[rounds / 2];
		printf("%s: %zu samples recorded (%.1f MB, %" PRIu64 " lost), replayed %d times: "
		       "%.0f samples/s median (%.0f..%.0f, first round %.0f) = %.0f CPUs at %d Hz "
		       "per profiler thread\n",
		       dwarf ? "dwarf" : "fp", rec.samples, rec.len / 1048576.0, lost, rounds, med,
		       rate[0], rate[rounds - 1], first, med / FREQUENCY, FREQUENCY);
	}
	free(rec.bytes);
	return 0;
}
