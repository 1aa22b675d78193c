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
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "backend-perfring/decode.h"
#include "core/lib/log.h"

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
void ring_reader__start(struct ring_set *rs)
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
void ring_reader__stop(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	if (!rd->on)
		return;
	__atomic_store_n(&rd->stop, 1, __ATOMIC_RELEASE);
	pthread_join(rd->thread, NULL);
	rd->on = false;
}

void ring_reader__free(struct ring_set *rs)
{
	struct ring_reader *rd = &rs->reader;

	ring_reader__stop(rs);
	if (rd->efd >= 0) {
		close(rd->efd);
		pthread_mutex_destroy(&rd->lock);
	}
	free(rd->pending.bytes);
	free(rd->pending.recs);
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
 * What the reader thread copied becomes the batch; with consume, the rings'
 * records written since follow under the same lock, so that none the
 * thread copies in between is left for a later drain, out of order.
 */
int ring_reader__take(struct ring_set *rs, bool consume)
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
