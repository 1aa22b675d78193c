// SPDX-License-Identifier: GPL-2.0
/*
 * The ring set's reader thread: it copies the records out of the rings
 * into a batch, and says when a drain is due; without it, each drain reads
 * the rings itself.
 */
#include "backend-perfring/ringset_internal.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "core/lib/clock.h"
#include "core/lib/log.h"

/*
 * The reader thread: it only copies records out of the rings into
 * `pending`, so that the kernel never finds a ring full while the main
 * thread unwinds, symbolizes or writes (a busy host may not schedule it for
 * tens of milliseconds, and a 1 MiB ring holds 60 ms of 16 KiB stack copies
 * at 999 Hz). A drain takes `pending` whole.
 *
 * Where allowed (root, CAP_SYS_NICE, ulimit -r) it runs at the lowest
 * real-time priority, SCHED_FIFO 1, as `perf record -r 1` would. At normal
 * priority, on 2 CPUs under a compile loop at load average 10-14, it was
 * kept off the CPU for up to 500 ms and 4 MiB rings overflowed (5% of dwarf
 * samples lost); at SCHED_FIFO the longest gap between its reads was 30-50
 * ms and no ring was ever more than a quarter full. It costs the host
 * little: it copies what the kernel wrote and sleeps. Its lock inherits
 * priority, so that it never waits on a main thread that the busy host
 * preempted.
 *
 * What it holds is bounded by the rings, not by the backlog: a quarter of
 * what they hold together (the budget), so that the copies held in user
 * space, pending and the batch a drain works on, are half the rings at most,
 * and the rings stay the buffer (issue 36: a make -j2 loop at normal
 * priority kept the main thread from the CPU, and 60-77 MB of stack copies
 * waited, where an idle run takes 13 MB). The main thread is woken at a
 * quarter of the budget; at half, where the reader may, it lends the main
 * thread its real-time priority until a drain leaves less than a quarter
 * (lend.h): the main thread then keeps up whatever the host runs, but for
 * the work it cannot put down (the tables of a large binary, read once:
 * 150-450 ms for libLLVM's here, more than the rings hold at 999 Hz with
 * stack copies). Past the budget, records go to a file (spill.h) that the
 * drain reads back a budget at a time; where that fails they stay in the
 * rings, and what the kernel then cannot write it counts
 * (PERF_RECORD_LOST).
 */
#define BUDGET_MIN (1u << 20)
/* Room for the record that crosses the budget: a sample is at most 64 KiB. */
#define BUDGET_SLACK (65536u + 4096u)
#define READER_POLL_MS 10
/*
 * Rings that wake the reader at their watermark and had nothing at its last
 * looks are looked at less often, twice as long each time up to this: the
 * copies' set of a bpf run whose processes all have tables, and the
 * side-band's of a quiet host, were looked at 100 times a second for
 * nothing (a tenth of a named-process run's CPU). The watermark still wakes
 * it at once; what waits longer is a few records under it, and drains that
 * must have every record read the rings themselves (ring_set__drain_now).
 */
#define READER_IDLE_MS 160
/*
 * How long after the last sample of an interpreted thread the reader is
 * still woken at each sample. A host with an idle Python process (any host
 * running a Python agent) had every sample of a system-wide run wake the
 * reader: 0.4-0.6 s of CPU a 5 s run at 999 Hz on 2 CPUs, against 0.12-0.15
 * s; the first sample of a thread that starts to run is read within
 * READER_POLL_MS, the next ones at their wake-up.
 */
#define INTERP_HOT_NS 1000000000LL
#define READER_RT_PRIORITY 1

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
	return ring_set__wait_sets_fds(sets, nr_sets, &wake_fd, 1, timeout_ms);
}

int ring_set__wait_sets_fds(struct ring_set *const *sets, int nr_sets, const int *fds, int nr_fds,
			    int timeout_ms)
{
	struct pollfd stack_pfds[16], *pfds = stack_pfds;
	int want = nr_fds, n = 0;

	for (int i = 0; i < nr_sets; i++)
		want += sets[i]->reader.on ? 1 : sets[i]->nr_events;
	if (want > (int)(sizeof(stack_pfds) / sizeof(stack_pfds[0]))) {
		pfds = calloc((size_t)want, sizeof(*pfds));
		if (!pfds)
			return -ENOMEM;
	}
	for (int i = 0; i < nr_sets; i++)
		n += wait_fds(sets[i], pfds + n);
	for (int i = 0; i < nr_fds; i++)
		pfds[n++] = (struct pollfd){ .fd = fds[i], .events = POLLIN };
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

/* Doubled, but no more than the budget's room unless need asks (a drain's own read). */
static size_t grown_cap(const struct ring_set *rs, size_t cap, size_t need)
{
	size_t ncap = cap ? cap * 2 : BUDGET_MIN;
	size_t room = rs->reader.budget + BUDGET_SLACK;

	if (ncap > room)
		ncap = room;
	return ncap < need ? need : ncap;
}

/* A record's time, and the length it is kept at (its stack copy cut: ds filled). */
static uint64_t record_time(const struct ring_set *rs, const struct perf_event_header *hdr,
			    struct decoded_sample *ds, size_t *cut)
{
	struct sample_id id;

	*cut = 0;
	if (hdr->type == PERF_RECORD_SAMPLE) {
		if (decode__sample(hdr, rs->sample_type, rs->regs_user, ds))
			return 0;
		/* Less to copy and to hold while the main thread is busy. */
		*cut = decode__cut_stack_len(hdr, rs->sample_type, ds);
		return ds->id.time;
	}
	return decode__sample_id(hdr, rs->sample_type, rs->sample_id_all, &id) ? 0 : id.time;
}

/* Room for len more bytes and one more record in bt. Returns 0 or -ENOMEM. */
static int batch_room(const struct ring_set *rs, struct batch *bt, size_t len)
{
	if (bt->len + len > bt->cap) {
		size_t ncap = grown_cap(rs, bt->cap, bt->len + len);
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
	return 0;
}

static void batch_index(struct batch *bt, size_t offset, uint64_t time)
{
	struct batch_rec *rec = &bt->recs[bt->nr++];

	rec->seq = bt->seq++;
	rec->offset = offset;
	rec->time = time;
	rec->interp = NO_INTERP;
}

/* Upper bounds of the buckets of struct ring_reader's read_delays, in microseconds. */
static const uint32_t delay_edges_us[READ_DELAY_BUCKETS - 1] = {
	10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000, 100000
};

static void count_delay(struct ring_reader *rd, int64_t ns)
{
	size_t b = 0;

	while (b < READ_DELAY_BUCKETS - 1 && ns > (int64_t)delay_edges_us[b] * 1000)
		b++;
	rd->read_delays[b]++;
}

/* The bound in microseconds under which pct percent of the reads began; 0: past the last. */
static uint32_t delay_percentile(const struct ring_reader *rd, uint64_t total, unsigned int pct)
{
	uint64_t seen = 0;

	for (size_t b = 0; b < READ_DELAY_BUCKETS - 1; b++) {
		seen += rd->read_delays[b];
		if (seen * 100 >= total * pct)
			return delay_edges_us[b];
	}
	return 0;
}

/* -v: how soon after their samples interpreted frames were read (what races the program). */
static void report_delays(const struct ring_set *rs)
{
	const struct ring_reader *rd = &rs->reader;
	char when[3][24];
	static const unsigned int pcts[3] = { 50, 90, 99 };
	uint64_t total = 0;

	for (size_t b = 0; b < READ_DELAY_BUCKETS; b++)
		total += rd->read_delays[b];
	if (!total)
		return;
	for (int i = 0; i < 3; i++) {
		uint32_t us = delay_percentile(rd, total, pcts[i]);

		if (us)
			snprintf(when[i], sizeof(when[i]), "%u us", us);
		else
			snprintf(when[i], sizeof(when[i]), "more than %u ms",
				 delay_edges_us[READ_DELAY_BUCKETS - 2] / 1000);
	}
	pr_info("%s: the interpreted frames of %llu samples read by the reader thread: half "
		"within %s of their sample, 90%% within %s, 99%% within %s (the program runs "
		"on meanwhile)\n",
		rs->what, (unsigned long long)total, when[0], when[1], when[2]);
}

/*
 * A sample's interpreted frames, read now by the reader thread (within
 * milliseconds of the sample, where the drain is up to 100 ms later), into
 * *ei. Returns its length in bytes (a multiple of 8), or 0: not a thread
 * the reader knows (the pipeline reads it at the drain).
 */
static size_t read_interp(struct ring_set *rs, const struct decoded_sample *ds,
			  struct early_interp *ei)
{
	const struct interp_reader *r = rs->cfg->interp_reader;
	int64_t start = ring_set__monotonic(rs) ? mono_ns() : 0;
	uint32_t status;
	unsigned int n = r->read(r->ctx, (pid_t)ds->id.pid, (pid_t)ds->id.tid, ei->frames,
				 MAX_INTERP_DEPTH, &status);

	if (status == INTERP_NONE)
		return 0;
	rs->reader.interp_seen_ns = start ? start : mono_ns();
	/* A thread started since: read at the drain, brought soon so that it is known after. */
	if (status == INTERP_NO_THREAD) {
		rs->reader.drain_soon = true;
		return 0;
	}
	if (start)
		count_delay(&rs->reader, start - (int64_t)ds->id.time);
	ei->read_ns = (uint64_t)start;
	ei->nr = n;
	ei->status = status;
	return sizeof(*ei) + n * sizeof(ei->frames[0]);
}

/*
 * The reader at its budget, or behind records already spilled: the record
 * (cut) goes to the spill file; where that fails, it stays in the ring.
 */
static int spill_record(struct ring_set *rs, const struct perf_event_header *hdr,
			const struct decoded_sample *ds, size_t cut)
{
	struct ring_reader *rd = &rs->reader;
	const void *rec = hdr;

	if (cut) {
		if (!rd->cut_buf)
			rd->cut_buf = malloc(BUDGET_SLACK);
		if (!rd->cut_buf || cut > BUDGET_SLACK)
			return RING_KEEP;
		decode__cut_stack(hdr, ds, cut, rd->cut_buf);
		rec = rd->cut_buf;
	}
	if (spill__write(&rd->spill, rec, cut ? cut : hdr->size))
		return RING_KEEP;
	rs->bytes_read += hdr->size;
	rs->bytes_kept += cut ? cut : hdr->size;
	return 0;
}

/*
 * A sample whose stack copy the kernel cut short, with the rest read from
 * its process now (stackfill.h): the completed record, cut to it (*cut), or
 * hdr as it was.
 */
static const struct perf_event_header *complete_stack(struct ring_set *rs,
						      const struct perf_event_header *hdr,
						      struct decoded_sample *ds, size_t *cut)
{
	struct ring_reader *rd = &rs->reader;
	size_t room = decode__stack_room(hdr, rs->sample_type, ds), got;
	const struct perf_event_header *done;
	const unsigned char *bytes;
	struct decoded_sample filled;

	if (!room)
		return hdr;
	got = stack_fill__read(&rd->fill, ds, rs->regs_user, room, &bytes);
	if (!got)
		return hdr;
	if (!rd->fill_buf)
		rd->fill_buf = malloc(BUDGET_SLACK);
	if (!rd->fill_buf)	/* room for any record: sizes are 16 bits */
		return hdr;
	decode__fill_stack(hdr, ds, bytes, got, rd->fill_buf);
	done = (const struct perf_event_header *)rd->fill_buf;
	/* Cannot fail (it decoded before); if it did, ds and hdr stay the ring's. */
	if (decode__sample(done, rs->sample_type, rs->regs_user, &filled))
		return hdr;
	*ds = filled;
	*cut = 0;
	return done;
}

static int batch_add(const struct perf_event_header *hdr, void *ctx)
{
	struct ring_set *rs = ctx;
	struct batch *bt = rs->fill;
	struct decoded_sample ds;
	size_t cut, ring_len = hdr->size, len, interp_len = 0;
	uint64_t time = record_time(rs, hdr, &ds, &cut);
	union {
		struct early_interp ei;
		unsigned char bytes[sizeof(struct early_interp) +
				    MAX_INTERP_DEPTH * sizeof(struct interp_frame)];
	} interp;
	int err;

	if (bt == &rs->reader.pending &&
	    (bt->len >= rs->reader.budget || spill__pending(&rs->reader.spill)))
		return spill_record(rs, hdr, &ds, cut);
	if (bt == &rs->reader.pending && hdr->type == PERF_RECORD_SAMPLE && time)
		hdr = complete_stack(rs, hdr, &ds, &cut);
	len = cut ? cut : hdr->size;
	/*
	 * The reader thread's samples only: a drain's own read of the rings is
	 * no earlier. Not while no interpreted thread is known (no lock taken).
	 */
	if (rs->interp_early && bt == &rs->reader.pending && hdr->type == PERF_RECORD_SAMPLE &&
	    time && rs->cfg->interp_reader->any(rs->cfg->interp_reader->ctx))
		interp_len = read_interp(rs, &ds, &interp.ei);
	err = batch_room(rs, bt, len + interp_len);
	if (err)
		return err;
	batch_index(bt, bt->len, time);
	if (interp_len) {
		bt->recs[bt->nr - 1].interp = bt->len + len;
		memcpy(bt->bytes + bt->len + len, &interp, interp_len);
		rs->bytes_kept += interp_len;
	}
	rs->bytes_read += ring_len;
	rs->bytes_kept += len;
	if (cut)
		decode__cut_stack(hdr, &ds, cut, bt->bytes + bt->len);
	else
		memcpy(bt->bytes + bt->len, hdr, hdr->size);
	bt->len += len + interp_len;	/* always a multiple of 8 */
	return 0;
}

/*
 * The pause before the rings are looked at again where their events wake
 * the reader at each sample but no interpreted thread is known (a wake-up
 * a sample would be wasted): READER_POLL_MS, shorter where the bytes read
 * after the last pause (bytes in ns) would fill a quarter of a ring sooner,
 * when a watermark would have woken the reader.
 */
static int paced_timeout(const struct ring_set *rs, uint64_t bytes, int64_t ns)
{
	uint64_t quarter = (uint64_t)rs->data_pages * (uint64_t)sysconf(_SC_PAGESIZE) / 4;
	uint64_t ms;

	if (!bytes || ns <= 0)
		return READER_POLL_MS;
	ms = quarter * (uint64_t)ns / bytes / 1000000;
	return ms < 1 ? 1 : ms > READER_POLL_MS ? READER_POLL_MS : (int)ms;
}

static void *reader_main(void *arg)
{
	struct ring_set *rs = arg;
	struct ring_reader *rd = &rs->reader;
	const struct interp_reader *ir = rs->cfg ? rs->cfg->interp_reader : NULL;
	/* The stop eventfd first, then the rings' events. */
	struct pollfd *all = calloc((size_t)rs->nr_events + 1, sizeof(*all));
	struct pollfd *pfds = all ? all + 1 : NULL;
	int64_t last_ns = mono_ns();
	uint64_t last_bytes = 0;
	int pace = READER_POLL_MS, idle = READER_POLL_MS;
	bool full = false;

	if (all)
		all[0] = (struct pollfd){ .fd = rd->stop_efd, .events = POLLIN };
	for (int i = 0; pfds && i < rs->nr_events; i++)
		pfds[i] = (struct pollfd){ .fd = rs->events[i].fd, .events = POLLIN };
	while (!__atomic_load_n(&rd->stop, __ATOMIC_ACQUIRE)) {
		bool wake, look = pfds && !full;
		int timeout = look ? idle : READER_POLL_MS;
		ring_alive_fn alive;
		size_t backlog;
		uint64_t before;
		int64_t now;

		/*
		 * Woken at each ring's watermark; where the events wake at each
		 * sample, at each sample while interpreted threads are known, so
		 * that their frames are read tens of microseconds after it (rings
		 * looked at every millisecond read them 0-1 ms after it: 12% of
		 * the samples of a program running three functions in turns of
		 * 2-5 ms got another function's frames), and on a timer while
		 * none is or none of theirs was read for INTERP_HOT_NS (but for
		 * events the kernel filters to those threads: wake_always). A stop
		 * wakes it by its eventfd. With nowhere to put
		 * records (pending full and the spill file refused), only the
		 * timeout: nothing is read until the main thread takes some.
		 */
		if (rs->wake_each_sample && !rs->wake_always &&
		    !(rs->interp_early && ir && mono_ns() - rd->interp_seen_ns < INTERP_HOT_NS &&
		      ir->any(ir->ctx))) {
			look = false;
			timeout = pace;
		}
		if (all)
			poll(all, look ? (nfds_t)rs->nr_events + 1 : 1, timeout);
		else
			poll(NULL, 0, timeout);
		/*
		 * The event of a task that exited polls as hung up from then on:
		 * out of the poll set, or this thread would spin at real-time
		 * priority (its ring is still read).
		 */
		for (int i = 0; pfds && i < rs->nr_events; i++)
			if (pfds[i].revents & (POLLHUP | POLLERR | POLLNVAL))
				pfds[i].fd = -1;
		pthread_mutex_lock(&rd->lock);
		before = rs->bytes_read;
		for (int i = 0; i < rs->nr_events && !rd->err; i++) {
			int n = ring__consume(&rs->events[i].ring, batch_add, rs);

			if (n < 0)
				rd->err = n;
		}
		full = rd->pending.len >= rd->budget && rd->spill.err;
		wake = rd->pending.len >= rd->budget / 4 || rd->err || rd->drain_soon;
		rd->drain_soon = false;
		if (rd->pending.len > rd->peak)
			rd->peak = rd->pending.len;
		if (rd->realtime && rd->pending.len >= rd->budget / 2)
			prio_lend__raise(&rd->lend, READER_RT_PRIORITY);
		now = mono_ns();
		pace = paced_timeout(rs, rs->bytes_read - last_bytes, now - last_ns);
		idle = rs->bytes_read != before ? READER_POLL_MS
		       : idle * 2 > READER_IDLE_MS ? READER_IDLE_MS : idle * 2;
		last_bytes = rs->bytes_read;
		last_ns = now;
		backlog = rd->pending.len + (size_t)(rd->spill.write_off - rd->spill.read_off);
		pthread_mutex_unlock(&rd->lock);
		/* A full counter (EAGAIN) means the main thread is woken already. */
		if (wake)
			(void)!write(rd->efd, &(uint64_t){ 1 }, 8);
		alive = __atomic_load_n(&rs->on_reader_alive, __ATOMIC_ACQUIRE);
		if (alive && !full)
			alive(rs->on_reader_alive_ctx, backlog);
	}
	free(all);
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

/* A quarter of what the rings hold together (see the top of this file). */
static size_t reader_budget(const struct ring_set *rs)
{
	size_t ring = (size_t)rs->data_pages * (size_t)sysconf(_SC_PAGESIZE);
	size_t budget = ring * (size_t)rs->nr_events / 4;

	return budget > BUDGET_MIN ? budget : BUDGET_MIN;
}

void ring_set__hold_at_most(struct ring_set *rs, size_t bytes)
{
	struct ring_reader *rd = &rs->reader;

	if (!rd->on) {
		rd->budget = bytes;
		return;
	}
	pthread_mutex_lock(&rd->lock);
	rd->budget = bytes;
	pthread_mutex_unlock(&rd->lock);
}

/* Start the reader thread; without one (no thread or eventfd), drains read the rings. */
void ring_reader__start(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;
	int err;

	rd->budget = reader_budget(rs);
	prio_lend__init(&rd->lend);
	rd->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	rd->stop_efd = rd->efd < 0 ? -1 : eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	err = rd->stop_efd < 0 ? errno : reader_lock_init(&rd->lock);
	if (err) {
		pr_info("%s: no reader thread (%s): rings are read at each drain\n", rs->what,
			strerror(err));
		if (rd->efd >= 0)
			close(rd->efd);
		if (rd->stop_efd >= 0)
			close(rd->stop_efd);
		rd->efd = -1;
		rd->stop_efd = -1;
		return;
	}
	rs->fill = &rd->pending;
	err = reader_create(rs);
	if (err) {
		pr_info("%s: no reader thread (%s): rings are read at each drain\n", rs->what,
			strerror(err));
		pthread_mutex_destroy(&rd->lock);
		close(rd->efd);
		close(rd->stop_efd);
		rd->efd = -1;
		rd->stop_efd = -1;
		rs->fill = &rs->batch;
		return;
	}
	rd->on = true;
}

/* Stop the reader thread; what it copied stays in pending for the next drain. */
void ring_reader__stop(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	if (!rd->on)
		return;
	__atomic_store_n(&rd->stop, 1, __ATOMIC_RELEASE);
	(void)!write(rd->stop_efd, &(uint64_t){ 1 }, 8);
	pthread_join(rd->thread, NULL);
	rd->on = false;
	prio_lend__release(&rd->lend);
	report_delays(rs);
	stack_fill__report(&rd->fill, rs->what);
	if (rd->lend.times)
		pr_info("%s: the reader lent its priority to the main thread %llu times (stack "
			"copies waiting: at most %.1f MB, budget %.1f MB)\n",
			rs->what, rd->lend.times, rd->peak / 1048576.0, rd->budget / 1048576.0);
	if (rd->spill.bytes)
		pr_info("%s: %.1f MB of records waited in the spill file while the main thread "
			"was behind (at most %.1f MB at once)\n",
			rs->what, rd->spill.bytes / 1048576.0, rd->spill.peak / 1048576.0);
}

void ring_reader__free(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	ring_reader__stop(rs);
	if (rd->efd >= 0) {
		close(rd->efd);
		close(rd->stop_efd);
		pthread_mutex_destroy(&rd->lock);
	}
	free(rd->pending.bytes);
	free(rd->pending.recs);
	free(rd->cut_buf);
	free(rd->fill_buf);
	stack_fill__fini(&rd->fill);
	spill__fini(&rd->spill);
}

void ring_reader__settle(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	if (!rd->on)
		return;
	pthread_mutex_lock(&rd->lock);
	if (rd->pending.len < rd->budget / 4)
		prio_lend__release(&rd->lend);
	pthread_mutex_unlock(&rd->lock);
}

/* Room kept whatever the last fill used: what ordinary drains need. */
#define BATCH_KEEP_BYTES (4u << 20)
#define BATCH_KEEP_RECS 16384u

void batch__trim(struct batch *bt)
{
	if (bt->cap > BATCH_KEEP_BYTES && bt->len < bt->cap / 4) {
		free(bt->bytes);
		bt->bytes = NULL;
		bt->cap = 0;
	}
	if (bt->cap_recs > BATCH_KEEP_RECS && bt->nr < bt->cap_recs / 4) {
		free(bt->recs);
		bt->recs = NULL;
		bt->cap_recs = 0;
	}
}

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
 * The next records of the spill file into the empty batch, a budget at a
 * time; rd->lock is held, and let go while the file is read (the reader
 * appends past what is read).
 */
static int take_spilled(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;
	struct batch *bt = &rs->batch;
	uint64_t from = rd->spill.read_off, to = rd->spill.write_off;
	size_t off = 0;
	long n;
	int err = batch_room(rs, bt, rd->budget + BUDGET_SLACK);

	if (err)
		return err;
	pthread_mutex_unlock(&rd->lock);
	n = spill__read(&rd->spill, from, to, bt->bytes, bt->cap);
	pthread_mutex_lock(&rd->lock);
	if (n < 0)
		return (int)n;
	while (off < (size_t)n && !err) {
		const struct perf_event_header *hdr = (const void *)(bt->bytes + off);
		struct decoded_sample ds;
		size_t cut;

		err = batch_room(rs, bt, 0);
		if (!err)
			batch_index(bt, off, record_time(rs, hdr, &ds, &cut));
		off += hdr->size;
	}
	bt->len = (size_t)n;
	spill__consumed(&rd->spill, from + (uint64_t)n);
	return err;
}

/*
 * What the reader thread copied becomes the batch; after it, what it
 * spilled, a part at a time (the spill's records are the newer); with
 * consume, after the last part, the rings' records written since follow
 * under the same lock, so that none the thread copies in between is left
 * for a later drain, out of order.
 */
int ring_reader__take(struct ring_set *rs, bool consume)
{
	struct ring_reader *rd = &rs->reader;
	struct batch tmp;
	bool more = false;
	int err = 0;

	if (rd->on)
		pthread_mutex_lock(&rd->lock);
	if (rd->efd >= 0 && rd->spill_turn) {
		err = take_spilled(rs);
	} else if (rd->efd >= 0) {
		tmp = rs->batch;
		rs->batch = rd->pending;
		rd->pending = tmp;
		rd->pending.len = 0;
		rd->pending.nr = 0;
		rd->pending.seq = rs->batch.seq;
		err = rd->err;
		rd->err = 0;
	}
	if (rd->efd >= 0) {
		more = !err && spill__pending(&rd->spill);
		rd->spill_turn = more;
	}
	if (!err && consume && !more)
		err = consume_rings(rs);
	if (rd->on)
		pthread_mutex_unlock(&rd->lock);
	return err ? err : more;
}

void ring_set__memory(const struct ring_set *rs, struct backend_stats *st)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!rs)
		return;
	st->ring_bytes += (size_t)rs->nr_events * (1 + (size_t)rs->data_pages) * page;
	/* data_head counts every byte written since the ring was made, wraps and all. */
	for (int i = 0; i < rs->nr_events; i++)
		if (rs->events[i].ring.meta)
			st->ring_data += __atomic_load_n(&rs->events[i].ring.meta->data_head,
							 __ATOMIC_ACQUIRE);
	st->copy_bytes += rs->batch.cap + rs->batch.cap_recs * sizeof(struct batch_rec) +
			  rs->reader.pending.cap +
			  rs->reader.pending.cap_recs * sizeof(struct batch_rec);
	st->copies_peak += rs->reader.peak;
	st->copies_budget += rs->reader.budget;
}
