// SPDX-License-Identifier: GPL-2.0
#include "backend-perfring/ringplan.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "compat/host.h"

/* The fewest data pages of any ring: 32 KiB, some sixty frame-pointer samples. */
#define MIN_PAGES 8

static uint64_t read_u64(const char *path, uint64_t dflt)
{
	unsigned long long v;
	FILE *f = fopen(path, "re");

	if (!f)
		return dflt;
	if (fscanf(f, "%llu", &v) != 1)
		v = dflt;
	fclose(f);
	return v;
}

/* CAP_IPC_LOCK (14) in the effective set: perf_mmap() then skips both limits. */
static bool cap_ipc_lock(void)
{
	char line[256];
	unsigned long long caps = 0;
	bool found = false;
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f))
		found = sscanf(line, "CapEff: %llx", &caps) == 1;
	fclose(f);
	return found && (caps & (1ull << 14));
}

void ring_budget__set(struct ring_budget *b, uint64_t mlock_kb, unsigned int online_cpus,
		      uint64_t rlimit_bytes, size_t page_size)
{
	memset(b, 0, sizeof(*b));
	b->mlock_kb = mlock_kb;
	b->online_cpus = online_cpus;
	b->rlimit_bytes = rlimit_bytes;
	b->pages = mlock_kb * 1024 / page_size * online_cpus;
	if (rlimit_bytes == RLIM_INFINITY)
		b->pages = UINT64_MAX;
	else
		b->pages += rlimit_bytes / page_size;
}

void ring_budget__read(struct ring_budget *b, size_t page_size)
{
	struct rlimit rl = { 0, 0 };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	getrlimit(RLIMIT_MEMLOCK, &rl);
	ring_budget__set(b, read_u64("/proc/sys/kernel/perf_event_mlock_kb", 516),
			 cpus > 0 ? (unsigned int)cpus : 1, rl.rlim_cur, page_size);
	if (perf_event_paranoid() < 0)
		b->unlimited_why = "kernel.perf_event_paranoid is -1";
	else if (cap_ipc_lock())
		b->unlimited_why = geteuid() == 0 ? "root" : "CAP_IPC_LOCK";
	else if (b->pages == UINT64_MAX)
		b->unlimited_why = "ulimit -l is unlimited";
	b->unlimited = b->unlimited_why != NULL;
}

void ring_budget__describe(const struct ring_budget *b, size_t page_size, char *buf, size_t len)
{
	if (b->unlimited)
		snprintf(buf, len, "no locked-memory limit (%s): at most %u pages a ring, %u in all",
			 b->unlimited_why, RING_PLAN_ROOT_MAX_PAGES, RING_PLAN_ROOT_TOTAL_PAGES);
	else
		snprintf(buf, len, "locked memory for perf rings: %" PRIu64 " KiB "
			 "(kernel.perf_event_mlock_kb %" PRIu64 " x %u CPUs + ulimit -l %" PRIu64
			 " KiB), less what this user's other perf rings hold",
			 b->pages * page_size / 1024, b->mlock_kb, b->online_cpus,
			 b->rlimit_bytes / 1024);
}

static unsigned int pow2_at_least(uint64_t v)
{
	unsigned int p = 1;

	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/* Pages the rings of n take, metadata page included. */
static uint64_t cost(const struct ring_need *n, unsigned int pages)
{
	return (uint64_t)n->nr_rings * (pages + 1);
}

int ring_plan(struct ring_need *needs, int nr, const struct ring_budget *b, size_t page_size,
	      char *why, size_t len)
{
	uint64_t budget = b->unlimited ? RING_PLAN_ROOT_TOTAL_PAGES : b->pages, used = 0;
	unsigned int max_pages = b->unlimited ? RING_PLAN_ROOT_MAX_PAGES : 1u << 30;

	for (int i = 0; i < nr; i++) {
		struct ring_need *n = &needs[i];
		uint64_t want = n->records_per_s * n->record_bytes * RING_PLAN_DELAY_MS / 1000;
		uint64_t least = 4 * n->max_record_bytes;

		/* A record must fit with room to spare: wakeups come at a quarter full. */
		n->min_pages = pow2_at_least((least + page_size - 1) / page_size);
		if (n->min_pages < MIN_PAGES)
			n->min_pages = MIN_PAGES;
		n->want_pages = pow2_at_least((want + page_size - 1) / page_size);
		if (n->want_pages < RING_PLAN_WANT_PAGES)
			n->want_pages = RING_PLAN_WANT_PAGES;
		if (n->want_pages < n->min_pages)
			n->want_pages = n->min_pages;
		if (n->want_pages > max_pages)
			n->want_pages = max_pages > n->min_pages ? max_pages : n->min_pages;
		n->pages = n->min_pages;
		used += cost(n, n->pages);
	}
	if (used > budget) {
		int o = snprintf(why, len, "locked memory: the smallest rings need %" PRIu64
				 " KiB (", used * page_size / 1024);

		for (int i = 0; i < nr && o > 0 && (size_t)o < len; i++)
			o += snprintf(why + o, len - o, "%s%s: %u x %u KiB", i ? ", " : "",
				      needs[i].what, needs[i].nr_rings,
				      (unsigned int)((needs[i].min_pages + 1) * page_size / 1024));
		if (o > 0 && (size_t)o < len)
			snprintf(why + o, len - o, "), more than %" PRIu64 " KiB that this user may "
				 "lock (kernel.perf_event_mlock_kb %" PRIu64 " per CPU + ulimit -l "
				 "%" PRIu64 " KiB); raise either, or use fewer CPUs (-C)",
				 budget * page_size / 1024, b->mlock_kb, b->rlimit_bytes / 1024);
		return -ENOMEM;
	}
	/* Double the set furthest from what it wants, while one fits. */
	for (;;) {
		struct ring_need *best = NULL;
		double best_fill = 0;

		for (int i = 0; i < nr; i++) {
			struct ring_need *n = &needs[i];
			double fill = (double)n->pages / n->want_pages;

			if (n->pages >= n->want_pages ||
			    used - cost(n, n->pages) + cost(n, 2 * n->pages) > budget)
				continue;
			if (!best || fill < best_fill) {
				best = n;
				best_fill = fill;
			}
		}
		if (!best)
			return 0;
		used += cost(best, 2 * best->pages) - cost(best, best->pages);
		best->pages *= 2;
	}
}
