// SPDX-License-Identifier: GPL-2.0
/*
 * The bpf backend's drain: when the active generation is drained (its fill,
 * or a second passed), the switch to the other with every program run on
 * the old one waited out, its counts into the pipeline with their stacks,
 * and its stack maps emptied; after stop, everything left.
 */
#include "backend-bpf/bpfbackend_internal.h"
#include "backend-bpf/bpfbackend.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "backend-bpf/convert.h"
#include "backend-bpf/countmap.h"
#include "backend-bpf/dwarf.h"
#include "backend-bpf/nsids.h"
#include "backend-bpf/offcpu.h"
#include "backend-bpf/python.h"
#include "backend-perfring/ringset.h"
#include "core/lib/clock.h"

/*
 * Drain at least this often: the work is spread over the run, and the
 * report after the end waits only for what the last second counted. Each
 * drain also empties that generation's stack maps (see bpf/counting.bpf.h).
 */
#define DRAIN_PERIOD_MS 1000
/*
 * With Python processes among the walked: their code objects are named
 * from their memory, which a process that exits takes with it; counts are
 * drained (and named) soon after they are taken.
 */
#define PYTHON_DRAIN_PERIOD_MS 250
/*
 * A generation is drained once it may hold 1/STACK_FILL_DIV of its stack
 * map's buckets (the stack ids of its new count keys, PROFILE_STAT_NEW_STACKS:
 * no more stacks than that are new): the chance that a new stack
 * collides is the share of buckets taken, so it stays below 1.6%, and the
 * overflow map takes those.
 */
#define STACK_FILL_DIV 64
/* How often to look at the generation's fill at high sample rates, at most. */
#define MIN_POLL_MS 10

/*
 * The ring set whose records keep the process tracker current: the
 * side-band's, or the stack copies' that carry them too.
 */
static struct ring_set *tracker(const struct backend *b)
{
	return b->sideband ? b->sideband : bpf_dwarf__ring_set(b->dwarf);
}

/*
 * Counts drained now were taken since `since`: the process images that ran
 * then are the candidates for their addresses. Without CLOCK_MONOTONIC
 * side-band times (before 4.1) every image is (the addresses decide).
 */
static void set_window(struct backend *b, uint64_t since)
{
	if (ring_set__monotonic(tracker(b)))
		pipeline__set_window(b->pipeline, since, (uint64_t)mono_ns());
	else
		pipeline__set_window(b->pipeline, 0, UINT64_MAX);
}

/* Samples a second at this rate on every CPU sampled. */
static double sample_rate(const struct backend_config *o)
{
	int nr_cpus = o->cpu >= 0 ? 1 : libbpf_num_possible_cpus();
	double per_cpu = o->frequency ? o->frequency : o->period ? 1e9 / o->period : 1;

	return per_cpu * (nr_cpus > 0 ? nr_cpus : 1);
}

/*
 * How long a generation takes to reach its drain point at this sample rate
 * on every CPU, within [MIN_POLL_MS, the run loop's interval].
 */
int bpf_backend__poll_interval(const struct backend_config *o, unsigned int stack_size)
{
	double keys = stack_size / 2.0 / STACK_FILL_DIV;
	double ms = keys * 1000.0 / sample_rate(o);

	if (ms < MIN_POLL_MS)
		return MIN_POLL_MS;
	return ms > DRAIN_PERIOD_MS ? DRAIN_PERIOD_MS : (int)ms;
}

/*
 * A generation's stack map without --stack-storage-size: the fewest buckets
 * (a power of two in [least, most]) that the stacks of two polls at the
 * shortest interval, two a sample, fill to 1/STACK_FILL_DIV at most. Each
 * element is preallocated at 127 ips: bcc's 16384 cost 40 ms of CPU to
 * create here, per generation. The margin of a second poll is measured: at
 * 999 Hz on 2 CPUs of a loaded host, whose run loop is late, 4096 buckets
 * lost 19 stacks in 3 runs of 5 s (374 collisions), 8192 none (47), 16384
 * none (20).
 */
unsigned int bpf_backend__stack_size_for_rate(const struct backend_config *o, unsigned int least,
					      unsigned int most)
{
	double need = 2.0 * sample_rate(o) * 2 * MIN_POLL_MS / 1000.0 * STACK_FILL_DIV;
	unsigned int size = least;

	while (size < most && size < need)
		size *= 2;
	return size < most ? size : most;
}

uint64_t bpf_backend__read_stat(struct backend *b, enum profile_stat slot)
{
	return percpu_stat(b->stats_fd, slot, b->nr_cpus);
}

/* A stack copy's stack by id: generation 1's where the program marked it so. */
const uint64_t *bpf_backend__cached_stack(void *ctx, int32_t id)
{
	struct backend *b = ctx;

	if (id >= 0 && (id & PROFILE_STACK_GEN1))
		return stack_cache__get(&b->stacks[1], id & ~PROFILE_STACK_GEN1);
	return stack_cache__get(&b->stacks[0], id);
}

struct drain_ctx {
	struct backend *b;
	unsigned int gen;		/* the drained generation */
};

static int add_entry(struct backend *b, unsigned int gen, const struct profile_key *key,
		     uint64_t count)
{
	struct stack_cache *sc = &b->stacks[gen];
	uint64_t kbuf[MAX_STACK_DEPTH + 1];
	const uint64_t *kstack, *ustack;
	struct profile_key named;
	struct sample s;

	if (b->nsids) {
		named = *key;
		if (nsid_names__rename(bpf_nsids__names(b->nsids), &named.tgid, &named.tid,
				       count) <= 0)
			return 0;	/* outside the namespace, or not named: counted */
		key = &named;
	}
	kstack = stack_cache__get(sc, key->kernel_stack_id);
	ustack = stack_cache__get(sc, key->user_stack_id);
	bpf_convert__sample(key, count, kstack, ustack, kbuf, &s);
	/* Counts summed over a second have no instant to read Python frames at: the kernel's walk or none. */
	if (b->python)
		bpf_python__sample(b->python, gen, key->tgid, key->py_stack, &s);
	return pipeline__add(b->pipeline, &s);
}

static int add_entry_cb(void *ctx, const void *key, uint64_t count)
{
	struct drain_ctx *dc = ctx;

	return add_entry(dc->b, dc->gen, key, count);
}

/* Move every entry of generation gen's count map into the pipeline, and empty the map. */
static int drain_counts(struct backend *b, unsigned int gen)
{
	/* The names of the tasks counted, all sent before their counts. */
	int err = b->nsids ? nsid_names__consume(bpf_nsids__names(b->nsids)) : 0;

	if (err)
		return err;
	set_window(b, b->gen_since[gen]);
	struct countmap cm = { .fd = b->counts_fd[gen], .key_size = sizeof(struct profile_key),
			       .no_batch = &b->no_batch };
	struct drain_ctx dc = { .b = b, .gen = gen };

	return countmap__drain(&cm, add_entry_cb, &dc);
}

/* Drain generation gen, then empty its stack maps for its next turn. */
static int drain_generation(struct backend *b, unsigned int gen)
{
	int err = drain_counts(b, gen), left;

	if (err)
		return err;
	left = stack_cache__clear(&b->stacks[gen]);
	if (left < 0)
		return left;
	if (b->python) {
		err = bpf_python__clear(b->python, gen);
		if (err)
			return err;
	}
	b->orphan_stacks += (uint64_t)left;
	return 0;
}

/* Longest wait for a run in flight (a vCPU the host preempted mid-run), in 100 µs steps. */
#define MAX_RUN_WAITS 10000

/*
 * Wait until every counting-program run that began before now has ended:
 * after a switch, no run still counts into the old generation (a count
 * added to an entry the drain has just taken and deleted would be lost,
 * with its statistics kept); after stop, the statistics read next agree
 * with the counts. Each CPU's runs are counted as they start (SAMPLES,
 * before they read the generation) and end (RUNS_DONE, after their count),
 * and one CPU's runs do not overlap: the run that began n-th has ended when
 * RUNS_DONE reaches n.
 */
static int wait_runs(struct backend *b)
{
	uint64_t *began = calloc(b->nr_cpus, sizeof(*began));
	uint64_t *ended = calloc(b->nr_cpus, sizeof(*ended));
	struct timespec step = { 0, 100000 };
	int err = began && ended ? 0 : -ENOMEM;

	if (!err)
		err = percpu_values(b->stats_fd, PROFILE_STAT_SAMPLES, b->nr_cpus, began);
	for (int waits = 0; !err; waits++) {
		int cpu = 0;

		err = percpu_values(b->stats_fd, PROFILE_STAT_RUNS_DONE, b->nr_cpus, ended);
		while (!err && cpu < b->nr_cpus && ended[cpu] >= began[cpu])
			cpu++;
		if (err || cpu == b->nr_cpus)
			break;
		if (waits == MAX_RUN_WAITS) {
			pr_warn("bpf: a program run on CPU %d has not ended in %d ms\n", cpu,
				MAX_RUN_WAITS / 10);
			break;
		}
		nanosleep(&step, NULL);
	}
	free(began);
	free(ended);
	return err;
}

/* The stack copies d took since *since (the last drain), if there is a d; now: bpf_dwarf__drain. */
static int drain_copies(struct backend *b, struct bpf_dwarf *d, uint64_t *since, bool now)
{
	uint64_t from = *since;

	if (!d)
		return 0;
	*since = (uint64_t)mono_ns();
	set_window(b, from);
	return bpf_dwarf__drain(d, now);
}

/* Point the program at the other map, let running samples finish, drain the old one. */
static int switch_and_drain(struct backend *b)
{
	unsigned int old = b->config.active_counts;
	struct timespec grace = { 0, 2000000 };
	int err;

	b->config.active_counts = !old;
	b->gen_since[!old] = (uint64_t)mono_ns();
	err = bpf_backend__write_config(b);
	if (err)
		return err;
	/*
	 * A program run is microseconds: 2 ms makes the start of every run that
	 * read the old generation visible here; those still running are waited out.
	 */
	nanosleep(&grace, NULL);
	err = wait_runs(b);
	if (err)
		return err;
	/*
	 * Every exec and fork before the switch is known before its counts are
	 * read, also those the reader thread has not copied yet: a child's
	 * counts from before its fork record was read were left out as not the
	 * command's (the report one sample short of the stack-lost statistics).
	 */
	err = ring_set__drain_now(b->sideband);
	/*
	 * The stack copies taken meanwhile, whose stack ids may be in the old
	 * generation's maps: read before they are emptied, those the reader
	 * thread has not copied yet too.
	 */
	if (!err)
		err = drain_copies(b, b->first_copies, &b->first_copies_since, true);
	if (err)
		return err;
	b->drains++;
	pr_debug("bpf: draining generation %u\n", old);
	return drain_generation(b, old);
}

static int drain_dwarf(struct backend *b)
{
	return drain_copies(b, b->dwarf, &b->dwarf_since, false);
}

/* After stop: the last mappings first, then every record and both count maps. */
static int drain_all(struct backend *b)
{
	int err = b->sideband ? ring_set__drain(b->sideband) : 0;

	if (!err)
		err = drain_copies(b, b->dwarf, &b->dwarf_since, false);
	if (!err)
		err = drain_copies(b, b->first_copies, &b->first_copies_since, false);
	/* Stopped: the counts and then the statistics are read with no run in flight. */
	if (!err && b->skel && !b->dwarf)
		err = wait_runs(b);
	/* The maps are not cleared: the dwarf program's stacks are read after this. */
	if (!err && b->skel)
		err = drain_counts(b, 0);
	if (!err && b->skel)
		err = drain_counts(b, 1);
	if (b->python)
		bpf_python__end_drain(b->python);
	if (!err && b->offcpu) {
		set_window(b, b->started_ns);
		err = bpf_offcpu__drain(b->offcpu);
	}
	return err;
}

static void unknown_thread(void *ctx, pid_t tgid)
{
	pipeline__interp_unknown_thread(ctx, tgid);
}

bool bpf_backend__python_noticed(const struct backend *b)
{
	struct bpf_python *off = bpf_offcpu__python(b->offcpu);

	return (b->python && bpf_python__noticed(b->python)) || (off && bpf_python__noticed(off));
}

bool bpf_backend__python_watched(const struct backend *b)
{
	struct bpf_python *off = bpf_offcpu__python(b->offcpu);

	return (b->python && bpf_python__walking(b->python)) ||
	       (off && bpf_python__walking(off));
}

static void fresh_stack(void *ctx, pid_t tgid, const struct interp_frame *frames, unsigned int nr)
{
	pipeline__interp_name_now(ctx, tgid, frames, nr);
}

/*
 * Threads the Python walks did not know: their processes' threads are read
 * again at the run's tick after this drain, not a drain (250 ms) later.
 * Off-CPU stacks stored since the last drain are named now, while their
 * processes live: a wait may end only with its process.
 */
static void take_python_notes(struct backend *b)
{
	struct bpf_python *off = bpf_offcpu__python(b->offcpu);

	if (b->python)
		bpf_python__take_unknown(b->python, unknown_thread, b->pipeline);
	if (off) {
		bpf_python__take_unknown(off, unknown_thread, b->pipeline);
		bpf_python__take_fresh(off, fresh_stack, b->pipeline);
	}
}

unsigned int bpf_backend__test_slow_drain_ms;

int bpf_backend__drain(struct backend *b)
{
	uint64_t new_keys, new_stacks;
	int err;

	if (b->stopped)
		return drain_all(b);
	if (bpf_backend__test_slow_drain_ms)
		usleep(bpf_backend__test_slow_drain_ms * 1000);
	/*
	 * Without side-band rings of its own, the stack copies' carry the
	 * mappings: first. With them, every record in them now, also those
	 * their reader has not looked at: a quiet side-band's is looked at less
	 * often than busy copies' (READER_IDLE_MS), whose samples after an exec
	 * were unwound before its mappings came.
	 */
	err = b->sideband ? ring_set__drain_now(b->sideband) : drain_dwarf(b);
	if (!err)
		take_python_notes(b);
	/* Before the copies are unwound: each process loaded now takes no more of them. */
	if (!err && b->native)
		bpf_native__take_unknown(b);
	/* After the mappings they are unwound by; the program takes them a while more. */
	if (!err)
		err = drain_copies(b, b->first_copies, &b->first_copies_since, false);
	if (!err)
		bpf_first_copies__renew(b);
	if (!err && b->offcpu) {
		set_window(b, b->started_ns);
		err = bpf_offcpu__drain(b->offcpu);
	}
	if (err || !b->skel)
		return err;
	if (b->dwarf)
		return b->sideband ? drain_dwarf(b) : 0;
	new_keys = bpf_backend__read_stat(b, PROFILE_STAT_NEW_KEYS) - b->new_keys_at_switch;
	new_stacks = bpf_backend__read_stat(b, PROFILE_STAT_NEW_STACKS) - b->new_stacks_at_switch;
	if (new_keys >= b->hash_size / 2 ||
	    (new_stacks && new_stacks >= b->stack_size / STACK_FILL_DIV) ||
	    mono_ms() - b->last_switch_ms >=
		    (b->python && bpf_python__walking(b->python) ? PYTHON_DRAIN_PERIOD_MS
								 : DRAIN_PERIOD_MS)) {
		b->new_keys_at_switch += new_keys;
		b->new_stacks_at_switch += new_stacks;
		b->last_switch_ms = mono_ms();
		return switch_and_drain(b);
	}
	return 0;
}
